#!/usr/bin/env python3
"""Mutation fuzzing of `cutec opt` on `cute` IR: the passes must reject bad IR with a diagnostic,
never crash.

Takes the lit tests of the passes as seeds, replaces a few of their quoted strings (the algebra ops'
`args`, element coordinates, the layouts inside types, memory spaces) with random CuTe-like text,
and runs `cutec opt` with cute-canonicalize alone and with the whole cute pipeline. A run passes when
cutec exits 0 (the IR was fine) or 1 (a diagnostic); a signal, a panic or an MLIR crash report is a
failure, and the input is kept in --keep.

    python3 scripts/fuzz_ir.py --cases 200 --seed 1 --bin target/release/cutec

Ends with `fuzz-ir: N cases, M crashes`.
"""

import argparse
import glob
import os
import random
import re
import subprocess
import sys

TOKENS = [
    "(",
    ")",
    ",",
    "?",
    "_",
    "0",
    "1",
    "2",
    "4",
    "8",
    "16",
    "-1",
    ":",
    "@",
    "<",
    ">",
    "?{div=8}",
    "x",
    "999999999999",
    "(_,_)",
    "((?,_),?)",
    "S<3,4,3> o 0 o ",
    "gmem",
    "rmem",
]
PIPELINES = [
    ["--pass", "cute-canonicalize"],
    ["--pass", "cute-canonicalize", "--pass", "cute-vectorize", "--pass", "cute-lower-to-gpu"],
]


def random_text(rng):
    return "".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 12)))


def mutate(source, rng):
    parts = re.split(r'("[^"\n]*")', source)
    # Quoted strings other than op names: args, coordinates, layouts and spaces in types.
    candidates = [i for i, p in enumerate(parts) if p.startswith('"') and not p.startswith('"cute.')]
    for i in rng.sample(candidates, k=min(len(candidates), rng.randint(1, 3))):
        parts[i] = '"' + random_text(rng) + '"'
    return "".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bin", default="target/release/cutec")
    ap.add_argument("--keep", default="/tmp/cutec-fuzz-ir")
    args = ap.parse_args()
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    seeds = sorted(glob.glob(os.path.join(root, "tests", "lit", "passes", "*.mlir")))
    sources = [open(s).read() for s in seeds]
    rng = random.Random(args.seed)
    os.makedirs(args.keep, exist_ok=True)
    path = os.path.join(args.keep, "input.mlir")
    crashes = 0
    for case in range(args.cases):
        text = mutate(rng.choice(sources), rng)
        with open(path, "w") as f:
            f.write(text)
        for pipeline in PIPELINES:
            r = subprocess.run([args.bin, "opt", path] + pipeline, capture_output=True, timeout=120)
            if r.returncode not in (0, 1) or b"panicked" in r.stderr or b"PLEASE submit a bug report" in r.stderr:
                crashes += 1
                kept = os.path.join(args.keep, f"crash-{args.seed}-{case}.mlir")
                with open(kept, "w") as f:
                    f.write(text)
                print(f"CRASH (exit {r.returncode}) with {' '.join(pipeline)}: kept {kept}")
                print(r.stderr.decode(errors="replace")[-800:])
                break
    print(f"fuzz-ir: {args.cases} cases, {crashes} crashes")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
