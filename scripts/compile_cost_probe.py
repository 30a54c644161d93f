#!/usr/bin/env python3
"""The compile budget's edge: for each family of programs that grows with a count N (copies,
fragment arithmetic, math functions, scalar accesses, statements, kernel instances), the largest N
the default budget admits, and how long `cutec build` of it takes and how much memory.

The budget (lang/src/elab/budget.rs) is a model of what the back ends (LLVM, ptxas) spend; this
is its check: every row's build should stay well inside the issue's bound (10 s and 2 GiB on the
2-core build machine). Used to calibrate the weights (docs/language.md, "Compile-time work").

    python3 scripts/compile_cost_probe.py --cutec target/release/cutec [--family NAME]
"""

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

COPY = """kernel k(a: tensor<f32, gmem, ({n}):(1)>, b: tensor<f32, gmem, ({n}):(1)>) {{
    let r = make_rmem_tensor({n}, f32);
    for i in 0..{N} {{
        copy(a, r);
        copy(r, b);
    }}
}}
"""


def copies_in_run_time_loops(size):
    def make(n):
        loops = "".join(f"    for i{i} in 0..n {{ copy(a, r); copy(r, b); }}\n" for i in range(n))
        return (
            f"kernel k(a: tensor<f32, gmem, ({size}):(1)>, b: tensor<f32, gmem, ({size}):(1)>, n: i32) {{\n"
            f"    let r = make_rmem_tensor({size}, f32);\n{loops}}}\n"
        )

    return make


def fragment_op(expr, elem="f32", size=240):
    return lambda n: (
        f"kernel k(a: tensor<{elem}, gmem, ({size}):(1)>, b: tensor<{elem}, gmem, ({size}):(1)>) {{\n"
        f"    let r = make_rmem_tensor({size}, {elem});\n    copy(a, r);\n"
        f"    for i in 0..{n} {{\n        let x = r.load();\n        r.store({expr});\n    }}\n"
        f"    copy(r, b);\n}}\n"
    )


FAMILIES = {
    # Unvectorized 240-element copies through registers, all in one block.
    "copies_one_block": lambda n: COPY.format(n=240, N=n),
    # The same in run-time loops: one block each.
    "copies_run_time_loops_240": copies_in_run_time_loops(240),
    "copies_run_time_loops_32": copies_in_run_time_loops(32),
    # Element-wise arithmetic on a 240-element fragment.
    "fragment_arithmetic": fragment_op("x * x + x"),
    "fragment_sin": fragment_op("sin(x)"),
    "fragment_log": fragment_op("log(x)"),
    "fragment_exp_f64": fragment_op("exp(x)", "f64", 120),
    "fragment_int_division": fragment_op("x / (x + 3)", "i32"),
    # Scalar loads and stores, unrolled into one block.
    "scalar_accesses": lambda n: (
        f"kernel k(a: tensor<f32, gmem, (64, {n}):({n}, 1)>, b: tensor<f32, gmem, (64, {n}):({n}, 1)>) {{\n"
        f"    for i in 0..64 {{\n        for j in 0..{n} {{\n            b[i, j] = a[i, j] * 2.0;\n        }}\n    }}\n}}\n"
    ),
    "fragment_int_remainder": fragment_op("x % (x + 3)", "i32"),
    "fragment_float_division": fragment_op("x / (x + 3.0)"),
    # Scalar arithmetic statements, N of them in a 64-trip unrolled loop.
    "scalar_statements": lambda n: (
        "kernel k(a: tensor<f32, gmem, (1):(1)>) {\n    let mut x = a[0];\n    for i in 0..64 {\n"
        + "        x = x * 1.0001 + 0.5;\n" * n
        + "    }\n    a[0] = x;\n}\n"
    ),
    # Kernel instances, each as costly per step as kernels get: remainders, sines.
    "instances_remainder_120": lambda n: (
        "kernel k(a: tensor<i32, gmem, (120):(1)>, b: tensor<i32, gmem, (120):(1)>, const c: i32) {\n"
        "    let r = make_rmem_tensor(120, i32);\n    copy(a, r);\n    let x = r.load();\n    r.store(x % (x + 3));\n    copy(r, b);\n}\n"
        "host h(a: tensor<i32, gmem, (120):(1)>, b: tensor<i32, gmem, (120):(1)>) {\n"
        f"    for c in 0..{n} {{\n        launch k(a, b, c) grid(1) block(32);\n    }}\n}}\n"
    ),
    "instances_sin_64": lambda n: (
        "kernel k(a: tensor<f32, gmem, (64):(1)>, b: tensor<f32, gmem, (64):(1)>, const c: i32) {\n"
        "    let r = make_rmem_tensor(64, f32);\n    copy(a, r);\n    r.store(sin(r.load()));\n    copy(r, b);\n}\n"
        "host h(a: tensor<f32, gmem, (64):(1)>, b: tensor<f32, gmem, (64):(1)>) {\n"
        f"    for c in 0..{n} {{\n        launch k(a, b, c) grid(1) block(32);\n    }}\n}}\n"
    ),
    # Kernel instances, each a modest kernel.
    "instances": lambda n: (
        "kernel k(a: tensor<f32, gmem, (64):(1)>, b: tensor<f32, gmem, (64):(1)>, const c: i32) {\n"
        "    let r = make_rmem_tensor(64, f32);\n    copy(a, r);\n    r.store(r.load() * 2.0 + r.load());\n    copy(r, b);\n}\n"
        "host h(a: tensor<f32, gmem, (64):(1)>, b: tensor<f32, gmem, (64):(1)>) {\n"
        f"    for c in 0..{n} {{\n        launch k(a, b, c) grid(1) block(32);\n    }}\n}}\n"
    ),
}


def steps(cutec, path):
    """The steps the front end takes for `path`, with no budget in the way (None: an error)."""
    r = subprocess.run(
        [cutec, "build", path, "--emit=cute", "-o", os.devnull, "--timings", "--compile-budget", "100000000000"],
        capture_output=True,
        text=True,
    )
    m = re.search(r"\((\d+) of \d+ compile-budget steps\)", r.stderr)
    if r.returncode != 0 or not m:
        sys.exit(f"{path}: cutec failed:\n{r.stderr[-2000:]}")
    return int(m.group(1))


def build(cutec, path):
    """Seconds and peak MiB of `cutec build` (children included: ptxas)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.monotonic()
    r = subprocess.run([cutec, "build", path, "-o", path + ".cubin"], capture_output=True, text=True)
    seconds = time.monotonic() - start
    peak = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024
    return r.returncode, seconds, peak, r.stderr


def largest_admitted(cutec, make, budget, tmp):
    """The largest N whose program needs at most `budget` steps (doubling, then bisection)."""

    def fits(n):
        path = os.path.join(tmp, "probe.cute")
        with open(path, "w") as f:
            f.write(make(n))
        return steps(cutec, path) <= budget

    lo, hi = 0, 1
    while fits(hi):
        lo, hi = hi, hi * 2
        if hi > 1 << 20:
            return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cutec", required=True)
    ap.add_argument("--budget", type=int, default=300_000)
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES))
    args = ap.parse_args()
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.family or FAMILIES:
            make = FAMILIES[name]
            n = largest_admitted(args.cutec, make, args.budget, tmp)
            if n == 0:
                print(f"{name:<28} N=0 (not even one fits)")
                continue
            path = os.path.join(tmp, f"{name}.cute")
            with open(path, "w") as f:
                f.write(make(n))
            rc, seconds, peak, err = build(args.cutec, path)
            worst = max(worst, seconds)
            status = "ok" if rc == 0 else f"exit {rc}: {err.strip().splitlines()[0] if err.strip() else ''}"
            print(
                f"{name:<28} N={n:<6} steps={steps(args.cutec, path):<7} build {seconds:6.2f} s  peak {peak:6.0f} MiB  {status}",
                flush=True,
            )
    print(f"worst build at the budget's edge: {worst:.2f} s")


if __name__ == "__main__":
    main()
