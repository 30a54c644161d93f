"""Row-sum variants of samples/row_sum.cute (threads per row x 16-byte vectors per thread per
chunk, `row_sum_v4`) beside torch.sum, the scalar `row_sum` and the picked `fast_row_sum`, timed
with bench.py's method (CUDA events per call behind a sleep kernel, inputs rotated beyond L2,
median); GB/s = M*N*4/t as bench.py's reduce section. The experiment behind the choice
`fast_row_sum` makes per row length.

threads 4, 8, 16, 32 are lanes per row (the lanes-per-row kernel, blocks of 128 threads); 64 to
1024 a block per row. By default only the combinations that make sense are timed: a chunk
(threads * ilp vectors of 4 floats) no longer than the row, and lanes below 32 only for rows up to
1024 columns (--all: every combination).

    python3 bench/row_sum_variants.py --cubins DIR [--shapes 4096x4096,65536x256]
        [--threads 16,32,128,256] [--ilp 1,2,4,8] [--all]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

TOL = 1e-5  # relative error against the float64 sum (bench.relerr)


def sensible(threads, ilp, n):
    if threads * ilp * 4 > n:
        return False
    return threads >= 32 or n <= 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cubins", required=True, help="a folder holding row_sum.cubin")
    ap.add_argument("--shapes", default="4096x4096,16384x1024,16384x8192,65536x256")
    ap.add_argument("--threads", default="4,8,16,32,64,128,256,512,1024")
    ap.add_argument("--ilp", default="1,2,4,8")
    ap.add_argument("--all", action="store_true", help="every (threads, ilp), also those that do not make sense")
    a = ap.parse_args()
    import torch
    import cutec

    env = B.TorchEnv(torch)
    mod = cutec.load(os.path.join(a.cubins, "row_sum.cubin"))
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    for shp in a.shapes.split(","):
        m, n = map(int, shp.split("x"))
        nbytes = m * n * 4
        sets = [
            (torch.randn(m, n, device="cuda"), torch.empty(m, device="cuda"))
            for _ in range(B.n_rotations(nbytes + m * 4, l2))
        ]
        ref = sets[0][0].double().sum(-1)
        rows = []

        # `sets` is bound here (ruff's F821 says not): the loop ends with `del sets`, which frees the tensors.
        def run(label, fn):
            x, o = sets[0]  # noqa: F821
            o.fill_(float("nan"))
            out = fn(x, o)
            torch.cuda.synchronize()
            err = B.relerr(out, ref)
            gbps, us, ahead = B.rotated_rate(env, fn, sets, nbytes)  # noqa: F821
            rows.append((label, gbps, us, err, ahead))

        def host(f, *extra):
            def call(x, o):
                f(x, o, *extra)
                return o

            return call

        run("torch sum(-1)", lambda x, o: torch.sum(x, dim=-1))
        run("row_sum (scalar loads)", host(mod.row_sum))
        run("fast_row_sum", host(mod.fast_row_sum))
        for t in map(int, a.threads.split(",")):
            for ilp in map(int, a.ilp.split(",")):
                if a.all or sensible(t, ilp, n):
                    kind = "lanes/row" if t <= 32 else "block/row"
                    run(f"row_sum_v4 thr={t} ilp={ilp} ({kind})", host(mod.row_sum_v4, t, ilp))
        torch_gbps = rows[0][1]
        best = max(rows[1:], key=lambda r: r[1] if r[3] <= TOL else -1)
        print(
            f"== row sum f32 {m}x{n} ({len(sets)} rotating sets); torch {torch_gbps:.0f} GB/s, "
            f"best cutec {best[1]:.0f} ({best[1] / torch_gbps:.3f}): {best[0]}"
        )
        for label, gbps, us, err, ahead in rows:
            print(
                f"  {label:40s} {gbps:7.0f} GB/s {us:8.2f} us  relerr {err:.1e} "
                f"{'ok' if err <= TOL else 'WRONG'}  ahead={ahead}"
            )
        sys.stdout.flush()
        del sets
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
