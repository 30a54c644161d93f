#!/usr/bin/env bash
# Builds, here, the two cutec wheels into .device/wheels (git-ignored) for the fresh-machine
# walk-through on the GPU machine (Python, torch and Triton; no Rust, no LLVM, no internet):
#   cutec-*.whl           the runtime (python/build-wheel.sh), under 1 MiB
#   cutec_compiler-*.whl  the compiler (python/build-compiler-wheel.sh), about 50 MiB
# about 51 MiB together: with the working tree, under the 64 MiB carry (nothing else from .device).
# Then, there: bash python/wheel-install-test.sh .device/wheels --inherit-site
# (with the device tool: `run` with `carry: [".device/wheels"]`). ptxas and libdevice come from
# the machine's Triton (or its CUDA toolkit); the walk-through prints where from, and its timings.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=.device/wheels
rm -rf "$OUT"
mkdir -p "$OUT"
bash python/build-wheel.sh "$OUT" >/dev/null
bash python/build-compiler-wheel.sh "$OUT" >/dev/null
ls -l "$OUT"
du -sh "$OUT"
