#!/usr/bin/env bash
# Installs the cutec wheels of WHEEL_DIR (cutec-*.whl, the runtime: python/build-wheel.sh;
# cutec_compiler-*.whl, the compiler: python/build-compiler-wheel.sh) into a new virtualenv with
# pip --no-index, with a PATH that has no cargo and no LLVM and nothing of this checkout on the
# Python path, then runs python/wheel_walkthrough.py there: compile a sample from Python cold and
# cached, `python -m cutec`, the `cutec` command, the manifest; on a GPU also load and run it
# against torch. Prints the timings; the last line is `walkthrough: PASS`.
#
#   bash python/wheel-install-test.sh WHEEL_DIR [--inherit-site]
#
# --inherit-site: the new environment also sees the packages of the `python3` that runs this
#   script (on the GPU machine: its torch and Triton; Triton's ptxas and libdevice are then found).
# CUTEC_TEST_NVIDIA=DIR: DIR holds NVIDIA's `nvidia` package folder (what `pip install
#   nvidia-cuda-nvcc nvidia-nvvm` puts in site-packages; .tools/python here): put on the new
#   environment's path, as if installed there (scripts/test.sh does that: CI has no internet).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
WHEELS=$(realpath "${1:?usage: wheel-install-test.sh WHEEL_DIR [--inherit-site]}")
inherit=0
[ "${2:-}" = "--inherit-site" ] && inherit=1
ls "$WHEELS"/cutec-*.whl "$WHEELS"/cutec_compiler-*.whl >/dev/null
for w in "$WHEELS"/cutec-*.whl "$WHEELS"/cutec_compiler-*.whl; do
    echo "wheel: $(basename "$w") $(du -k "$w" | cut -f1) KiB"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
outer_site=$(python3 -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))')
python3 -m venv "$work/venv"
PY="$work/venv/bin/python"
site_dir=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$PY" -m pip install -q --disable-pip-version-check --no-index "$WHEELS"/cutec-*.whl "$WHEELS"/cutec_compiler-*.whl
if [ "$inherit" = 1 ]; then
    echo "$outer_site" > "$site_dir/outer-site.pth"
fi
if [ -n "${CUTEC_TEST_NVIDIA:-}" ]; then
    mkdir -p "$work/nvidia-packages"
    ln -s "$(realpath "$CUTEC_TEST_NVIDIA")/nvidia" "$work/nvidia-packages/nvidia"
    echo "$work/nvidia-packages" > "$site_dir/nvidia-packages.pth"
fi
# A clean machine: only the venv's bin on PATH (no cargo, no LLVM: Debian puts llvm-config in
# /usr/bin), none of cutec's variables, the walk-through started outside the checkout and in
# isolated mode (-I: not even the script's folder, python/, which holds the source package, on the path).
unset CUTEC CUTEC_PTXAS CUTEC_LIBDEVICE CUTEC_BIN_DIR PYTHONPATH LD_LIBRARY_PATH CARGO_TARGET_DIR
cd "$work"
PATH="$work/venv/bin" CUTEC_CACHE_DIR="$work/cache" "$PY" -I "$REPO/python/wheel_walkthrough.py" "$REPO/samples"
