"""Variants of samples/gemm_sm80.cute (cubins built from edited copies of the sample: tile shape,
k-tile, stages, warps) beside torch.matmul, timed with bench.py's method (CUDA events per call
behind a sleep kernel, operands rotated beyond L2, median), each checked against a float64
reference first. The experiment behind the sample's choices.

    python3 bench/gemm_variants.py CUBIN [CUBIN ...] [--shapes 4096,8192] [--layouts tn,nt,nn] [--rounds 3]

Clocks move with power and temperature from one second to the next, so each cell times every
implementation once per round, round-robin, and reports the median over the rounds.
"""
import statistics
import argparse
import os
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
    tol = {"f16": 4 * 2.0 ** -10, "bf16": 4 * 2.0 ** -7}
    for s in map(int, a.shapes.split(",")):
        M = N = K = s
        flop = 2.0 * M * N * K
        for layout in a.layouts.split(","):
            store, mm = B.GEMM_LAYOUTS[layout]
            for dname in a.dtypes.split(","):
                dt = dts[dname]
                sa, sb = store(M, N, K)
                per_set = (M * K + N * K + M * N) * 2
                sets = [((torch.randn(sa, device="cuda") * K ** -0.25).to(dt),
                         (torch.randn(sb, device="cuda") * K ** -0.25).to(dt),
                         torch.empty(M, N, device="cuda", dtype=dt)) for _ in range(B.n_rotations(per_set, l2))]
                x, y = mm(sets[0][0].double(), sets[0][1].double())
                ref = x @ y
                del x, y
                impls = [("torch.matmul", lambda p, q, c: torch.matmul(*mm(p, q), out=c))]
                host = f"gemm_{layout}_{dname}"
                for label, m in mods:
                    if host in m.hosts:
                        f = m.host(host)
                        impls.append((label, lambda p, q, c, f=f: f(mm(p, q)[0], mm(p, q)[1].t(), c)))
                errs = {}
                for label, fn in impls:
                    c = sets[0][2]
                    c.fill_(float("nan"))
                    fn(*sets[0])
                    torch.cuda.synchronize()
                    errs[label] = B.relerr(c, ref)
                rates = {label: [] for label, _ in impls}
                for _ in range(a.rounds):
                    for label, fn in impls:
                        r = B.bench(env, [(lambda s=st, fn=fn: fn(*s)) for st in sets], min_reps=10, max_reps=40)
                        rates[label].append(flop / (r["median_ms"] * 1e-3) / 1e12)
                rows = [(label, statistics.median(rates[label]), errs[label] <= tol[dname], errs[label], rates[label]) for label, _ in impls]
                base = rows[0][1]
                print(f"== {layout} {dname} {M}x{N}x{K}")
                for label, tf, ok, err, each in rows:
                    spread = " ".join(f"{x:.0f}" for x in each)
                    print(f"  {label:20s} {tf:7.1f} TFLOP/s  {tf / base:5.3f}  {'ok' if ok else 'WRONG'} relerr {err:.2e}  rounds: {spread}")
                del sets, ref
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
