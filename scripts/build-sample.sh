#!/usr/bin/env bash
# The main job: install what is needed, build cutec, compile samples/vector_add.cute to a cubin, and,
# where a GPU and driver exist, run it on 2^24 random elements and check every result on the CPU.
# Usage: scripts/build-sample.sh [SAMPLE.cute] (default samples/vector_add.cute)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release -p cutec -p cute-runtime --bins
sample=${1:-samples/vector_add.cute}
out=target/$(basename "${sample%.cute}").cubin
start=$EPOCHREALTIME
target/release/cutec build "$sample" -o "$out"
end=$EPOCHREALTIME
awk -v a="$start" -v b="$end" -v s="$sample" -v o="$out" -v n="$(stat -c %s "$out")" 'BEGIN { printf "built %s -> %s (%s bytes) in %.3f s\n", s, o, n, b - a }' 
if [ "$(basename "$sample")" = vector_add.cute ]; then
    set +e
    target/release/cute-run vector-add "$out"
    rc=$?
    set -e
    if [ $rc -eq 77 ]; then
        echo "(no GPU here: the cubin was built but not run)"
    elif [ $rc -ne 0 ]; then
        exit $rc
    fi
fi
