#!/usr/bin/env python3
"""Checks the size rules of docs/architecture.md on the formatted tree: no `.rs` file over 1,500
lines in compiler/, lang/ and runtime/, and no Rust function over 200 lines anywhere in the
workspace's crates. Prints each offender and exits 1 if there is one.

Usage: scripts/check_sizes.py [--max-file N] [--max-fn N]
"""

import argparse
import pathlib
import re
import sys

FILE_DIRS = ["compiler", "lang", "runtime"]
FN_DIRS = ["abi", "compiler", "lang", "runtime", "dialect", "lsp", "cutec", "cutec-build", "python/src"]
FN_RE = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"C"\s+)?fn\s+(\w+)')


def code_of(line: str) -> str:
    """The line without string and char literals and `//` comments, for counting braces."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//")[0]


def long_functions(path: pathlib.Path, limit: int):
    lines = path.read_text(errors="replace").splitlines()
    for i, line in enumerate(lines):
        m = FN_RE.match(line)
        if not m:
            continue
        depth, started, j = 0, False, i
        while j < len(lines):
            s = code_of(lines[j])
            depth += s.count("{") - s.count("}")
            started = started or "{" in s
            if (started and depth <= 0) or (not started and s.rstrip().endswith(";")):
                break
            j += 1
        if started and j - i + 1 > limit:
            yield i + 1, m.group(7), j - i + 1


def rust_files(root: pathlib.Path, dirs):
    for d in dirs:
        for p in sorted((root / d).rglob("*.rs")):
            if not {"target", "fuzz"} & set(p.relative_to(root).parts):
                yield p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-file", type=int, default=1500)
    ap.add_argument("--max-fn", type=int, default=200)
    args = ap.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    bad = 0
    for p in rust_files(root, FILE_DIRS):
        n = len(p.read_text(errors="replace").splitlines())
        if n > args.max_file:
            print(f"{p.relative_to(root)}: {n} lines (limit {args.max_file}): split it by responsibility")
            bad += 1
    for p in rust_files(root, FN_DIRS):
        for line, name, n in long_functions(p, args.max_fn):
            print(f"{p.relative_to(root)}:{line}: fn {name} is {n} lines (limit {args.max_fn})")
            bad += 1
    print(f"check-sizes: {bad} over the limits")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
