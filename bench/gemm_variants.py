"""Variants of samples/gemm_sm80.cute (cubins built from edited copies of the sample: tile shape,
k-tile, stages, warps) beside torch.matmul, timed with bench.py's method (CUDA events per call
behind a sleep kernel, operands rotated beyond L2, median), each checked against a float64
reference first. The experiment behind the sample's choices.

    python3 bench/gemm_variants.py CUBIN [CUBIN ...] [--shapes 4096,8192,128x4096x4096] [--layouts tn,nt,nn,tt] [--rounds 3]
    python3 bench/gemm_variants.py CUBIN [CUBIN ...] --categories small,skinny-m --layouts tn --dtypes bf16

A shape is M = N = K or MxNxK; --categories adds issue 31's shape categories (bench.GEMM_CATEGORIES:
small squares, skinny M, skinny N, short K, large non-multiples of the tile). The last table gives,
per cell, each implementation's ratio to torch.matmul and the best cutec ratio.

The cubins may also be gemm_sm90.cubin (all four layouts; gemm_sm80 has no tt: its cells list torch
alone), gemm_sm90_persistent.cubin or gemm_sm90_splitk.cubin (its host functions take an f32
workspace after C: bench.gemm_workspace passes one). A layout no cubin has a host for is timed for
torch.matmul only.

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
    ap.add_argument(
        "--shapes", default=None, help="M = N = K or MxNxK per shape (default 4096,8192 without --categories)"
    )
    ap.add_argument("--categories", default="", help=f"comma-separated: {', '.join(B.GEMM_CATEGORIES)}")
    ap.add_argument("--layouts", default="tn,nt,nn")
    ap.add_argument("--dtypes", default="bf16,f16")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    import torch
    import cutec

    env = B.TorchEnv(torch)
    mods = [(os.path.basename(p).removesuffix(".cubin"), cutec.load(p)) for p in a.cubins]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    shapes = (a.shapes or ("" if a.categories else "4096,8192")).split(",")
    for c in filter(None, a.categories.split(",")):
        shapes += B.GEMM_CATEGORIES[c]
    shapes = [B.parse_gemm_shape(x) for x in shapes if x]
    cells = B.gemm_cells(torch, mods, shapes, a.layouts.split(","), a.dtypes.split(","), l2)
    summary = []
    for layout, dname, s, flop, impls, errs, tol in cells:
        rates = B.round_robin_tflops(env, impls, flop, a.rounds, min_reps=10, max_reps=40)
        rows = [
            (label, statistics.median(rates[label]), errs[label] <= tol, errs[label], rates[label])
            for label, _ in impls
        ]
        base = rows[0][1]
        name = f"{layout} {dname} {'x'.join(map(str, s))}"
        summary.append((name, base, [(label, tf / base if ok else float("nan")) for label, tf, ok, _, _ in rows[1:]]))
        print(f"== {name}")
        for label, tf, ok, err, each in rows:
            spread = " ".join(f"{x:.0f}" for x in each)
            print(
                f"  {label:20s} {tf:7.1f} TFLOP/s  {tf / base:5.3f}  {'ok' if ok else 'WRONG'} relerr {err:.2e}  rounds: {spread}"
            )
    print("\n== ratio to torch.matmul (nan: wrong results)")
    for name, base, ratios in summary:
        cells = "  ".join(f"{label} {r:5.3f}" for label, r in ratios)
        best = max((r for _, r in ratios if r == r), default=float("nan"))
        print(f"  {name:28s} torch {base:6.1f} TFLOP/s  best {best:5.3f}  {cells}")


if __name__ == "__main__":
    main()
