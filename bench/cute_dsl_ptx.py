#!/usr/bin/env python3
"""CuTe DSL's PTX of the seeds' elementwise adds, to read beside cutec's compile of the same code
(`cutec build samples/elementwise_add.cute --emit=ptx`). On the GPU machine, with the CuTe DSL
wheel on PYTHONPATH (scripts/gpu-suite/python.sh installs it):

    python3 bench/cute_dsl_ptx.py OUTDIR [--dtypes f16,f32]

Compiles naive_elementwise_add, vectorized_elementwise_add and elementwise_add of seed 003
(bench/cute_seed.py) for 2048x2048 tensors with CUTE_DSL_KEEP_PTX=1, then moves the PTX file
CuTe DSL left in its dump folder to OUTDIR, one per kernel and dtype. As in the seeds (and
bench.py), `from_dlpack` marks nothing dynamic: CuTe DSL compiles for the static 2048x2048 shape,
where cutec's cubin takes any shape its host function accepts.
"""

import argparse
import glob
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--dtypes", default="f16,f32")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    dump = tempfile.mkdtemp(prefix="cute_dsl_ptx_")
    # Read by CuTe DSL when it compiles: keep the PTX, in this folder.
    os.environ["CUTE_DSL_KEEP_PTX"] = "1"
    os.environ["CUTE_DSL_DUMP_DIR"] = dump
    sys.path.insert(0, HERE)
    import bench

    bench.activate_target_site()  # the CuTe DSL wheel's .pth, when installed with --target
    import torch
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    import cute_seed as S

    dts = {"f16": torch.float16, "f32": torch.float32}
    for dname in a.dtypes.split(","):
        t = [torch.randn(2048, 2048, device="cuda").to(dts[dname]) for _ in range(3)]
        args = [from_dlpack(x, assumed_align=16) for x in t]
        for name in ("naive_elementwise_add", "vectorized_elementwise_add", "elementwise_add"):
            f = cute.compile(getattr(S, name), *args)
            f(*args)
            torch.cuda.synchronize()
            assert torch.allclose(t[2].float(), (t[0] + t[1]).float()), f"{name} {dname}: wrong result"
            # Moved out, so that the next compile's file (named by the tensors' layouts, not their
            # dtype) is new again.
            new = sorted(glob.glob(os.path.join(dump, "**", "*.ptx"), recursive=True))
            for i, p in enumerate(new):
                dst = os.path.join(a.outdir, f"{name}_{dname}{'' if i == 0 else f'_{i}'}.ptx")
                shutil.move(p, dst)
                print(f"{name} {dname}: {p} -> {dst}")
            if not new:
                print(f"{name} {dname}: no PTX file appeared (dump folder {dump})")


if __name__ == "__main__":
    main()
