#!/usr/bin/env bash
# Builds, on this machine, what the Python GPU run needs into .device/python (git-ignored; carried
# to the GPU machine, which has Python 3.12 and torch but no Rust, no MLIR and no internet):
#   wheel/     the cutec wheel (python/build-wheel.sh); pytest is on the GPU machine already
#   cubin/     every samples/*.cute compiled by cutec (sm_90, or the `// cutec-build: --arch` a sample asks for),
#              and bench/kernels/*.cute
#   cute-dsl/  the CuTe DSL 4.3.5 and apache-tvm-ffi wheels for the benchmark's CuTe DSL rows
#              (skipped with --no-cute-dsl; the CuTe DSL rows then say ERR)
# The tests and the benchmark themselves are tracked files (python/tests, bench/): they travel with
# the working tree. What travels must stay under 64 MiB: the CuTe DSL wheels are 43 MiB of it
# (the big one recompressed with LZMA by scripts/gpu-suite/repack_wheel.py).
# Then, on the GPU machine: bash scripts/gpu-suite/python.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=.device/python
TGT=${CARGO_TARGET_DIR:-$PWD/target}
PIP="python3 -m pip -q --disable-pip-version-check"
cute_dsl=1
[ "${1:-}" = "--no-cute-dsl" ] && cute_dsl=0
bash scripts/setup.sh >/dev/null
rm -rf "$OUT/wheel" "$OUT/cubin"
mkdir -p "$OUT/wheel" "$OUT/cubin"
cargo build --release -p cutec
for f in samples/*.cute; do
    # (compile-time `print`s of the samples go to stderr: not wanted here)
    # A sample that needs another target says so: `// cutec-build: --arch sm_90a` (docs/pipeline.md).
    arch=$(sed -n 's|^[[:space:]]*// cutec-build: --arch \([a-z0-9_]*\).*|\1|p' "$f" | head -n1)
    "$TGT/release/cutec" build "$f" --arch "${arch:-sm_90}" -o "$OUT/cubin/$(basename "${f%.cute}").cubin" 2>/dev/null
done
# The kernel-assert sample once more with its run-time asserts left out (python/tests/test_gpu_kernel_checks.py).
"$TGT/release/cutec" build samples/kernel_checks.cute --release-asserts=off -o "$OUT/cubin/kernel_checks_asserts_off.cubin"
# The benchmark's own kernels (bench/kernels: mma_peak and wgmma_peak (sm_90a) for bench/gemm_clock.py).
for f in bench/kernels/*.cute; do
    arch=$(sed -n 's|^[[:space:]]*// cutec-build: --arch \([a-z0-9_]*\).*|\1|p' "$f" | head -n1)
    "$TGT/release/cutec" build "$f" --arch "${arch:-sm_90}" -o "$OUT/cubin/$(basename "${f%.cute}").cubin"
done
bash python/build-wheel.sh "$OUT/wheel" >/dev/null
if [ "$cute_dsl" = 1 ] && ! ls "$OUT"/cute-dsl/nvidia_cutlass_dsl-4.3.5-*.whl >/dev/null 2>&1; then
    mkdir -p "$OUT/cute-dsl"
    $PIP download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 -d "$OUT/cute-dsl" \
        nvidia-cutlass-dsl==4.3.5 apache-tvm-ffi==0.1.15.post2
fi
# Recompressed once with LZMA (58.6 -> 40.2 MiB: the same files and RECORD, which pip reads), so
# the wheels and cutec's files stay under the 64 MiB carry.
if [ "$cute_dsl" = 1 ] && [ ! -e "$OUT/cute-dsl/.repacked" ]; then
    python3 scripts/gpu-suite/repack_wheel.py "$OUT"/cute-dsl/nvidia_cutlass_dsl-4.3.5-*.whl && touch "$OUT/cute-dsl/.repacked"
fi
[ "$cute_dsl" = 0 ] && rm -rf "$OUT/cute-dsl"
ls "$OUT"/wheel
du -sh "$OUT"
