"""The memory-bound samples' host functions from several folders of cubins (the same samples built
with different compiler settings: a codegen option, a pass change), timed side by side with
bench.py's method (CUDA events per call behind a sleep kernel, inputs rotated beyond L2, median),
each checked against a float64 reference first. The experiment behind a codegen choice that moves
ptxas' register allocation both ways: it says which way the kernels run.

    python3 bench/cubin_ab.py DIR_A DIR_B [DIR ...] [--rounds 3] [--cases add,row_sum]

Each cell times every folder's cubin once per round, round-robin (the clocks move with power from
one second to the next), and reports the median over the rounds and its ratio to the first folder.
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

# The hosts bench.py's add and reduce sections time (reduce_rows takes rows of 1024 only: refused,
# and said so, at the other shapes).
ADD = [("elementwise_add", h) for h in B.CUTEC_ADD_HOSTS.values()] + [("fast_add", "fast_add")]
ROW_SUM = [("row_sum", "row_sum"), ("row_sum", "fast_row_sum"), ("reduce_sum_tiled_copy", "reduce_rows")]


def add_case(torch, dt, M, N, l2):
    per_set = 3 * M * N * torch.empty((), dtype=dt).element_size()
    sets = [
        (
            torch.randn(M, N, device="cuda", dtype=dt),
            torch.randn(M, N, device="cuda", dtype=dt),
            torch.empty(M, N, device="cuda", dtype=dt),
        )
        for _ in range(B.n_rotations(per_set, l2))
    ]
    a, b, _ = sets[0]
    return sets, (a.double() + b.double()), per_set, B.TOL[str(dt).removeprefix("torch.")]


def row_sum_case(torch, dt, M, N, l2):
    per_set = M * N * 4 + M * 4
    sets = [
        (torch.randn(M, N, device="cuda"), torch.empty(M, device="cuda")) for _ in range(B.n_rotations(per_set, l2))
    ]
    return sets, sets[0][0].double().sum(-1), M * N * 4, B.TOL["reduce"]


CASES = {
    "add": (ADD, ("float16", "float32"), [(2048, 2048), (8192, 8192)], add_case),
    "row_sum": (ROW_SUM, ("float32",), B.REDUCE_SHAPES, row_sum_case),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", help="folders of cubins (the folder name labels the column)")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    import torch
    import cutec

    env = B.TorchEnv(torch)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    labels = [os.path.basename(os.path.normpath(d)) for d in a.dirs]
    modules = {}

    def host(d, cubin, name):
        if (d, cubin) not in modules:
            modules[(d, cubin)] = cutec.load(os.path.join(d, cubin + ".cubin"))
        return modules[(d, cubin)].host(name)

    print("cell: GB/s per folder (median of rounds), ratio to " + labels[0])
    for case in a.cases.split(","):
        hosts, dtypes, shapes, make = CASES[case]
        for dname in dtypes:
            dt = getattr(torch, dname)
            for M, N in shapes:
                sets, ref, nbytes, tol = make(torch, dt, M, N, l2)
                for cubin, name in hosts:
                    calls, ok = [], True
                    try:
                        for d in a.dirs:
                            cs = [B.cutec_call(host(d, cubin, name), s) for s in sets]
                            sets[0][-1].fill_(float("nan"))
                            out = cs[0]()
                            torch.cuda.synchronize()
                            err = B.relerr(out, ref)
                            ok = ok and err <= tol
                            calls.append(cs)
                    except cutec.Refused as e:
                        # A host for other shapes (reduce_rows takes rows of 1024): no cell.
                        print(f"  {name:28s} {dname:8s} {M}x{N:<6d} refused: {str(e).splitlines()[0]}")
                        continue
                    rates = [[] for _ in a.dirs]
                    for rnd in range(a.rounds):
                        # Each round starts at the next build (bench.round_robin_tflops says why).
                        for i in B.round_order(list(range(len(calls))), rnd):
                            r = B.bench(env, calls[i])
                            rates[i].append(nbytes / (r["median_ms"] * 1e-3) / 1e9)
                    med = [statistics.median(x) for x in rates]
                    cells = "  ".join(f"{lab} {m:7.1f} ({m / med[0]:.3f})" for lab, m in zip(labels, med))
                    print(f"  {name:28s} {dname:8s} {M}x{N:<6d} {'ok' if ok else 'WRONG'}  {cells}")
                del sets, ref
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
