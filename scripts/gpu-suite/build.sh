#!/usr/bin/env bash
# Builds the GPU suite into .device/suite (git-ignored; carried to the GPU machine, which has no
# Rust and no MLIR): every sample's cubin built with cutec, stripped release runtime binaries and
# the C examples linked statically, and run.sh. Then, on the GPU machine: bash .device/suite/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=.device/suite
TGT=$(realpath -m "${CARGO_TARGET_DIR:-target}")
cargo build -p cutec
cargo build --release -p cute-runtime --lib --bins --examples
mkdir -p "$OUT/bin" "$OUT/cubin" "$OUT/gen" "$OUT/python"
# The samples, and the benchmarks' own kernels (bench/kernels: mma_peak and wgmma_peak for
# bench/gemm_clock.py, which finds them beside the samples' cubins).
for f in samples/*.cute bench/kernels/*.cute; do
    # A sample that needs another target says so: `// cutec-build: --arch sm_90a` (docs/pipeline.md).
    arch=$(sed -n 's|^[[:space:]]*// cutec-build: --arch \([a-z0-9_]*\).*|\1|p' "$f" | head -n1)
    "$TGT/debug/cutec" build "$f" --arch "${arch:-sm_90}" -o "$OUT/cubin/$(basename "${f%.cute}").cubin" 2>/dev/null
done
"$TGT/debug/cutec" build tests/lit/emit/cute.cute -o "$OUT/cubin/scale.cubin"
# The kernel-assert sample once more with its run-time asserts left out (python/tests/test_gpu_kernel_checks.py).
"$TGT/debug/cutec" build samples/kernel_checks.cute --release-asserts=off -o "$OUT/cubin/kernel_checks_asserts_off.cubin"
"$TGT/debug/cutec" build samples/vector_add.cute --emit=header -o "$OUT/gen/vector_add.h"
for b in cute-run cute-bench-launch; do
    cp "$TGT/release/$b" "$OUT/bin/$b"
done
cp "$TGT/release/examples/host_add" "$OUT/bin/host_add_rust"
# The cutec-build example: its build.rs runs cutec and embeds the cubin in the binary.
(cd examples/rust-build && CUTEC="$TGT/debug/cutec" cargo build --release)
cp "${CARGO_TARGET_DIR:-examples/rust-build/target}/release/cute-rust-build-example" "$OUT/bin/rust_build_example"
C="gcc -std=c99 -O2 -Wall -Wextra -Werror -Iruntime/include -I$OUT/gen"
LIBS="$TGT/release/libcute_runtime.a -lpthread -ldl -lm"
$C examples/c/vector_add.c $LIBS -o "$OUT/bin/vector_add_c"
$C examples/c/typed_launch.c $LIBS -o "$OUT/bin/typed_launch_c"
$C examples/c/host_add.c $LIBS -o "$OUT/bin/host_add_c"
$C examples/c/host_reduce.c $LIBS -o "$OUT/bin/host_reduce_c"
strip "$OUT"/bin/*
# The Python tests (run.sh's python-tests: every sample against torch, the tensor-core GEMM included)
# need the cutec extension: its wheel (python/build-wheel.sh; no MLIR).
bash python/build-wheel.sh "$OUT/python" >/dev/null
cp scripts/gpu-suite/run.sh "$OUT/run.sh"
du -sh "$OUT"
