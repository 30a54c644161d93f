"""Elementwise-add variants of samples/fast_add.cute (threads per block x 16- or 8-byte vectors
per thread: add_ilp, add_ilp8) beside torch and the seed's vectorized kernel, timed with bench.py's method (CUDA events
per call behind a sleep kernel, inputs rotated beyond L2, median). The experiment behind the
choice `fast_add` makes per shape.

    python3 bench/add_variants.py --cubins DIR [--shapes 2048x2048,8192x8192] [--dtypes f16,f32]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cubins", required=True)
    ap.add_argument("--shapes", default="2048x2048,4096x4096,8192x8192")
    ap.add_argument("--dtypes", default="f16,f32")
    ap.add_argument("--threads", default="128,256,512,1024")
    ap.add_argument("--ilp", default="1,2,4")
    a = ap.parse_args()
    import torch
    import cutec

    env = B.TorchEnv(torch)
    fast = cutec.load(os.path.join(a.cubins, "fast_add.cubin"))
    seed = cutec.load(os.path.join(a.cubins, "elementwise_add.cubin"))
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    dts = {"f16": torch.float16, "f32": torch.float32, "bf16": torch.bfloat16}
    for dname in a.dtypes.split(","):
        for shp in a.shapes.split(","):
            m, n = map(int, shp.split("x"))
            dt = dts[dname]
            nbytes = 3 * m * n * dt.itemsize
            sets = [
                [torch.randn(m, n, device="cuda").to(dt) for _ in range(3)] for _ in range(B.n_rotations(nbytes, l2))
            ]
            ref = sets[0][0] + sets[0][1]
            rows = []

            # `sets` is bound here (ruff's F821 says not): the loop ends with `del sets`, which frees the tensors.
            def run(label, fn):
                sets[0][2].zero_()  # noqa: F821
                fn(*sets[0])  # noqa: F821
                torch.cuda.synchronize()
                ok = torch.equal(sets[0][2], ref)  # noqa: F821
                gbps, us, ahead = B.rotated_rate(env, fn, sets, nbytes)  # noqa: F821
                rows.append((label, gbps, us, ok, ahead))

            run("torch add(out=)", lambda x, y, z: torch.add(x, y, out=z))
            run("seed vec (256 thr, 1 vec)", seed.vectorized_elementwise_add)
            run("seed tv", seed.elementwise_add)
            run("fast_add (picked by size)", fast.fast_add)
            for t in map(int, a.threads.split(",")):
                for ilp in map(int, a.ilp.split(",")):
                    run(f"fast_add ilp thr={t} ilp={ilp}", lambda x, y, z, t=t, ilp=ilp: fast.add_ilp(x, y, z, t, ilp))
                    run(
                        f"fast_add ilp8 thr={t} ilp={ilp}", lambda x, y, z, t=t, ilp=ilp: fast.add_ilp8(x, y, z, t, ilp)
                    )
                    for vb in (16, 8):
                        run(
                            f"fast_add flat{vb} thr={t} ilp={ilp}",
                            lambda x, y, z, t=t, ilp=ilp, vb=vb: fast.add_flat(x, y, z, vb, t, ilp),
                        )
            best = max(r[1] for r in rows if not r[0].startswith("torch"))
            torch_gbps = rows[0][1]
            print(
                f"== add {dname} {m}x{n} ({len(sets)} rotating sets); torch {torch_gbps:.0f} GB/s, best cutec {best:.0f} ({best / torch_gbps:.2f})"
            )
            for label, gbps, us, ok, ahead in rows:
                print(f"  {label:34s} {gbps:7.0f} GB/s {us:8.2f} us  {'ok' if ok else 'WRONG'}  ahead={ahead}")
            sys.stdout.flush()
            del sets


if __name__ == "__main__":
    main()
