"""Variants of samples/gemm_sm80.cute (cubins built from edited copies of the sample: tile shape,
k-tile, stages, warps) beside torch.matmul, timed with bench.py's method (CUDA events per call
behind a sleep kernel, operands rotated beyond L2, median), each checked against a float64
reference first. The experiment behind the sample's choices.

    python3 bench/gemm_variants.py CUBIN [CUBIN ...] [--shapes 4096,8192] [--layouts tn,nt,nn,tt] [--rounds 3]

The cubins may also be gemm_sm90.cubin (all four layouts; gemm_sm80 has no tt: its cells list torch
alone). A layout no cubin has a host for is timed for torch.matmul only.

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
    ap.add_argument("cubins", nargs="+", help="gemm_sm80 or gemm_sm90 variants (the file name labels the row)")
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
    cells = B.gemm_cells(torch, mods, map(int, a.shapes.split(",")), a.layouts.split(","), a.dtypes.split(","), l2)
    for layout, dname, s, flop, impls, errs, tol in cells:
        rates = {label: [] for label, _ in impls}
        for _ in range(a.rounds):
            for label, calls in impls:
                r = B.bench(env, calls, min_reps=10, max_reps=40)
                rates[label].append(flop / (r["median_ms"] * 1e-3) / 1e12)
        rows = [
            (label, statistics.median(rates[label]), errs[label] <= tol, errs[label], rates[label])
            for label, _ in impls
        ]
        base = rows[0][1]
        print(f"== {layout} {dname} {s}x{s}x{s}")
        for label, tf, ok, err, each in rows:
            spread = " ".join(f"{x:.0f}" for x in each)
            print(
                f"  {label:20s} {tf:7.1f} TFLOP/s  {tf / base:5.3f}  {'ok' if ok else 'WRONG'} relerr {err:.2e}  rounds: {spread}"
            )


if __name__ == "__main__":
    main()
