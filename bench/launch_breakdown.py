#!/usr/bin/env python3
"""Where the host time of a cutec call from Python goes, on the GPU machine: the same tiny f32
add (16x256, bench.py's launch case) called back to back, with and without the launch.

    python3 bench/launch_breakdown.py CUBIN_DIR [--calls N]

Rows (us per call, median of 5 rounds of N calls, each round ended by a device synchronize):
`Plan.prepare` does everything a call does before the launch (the stream looked up, the
tensors read, the arguments checked, the plan evaluated through its cache), so a call's row minus
its prepare row is the launch as Python sees it (through the kernel's graph, or `cuLaunchKernel`
with CUTEC_LAUNCH=direct); compare it with `cute-bench-launch`'s unchecked launch from Rust in the
same run.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cubins", help="folder with elementwise_add.cubin")
    ap.add_argument("--calls", type=int, default=20000)
    a = ap.parse_args()
    import torch
    import cutec

    path = os.path.join(a.cubins, "elementwise_add.cubin")
    plan = cutec.manifest(path).host("elementwise_add")
    host = cutec.load(path).host("elementwise_add")
    x = torch.randn(16, 256, device="cuda")
    y = torch.randn_like(x)
    z = torch.empty_like(x)
    views = [cutec.TensorView(t.data_ptr(), "f32", tuple(t.shape), tuple(t.stride())) for t in (x, y, z)]
    stream = torch.cuda.current_stream().cuda_stream
    sync = torch.cuda.synchronize
    rows = [
        ("empty python loop body (lambda: None)", lambda: None),
        ("prepare, torch tensors (no launch)", lambda: plan.prepare(x, y, z)),
        ("prepare, cutec.TensorView (no launch)", lambda: plan.prepare(*views)),
        ("host call, torch tensors", lambda: host(x, y, z)),
        ("host call, torch tensors, stream=int", lambda: host(x, y, z, stream=stream)),
        ("host call, cutec.TensorView", lambda: host(*views)),
        ("host call, cutec.TensorView, stream=int", lambda: host(*views, stream=stream)),
        ("torch.add(out=)", lambda: torch.add(x, y, out=z)),
    ]
    host(x, y, z)
    sync()
    assert torch.allclose(z, x + y), "the add is wrong"
    print(f"us per call, 16x256 f32 add, median of 5 rounds of {a.calls} calls (synchronized at each round's end)")
    for name, fn in rows:
        # bench.py's launch-section loop: 5 rounds, no time limit, 50 calls of warm-up.
        r = B.host_rounds(fn, sync, a.calls, 5, max_s=0, warmup=50)
        print(f"  {name:44s} {r['per_call_us']:6.2f}   rounds: {' '.join(f'{x:.2f}' for x in r['per_call_rounds_us'])}")
    print(f"(python {sys.version.split()[0]}, torch {torch.__version__}, cutec {cutec.__version__})")


if __name__ == "__main__":
    main()
