"""samples/gemm_sm90_fp8.cute's FP8 GEMM beside torch._scaled_mm (cuBLAS), timed with bench.py's
method (CUDA events per call behind a sleep kernel, operands rotated beyond L2, median), each
checked against the float64 product of the dequantized inputs first.

    python3 bench/gemm_fp8.py CUBIN... [--shapes 4096,8192] [--types e4m3:e4m3] [--out bf16] [--rowwise] [--rounds 3]

Each CUBIN is a build of a file with gemm_sm90_fp8.cute's host functions (or their *_fast_accum
twins), timed in the same run: gemm_sm90_fp8.cubin (a block per tile), gemm_sm90_fp8_persistent.cubin
(the persistent kernel, promoting) and gemm_sm90_fp8_persistent_fast.cubin (its fast twins) side
by side.

C = (scale_a * scale_b) * (A @ B^T) for A (M,K), B (N,K) row-major FP8 with M = N = K = each shape:
`gemm_tn_fp8` (bf16/f16 C) or `gemm_tn_fp8_f32` (f32 C) against `torch._scaled_mm(a, b.t(),
scale_a, scale_b, out_dtype=...)`. --rowwise: row-wise scales (scale_a (M,1), scale_b (1,N); e4m3 x
e4m3, bf16/f16 C), `gemm_tn_fp8_rowwise` against torch's row-wise mode.

Two accumulations, compared like with like (--accum both, the default, or one of them):
  promoted   torch._scaled_mm's default (use_fast_accum=False: cuBLAS adds the partial sums into
             f32 every few k-steps) beside the host functions that promote: the plain names of a
             file of the persistent kernel (gemm_sm90_fp8_persistent.cute's gemm_tn_fp8*);
  fast       torch._scaled_mm(use_fast_accum=True) beside the host functions that accumulate in
             wgmma's FP8 accumulator only: the `*_fast_accum` twins
             (gemm_sm90_fp8_persistent_fast.cute), and the plain names of gemm_sm90_fp8.cute.
Each group prints its ratios to its torch row. Clocks move with power and temperature, so each
cell times every implementation once per round, round-robin, and reports the median over the
rounds and every round's rate.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

TYPES = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}
OUTS = {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}
ACCUMS = {"both": (True, False), "promoted": (True,), "fast": (False,)}  # --accum: whether each group promotes
TORCH_LABEL = {True: "torch._scaled_mm", False: "torch._scaled_mm fast_accum"}  # by whether it promotes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "cubins",
        nargs="+",
        help="gemm_sm90_fp8.cubin, gemm_sm90_fp8_persistent.cubin, gemm_sm90_fp8_persistent_fast.cubin",
    )
    ap.add_argument("--shapes", default="4096,8192", help="M = N = K per shape")
    ap.add_argument("--types", default="e4m3:e4m3", help="A:B FP8 type pairs, comma-separated")
    ap.add_argument("--out", default="bf16", help="C's type: bf16, f16 or f32")
    ap.add_argument("--rowwise", action="store_true", help="row-wise scales: gemm_tn_fp8_rowwise")
    ap.add_argument("--accum", choices=ACCUMS, default="both", help="promoted, fast (accumulation) or both")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    import torch
    import cutec

    env = B.TorchEnv(torch)
    name = "gemm_tn_fp8_rowwise" if a.rowwise else "gemm_tn_fp8_f32" if a.out == "f32" else "gemm_tn_fp8"
    wanted = ACCUMS[a.accum]
    hosts = {}  # label -> (host function, whether it promotes)
    for path in a.cubins:
        mod, label = cutec.load(path), f"cutec {os.path.basename(path).removesuffix('.cubin')}"
        twin = f"{name}_fast_accum"
        if twin in mod.hosts:
            hosts[label] = (mod.host(twin), False)
        else:  # the persistent kernel's plain names promote, gemm_sm90_fp8.cute's do not
            hosts[label] = (mod.host(name), any(k.startswith("gemm_persistent_fp8") for k in mod.kernels))
    hosts = {label: (host, promotes) for label, (host, promotes) in hosts.items() if promotes in wanted}
    dout = getattr(torch, OUTS[a.out])
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    for s in map(int, a.shapes.split(",")):
        M = N = K = s
        if a.rowwise:
            sa, sb = torch.rand(M, device="cuda") + 0.25, torch.rand(N, device="cuda") + 0.25
            tsa, tsb = sa.view(M, 1), sb.view(1, N)
        else:
            sa, sb = torch.tensor([0.5], device="cuda"), torch.tensor([0.25], device="cuda")
            tsa, tsb = sa.view(()), sb.view(())
        for pair in a.types.split(","):
            ta, tb = (getattr(torch, TYPES[t]) for t in pair.split(":"))
            per_set = M * K + N * K + M * N * dout.itemsize
            sets = [
                (
                    (torch.randn(M, K, device="cuda") * 2).to(ta),
                    (torch.randn(N, K, device="cuda") * 2).to(tb),
                    torch.empty(M, N, device="cuda", dtype=dout),
                )
                for _ in range(B.n_rotations(per_set, l2))
            ]
            x, y, _ = sets[0]
            ref = (x.double() * sa.double().view(-1, 1)) @ (y.double() * sb.double().view(-1, 1)).t()
            impls = [
                (
                    TORCH_LABEL[not fast],
                    [
                        (
                            lambda x=x, y=y, c=c, fast=fast, tsa=tsa, tsb=tsb: torch._scaled_mm(
                                x, y.t(), scale_a=tsa, scale_b=tsb, out_dtype=dout, out=c, use_fast_accum=fast
                            )
                        )
                        for x, y, c in sets
                    ],
                )
                for fast in (False, True)
                if (not fast) in wanted
            ]
            for label, (host, _) in hosts.items():
                impls.append((label, [B.cutec_call(host, (x, y, c, sa, sb)) for x, y, c in sets]))
            errs = {}
            for label, calls in list(impls):
                c = sets[0][2]
                c.fill_(float("nan"))
                try:
                    calls[0]()
                except RuntimeError as e:  # a type pair cuBLAS lacks
                    print(f"  {label}: {str(e).splitlines()[0]}")
                    impls.remove((label, calls))
                    continue
                torch.cuda.synchronize()
                errs[label] = B.relerr(c, ref)
            del ref
            rates = B.round_robin_tflops(env, impls, 2.0 * M * N * K, a.rounds, min_reps=10, max_reps=40)
            print(f"== {pair} -> {a.out} {s}x{s}x{s}{' row-wise scales' if a.rowwise else ''}")
            promoting = {label: p for p, label in TORCH_LABEL.items()} | {label: p for label, (_, p) in hosts.items()}
            for promotes in wanted:
                group = [i for i in impls if promoting[i[0]] == promotes]
                print(f"  {'promoted' if promotes else 'fast accumulation'}:")
                B.print_tflops(group, rates, errs, 40)
            del sets, impls
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
