#!/usr/bin/env bash
# Builds the cutec-compiler wheel (the `cutec` compiler, MLIR and LLVM linked in, for machines with
# no Rust and no LLVM: py3-none-manylinux_2_N_x86_64, N from the glibc symbols it uses) into DIR
# (default: python/dist). Needs what building cutec needs (scripts/setup.sh) and the static
# libraries of zlib, zstd and libstdc++ (Debian: zlib1g-dev, libzstd-dev, libstdc++-12-dev):
# they are linked into the executable, so that it needs only libc, libm and libgcc_s, which every
# glibc system has. A release link takes minutes. Prints the wheel's path last.
#
#   bash python/build-compiler-wheel.sh [DIR]
#
# The runtime wheel (`cutec`, python/build-wheel.sh) is separate: docs/python.md says why.
set -euo pipefail
OUT=$(realpath -m "${1:-$(dirname "$0")/dist}")
cd "$(dirname "$0")/.."
TGT=${CARGO_TARGET_DIR:-$PWD/target}
# mlir-sys asks the linker for -lz -lzstd -lstdc++; a folder searched before the system's that
# holds only their static archives makes the linker take those (it looks for lib*.so, then lib*.a,
# folder by folder).
STATIC="$TGT/static-libs"
mkdir -p "$STATIC"
for lib in libz.a libzstd.a libstdc++.a; do
    found=$(gcc -print-file-name="$lib")
    if [ ! -f "$found" ]; then
        echo "build-compiler-wheel: $lib not found (install zlib1g-dev, libzstd-dev, libstdc++-12-dev)" >&2
        exit 1
    fi
    ln -sf "$(realpath "$found")" "$STATIC/$lib"
done
cargo rustc --release -p cutec --bin cutec -- -L "native=$STATIC" -C strip=symbols >&2
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
build_id=$(git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
mkdir -p "$OUT"
rm -f "$OUT"/cutec_compiler-*.whl
python3 python/compiler/build_wheel.py --binary "$TGT/release/cutec" --version "$version" --build-id "$build_id" --out "$OUT"
