#!/usr/bin/env python3
"""Host-side cost of a cutec call from Python, measured without a GPU.

    python3 bench/overhead.py CUBIN_DIR [--calls N]

Times `Plan.prepare(a, b, c)` for the f32 `elementwise_add` host function on 16x256 tensors (the
shape of the launch-overhead case of bench/bench.py): everything a call of a loaded host function
does before its launch (the default stream looked up, the three tensors read through their
protocol, the arguments checked and the plan evaluated through the per-signature cache), with no
launch. A real call adds the driver's `cuLaunchKernel` (2.7 to 3.7 us on the H100 machines:
docs/runtime.md, "Launch overhead") and, for torch tensors, torch's exchange function per tensor.

Rows: each tensor protocol (with fake producers from python/tests/fakes.py, fake pointers), the
cache missed on every call (shapes cycling beyond its capacity), and for scale a Python call of a
function taking three arguments and `Plan.check` (which converts the launches to dicts). Median of
7 rounds of N calls.
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))

import cutec  # noqa: E402
from fakes import ArrayInterface, DLPackTensor, ExchangeTensor, fake_ptr  # noqa: E402


def per_call_ns(fn, args_list, calls):
    rounds = []
    k = len(args_list)
    for _ in range(7):
        t = time.perf_counter_ns()
        for i in range(calls):
            fn(*args_list[i % k])
        rounds.append((time.perf_counter_ns() - t) / calls)
    return statistics.median(rounds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cubins", help="folder with elementwise_add.cubin")
    ap.add_argument("--calls", type=int, default=20000)
    a = ap.parse_args()
    # The generic host function: each call selects its f32 instance by the arguments' dtypes.
    plan = cutec.manifest(os.path.join(a.cubins, "elementwise_add.cubin")).host("elementwise_add")
    m, n = 16, 256

    def views(shape=(m, n)):
        return [cutec.TensorView(fake_ptr(k), "f32", shape, nbytes=shape[0] * shape[1] * 4) for k in range(3)]

    rows = [
        ("python call of def f(a, b, c): pass", lambda a, b, c: None, [views()]),
        ("prepare, cutec.TensorView x3", plan.prepare, [views()]),
        (
            "prepare, __cuda_array_interface__ x3",
            plan.prepare,
            [[ArrayInterface(fake_ptr(k), (m, n), "<f4") for k in range(3)]],
        ),
        (
            "prepare, __dlpack__ capsules x3",
            plan.prepare,
            [[DLPackTensor(fake_ptr(k), (m, n), "f32") for k in range(3)]],
        ),
        (
            "prepare, DLPack exchange API x3 (ctypes callback)",
            plan.prepare,
            [[ExchangeTensor(fake_ptr(k), (m, n), "f32") for k in range(3)]],
        ),
        (
            "prepare, cache missed every call (TensorView x3)",
            plan.prepare,
            [views((16 * (i + 1), n)) for i in range(12)],
        ),
        ("check (evaluation + launches as dicts)", plan.check, [views()]),
    ]
    print(f"host-side cost per call, elementwise_add f32 {m}x{n}, ns (median of 7 x {a.calls} calls); no launch")
    for name, fn, args in rows:
        fn(*args[0])
        print(f"  {name:52s} {per_call_ns(fn, args, a.calls):8.0f}")
    print(f"(python {sys.version.split()[0]}, cutec {cutec.__version__}; torch imported: {'torch' in sys.modules})")


if __name__ == "__main__":
    main()
