"""The fused-epilogue linear layers (samples/gemm_sm90_epilogue.cute: D = act(A W^T + bias)) and
the strided-batched GEMM (samples/gemm_sm90_bmm.cute) beside torch, timed with bench.py's method
(CUDA events per call behind a sleep kernel, operands rotated beyond L2, median), each checked
against a float64 reference first.

    python3 bench/gemm_epilogue.py EPILOGUE_CUBIN BMM_CUBIN [--shapes 4096,8192] [--acts none,relu,gelu,gelu_tanh,silu]
        [--bmm 8x4096x4096x4096,4x8192x8192x1024,64x1024x1024x128] [--dtypes bf16,f16] [--rounds 3] [--no-compile]

Linear cells (M = N = K or MxNxK): torch eager, act(F.linear(A, W, bias)) as separate ops (the
activation reads and writes D again); torch.compile of the same function (Inductor's fusion of
bias and activation, where torch.compile runs here: --no-compile skips it); cutec's linear_{act},
one kernel. bmm cells (LxMxNxK): torch.bmm(A, B.transpose(1, 2)) (TN) and torch.bmm(A, Y) (TT,
Y (L,K,N)) against bmm_tn and bmm_tt. Each cell times every implementation once per round,
round-robin (clocks move with power and temperature), and reports the median over the rounds
and each one's ratio to the first (torch eager).
"""

import argparse
import itertools
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

ACTS = {
    "none": lambda F, x: x,
    "relu": lambda F, x: F.relu(x),
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
}


def linear_cells(torch, mod, shapes, acts, dtypes, l2, compile_ok):
    """(name, FLOP, impls, errs, tol) per linear cell; impls [(label, [call per operand set])]."""
    import torch.nn.functional as F

    for M, N, K in shapes:
        for dname in dtypes:
            dt = {"bf16": torch.bfloat16, "f16": torch.float16}[dname]
            per_set = (M * K + N * K + N + M * N) * dt.itemsize
            sets = [
                (
                    (torch.randn(M, K, device="cuda") * K**-0.25).to(dt),
                    (torch.randn(N, K, device="cuda") * K**-0.25).to(dt),
                    torch.randn(N, device="cuda").to(dt),
                    torch.empty(M, N, device="cuda", dtype=dt),
                )
                for _ in range(B.n_rotations(per_set, l2))
            ]
            a, w, bias, _ = sets[0]
            pre = F.linear(a.double(), w.double(), bias.double())
            for act in acts:
                fn = ACTS[act]
                ref = fn(F, pre)
                eager = lambda a, w, b, fn=fn: fn(F, F.linear(a, w, b))  # noqa: E731
                impls = [("torch eager", [(lambda s=s, f=eager: f(*s[:3])) for s in sets])]
                if compile_ok:
                    try:
                        compiled = torch.compile(eager)
                        compiled(*sets[0][:3])
                        impls.append(("torch.compile", [(lambda s=s, f=compiled: f(*s[:3])) for s in sets]))
                    except Exception as e:  # no triton / no compiler on this machine
                        print(f"torch.compile unavailable: {str(e).splitlines()[0]}")
                        compile_ok = False
                host = mod.host(f"linear_{act}")
                impls.append(("cutec fused", [B.cutec_call(host, s) for s in sets]))
                errs = {}
                for label, calls in impls:
                    sets[0][3].fill_(float("nan"))
                    out = calls[0]()
                    torch.cuda.synchronize()
                    errs[label] = B.relerr(out, ref)
                yield f"linear {act} {dname} {M}x{N}x{K}", 2.0 * M * N * K, impls, errs, B.TOL[str(dt)[6:]]
            del sets, pre
            torch.cuda.empty_cache()


def bmm_cells(torch, mod, shapes, dtypes, l2):
    for L, M, N, K in shapes:
        for dname in dtypes:
            dt = {"bf16": torch.bfloat16, "f16": torch.float16}[dname]
            per_set = L * (M * K + N * K + M * N) * dt.itemsize
            sets = [
                (
                    (torch.randn(L, M, K, device="cuda") * K**-0.25).to(dt),
                    (torch.randn(L, N, K, device="cuda") * K**-0.25).to(dt),
                    torch.empty(L, M, N, device="cuda", dtype=dt),
                )
                for _ in range(B.n_rotations(per_set, l2))
            ]
            for layout in ("tn", "tt"):
                if layout == "tt":  # B stored (L, K, N): torch.bmm(A, Y)
                    sets = [(a, b.transpose(1, 2).contiguous().transpose(1, 2), c) for a, b, c in sets]
                a, b, _ = sets[0]
                ref = torch.bmm(a.double(), b.double().transpose(1, 2))
                host = mod.host(f"bmm_{layout}")
                impls = [
                    ("torch.bmm", [(lambda a=a, b=b, c=c: torch.bmm(a, b.transpose(1, 2), out=c)) for a, b, c in sets]),
                    ("cutec bmm", [B.cutec_call(host, s) for s in sets]),
                ]
                errs = {}
                for label, calls in impls:
                    sets[0][2].fill_(float("nan"))
                    out = calls[0]()  # torch.bmm(..., out=c) returns c too
                    torch.cuda.synchronize()
                    errs[label] = B.relerr(out, ref)
                yield f"bmm {layout} {dname} {L}x{M}x{N}x{K}", 2.0 * L * M * N * K, impls, errs, B.TOL[str(dt)[6:]]
                del ref
            del sets
            torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("epilogue_cubin", help="gemm_sm90_epilogue.cubin")
    ap.add_argument("bmm_cubin", help="gemm_sm90_bmm.cubin")
    ap.add_argument("--shapes", default="4096,8192", help="linear: M = N = K or MxNxK per shape")
    ap.add_argument("--acts", default=",".join(ACTS))
    ap.add_argument("--bmm", default="8x4096x4096x4096,4x8192x8192x1024,64x1024x1024x128", help="LxMxNxK per shape")
    ap.add_argument("--dtypes", default="bf16,f16")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    a = ap.parse_args()
    import torch
    import cutec

    env = B.TorchEnv(torch)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    shapes = [B.parse_gemm_shape(x) for x in a.shapes.split(",") if x]
    shapes = [s if isinstance(s, tuple) else (s, s, s) for s in shapes]
    bmm_shapes = [tuple(int(v) for v in x.split("x")) for x in a.bmm.split(",") if x]
    dtypes = a.dtypes.split(",")
    cells = itertools.chain(
        linear_cells(torch, cutec.load(a.epilogue_cubin), shapes, a.acts.split(","), dtypes, l2, not a.no_compile),
        bmm_cells(torch, cutec.load(a.bmm_cubin), bmm_shapes, dtypes, l2),
    )
    summary = []
    for name, flop, impls, errs, tol in cells:
        rates = B.round_robin_tflops(env, impls, flop, a.rounds, min_reps=10, max_reps=40)
        base = statistics.median(rates[impls[0][0]])
        print(f"== {name}")
        for label, _ in impls:
            tf = statistics.median(rates[label])
            ok = errs[label] <= tol
            spread = " ".join(f"{x:.0f}" for x in rates[label])
            print(
                f"  {label:14s} {tf:7.1f} TFLOP/s  {tf / base:5.3f}  {'ok' if ok else 'WRONG'} relerr {errs[label]:.2e}  rounds: {spread}"
            )
        summary.append((name, base, [(lb, statistics.median(rates[lb]) / base) for lb, _ in impls[1:]]))
    print("\n== ratio to torch eager (linear) or torch.bmm")
    for name, base, ratios in summary:
        print(f"  {name:34s} {base:6.1f} TFLOP/s  " + "  ".join(f"{lb} {r:5.3f}" for lb, r in ratios))


if __name__ == "__main__":
    main()
