#!/usr/bin/env bash
# Writes what cutec makes of every sample and bench kernel (PTX, manifest, C header) into a folder,
# so that a refactor can be checked for "no behaviour change": snapshot before and after, then
# `diff -r BEFORE AFTER` must print nothing. Each file is built for the target its first
# `// cutec-build: --arch X` line names (sm_90 otherwise), as cutec-build and the tests build it.
# Usage: scripts/ptx-snapshot.sh CUTEC OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
cutec=${1:?usage: ptx-snapshot.sh CUTEC OUT_DIR}
out=${2:?usage: ptx-snapshot.sh CUTEC OUT_DIR}
mkdir -p "$out"
n=0
for src in samples/*.cute bench/kernels/*.cute; do
    arch=$(sed -n 's|^ *// cutec-build: --arch \([a-z0-9_]*\).*|\1|p' "$src" | head -1)
    name=$(basename "${src%.cute}")
    for emit in ptx manifest header; do
        "$cutec" build "$src" --arch "${arch:-sm_90}" --emit="$emit" -o "$out/$name.$emit"
    done
    n=$((n + 1))
done
echo "ptx-snapshot: $n files -> $out"
