"""Variants of samples/gemm_sm80.cute (cubins built from edited copies of the sample: tile shape,
k-tile, stages, warps) beside torch.matmul, timed with bench.py's method (CUDA events per call
behind a sleep kernel, operands rotated beyond L2, median), each checked against a float64
reference first. The experiment behind the sample's choices.

    python3 bench/gemm_variants.py CUBIN [CUBIN ...] [--shapes 4096,8192] [--layouts tn,nt,nn] [--rounds 3]

Clocks move with power and temperature from one second to the next, so each cell times every
implementation once per round, round-robin, and reports the median over the rounds.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cubins", nargs="+", help="gemm_sm80 variants (the file name labels the row)")
    ap.add_argument("--shapes", default="4096,8192", help="M = N = K per shape")
    ap.add_argument("--layouts", default="tn,nt,nn")
    ap.add_argument("--dtypes", default="bf16,f16")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    import torch
    import cutec
    env = B.TorchEnv(torch)
    mods = [(os.path.basename(p).removesuffix(".cubin"), cutec.load(p)) for p in a.cubins]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    dts = {"f16": torch.float16, "bf16": torch.bfloat16}
    for s in map(int, a.shapes.split(",")):
        M = N = K = s
        flop = 2.0 * M * N * K
        for layout in a.layouts.split(","):
            store, mm = B.GEMM_LAYOUTS[layout]
            for dname in a.dtypes.split(","):
                dt = dts[dname]
                tol = B.TOL[str(dt).removeprefix("torch.")]
                sets = B.gemm_sets(torch, "cuda", M, N, K, store, dt, l2)
                x, y = mm(sets[0][0].double(), sets[0][1].double())
                ref = x @ y
                del x, y
                # Per implementation, one call per operand set (the views made once, not per call).
                impls = [("torch.matmul", [(lambda x=x, y=y, c=c: torch.matmul(x, y, out=c)) for x, y, c in
                                           ((*mm(p, q), c) for p, q, c in sets)])]
                host = f"gemm_{layout}_{dname}"
                for label, m in mods:
                    if host in m.hosts:
                        f = m.host(host)
                        # The host takes the logical operands A (M, K) and B (N, K).
                        impls.append((label, [B.cutec_call(f, (x, y.t(), c)) for x, y, c in ((*mm(p, q), c) for p, q, c in sets)]))
                errs = {}
                for label, calls in impls:
                    c = sets[0][2]
                    c.fill_(float("nan"))
                    calls[0]()
                    torch.cuda.synchronize()
                    errs[label] = B.relerr(c, ref)
                rates = {label: [] for label, _ in impls}
                for _ in range(a.rounds):
                    for label, calls in impls:
                        r = B.bench(env, calls, min_reps=10, max_reps=40)
                        rates[label].append(flop / (r["median_ms"] * 1e-3) / 1e12)
                rows = [(label, statistics.median(rates[label]), errs[label] <= tol, errs[label], rates[label]) for label, _ in impls]
                base = rows[0][1]
                print(f"== {layout} {dname} {M}x{N}x{K}")
                for label, tf, ok, err, each in rows:
                    spread = " ".join(f"{x:.0f}" for x in each)
                    print(f"  {label:20s} {tf:7.1f} TFLOP/s  {tf / base:5.3f}  {'ok' if ok else 'WRONG'} relerr {err:.2e}  rounds: {spread}")
                del sets, ref
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
