#!/usr/bin/env bash
# Builds the GPU suite into .device/suite (git-ignored; carried to the GPU machine, which has no
# Rust and no MLIR): every sample's cubin built with cutec, stripped release runtime binaries and
# the C examples linked statically, and run.sh. Then, on the GPU machine: bash .device/suite/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=.device/suite
cargo build -p cutec
cargo build --release -p cute-runtime --lib --bins --examples
mkdir -p "$OUT/bin" "$OUT/cubin" "$OUT/gen" "$OUT/lib" "$OUT/py"
for f in samples/*.cute; do
    target/debug/cutec build "$f" -o "$OUT/cubin/$(basename "${f%.cute}").cubin" 2>/dev/null
done
target/debug/cutec build tests/lit/emit/cute.cute -o "$OUT/cubin/scale.cubin"
target/debug/cutec build samples/vector_add.cute --emit=header -o "$OUT/gen/vector_add.h"
for b in cute-run cute-bench-launch; do
    cp "target/release/$b" "$OUT/bin/$b"
done
cp target/release/examples/host_add "$OUT/bin/host_add_rust"
# The cutec-build example: its build.rs runs cutec and embeds the cubin in the binary.
(cd examples/rust-build && cargo build --release)
cp examples/rust-build/target/release/cute-rust-build-example "$OUT/bin/rust_build_example"
C="gcc -std=c99 -O2 -Wall -Wextra -Werror -Iruntime/include -I$OUT/gen"
LIBS="target/release/libcute_runtime.a -lpthread -ldl -lm"
$C examples/c/vector_add.c $LIBS -o "$OUT/bin/vector_add_c"
$C examples/c/typed_launch.c $LIBS -o "$OUT/bin/typed_launch_c"
$C examples/c/host_add.c $LIBS -o "$OUT/bin/host_add_c"
$C examples/c/host_reduce.c $LIBS -o "$OUT/bin/host_reduce_c"
strip "$OUT"/bin/*
# The tensor-core GEMM check (run.sh runs it where python3 imports torch): py/gemm_check.py calls the
# host functions of cubin/gemm_sm80.cubin (built by the samples loop above from samples/gemm_sm80.cute)
# through the C ABI with ctypes (py/cutec_torch.py), so it needs the runtime as a shared library.
cp scripts/gpu-suite/cutec_torch.py scripts/gpu-suite/gemm_check.py scripts/gpu-suite/mma_atom_check.py "$OUT/py/"
if [ -f target/release/libcute_runtime.so ]; then
    cp target/release/libcute_runtime.so "$OUT/lib/libcute_runtime.so"
    strip --strip-unneeded "$OUT/lib/libcute_runtime.so"
fi
cp scripts/gpu-suite/run.sh "$OUT/run.sh"
du -sh "$OUT"
