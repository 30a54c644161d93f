#!/usr/bin/env bash
# Builds the cutec wheel (one file for every CPython >= 3.9 on x86_64 Linux with glibc >= 2.34:
# cp39-abi3-manylinux_2_34_x86_64) into DIR (default: python/dist). Needs cargo and maturin
# (scripts/setup.sh installs maturin into .tools/pyext). No MLIR: the extension is built on
# cute-runtime alone. Prints the wheel's path last.
#
#   bash python/build-wheel.sh [DIR]
#
# The platform tag: maturin checks the extension's symbol versions against the policy. The
# extension links only glibc (libcuda is opened at run time, never linked); built on Debian 12 it
# uses symbols of glibc 2.30 to 2.34 (Rust's std), so manylinux_2_34 (Debian 12, Ubuntu 22.04,
# RHEL 9 and later) is the oldest tag that holds without building in a manylinux container.
set -euo pipefail
OUT=$(realpath -m "${1:-$(dirname "$0")/dist}")
cd "$(dirname "$0")"
MATURIN=${MATURIN:-}
if [ -z "$MATURIN" ]; then
    if [ -x ../.tools/pyext/bin/maturin ]; then MATURIN=../.tools/pyext/bin/maturin; else MATURIN=maturin; fi
fi
mkdir -p "$OUT"
rm -f "$OUT"/cutec-*.whl
"$MATURIN" build --release --strip --compatibility manylinux_2_34 --interpreter python3 --out "$OUT" >&2
ls "$OUT"/cutec-*.whl
