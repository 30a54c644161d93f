#!/usr/bin/env bash
# Installs everything cutec's build and tests need on Debian 12 (run as root; idempotent):
# LLVM/MLIR 22 from Debian's packages, ptxas (PyPI nvidia-cuda-nvcc, into .tools/python), libdevice for
# math functions (PyPI nvidia-nvvm),
# lit and the pycute reference (PyPI nvidia-cutlass, also into .tools/python); maturin and pytest for
# the Python extension into .tools/pyext; ruff (PyPI) into .tools/ruff.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
for pkg in llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libpolly-22-dev zlib1g-dev libzstd-dev \
           libclang1-22 libclang-common-22-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "setup: installing ${need_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo not found; install Rust (https://rustup.rs) first" >&2
    exit 1
fi

PY=.tools/python
mkdir -p "$PY"
# ptxas and libdevice share the top-level `nvidia/` folder: pip --target replaces a top-level folder
# it installs into, so both packages go in with one command.
if [ ! -x "$PY/nvidia/cu13/bin/ptxas" ] || [ ! -f "$PY/nvidia/cu13/nvvm/libdevice/libdevice.10.bc" ]; then
    echo "setup: installing ptxas and libdevice (nvidia-cuda-nvcc, nvidia-nvvm 13.0.88) into $PY"
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --target "$PY" --no-deps --upgrade \
        nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88
fi
if [ ! -d "$PY/lit" ] || [ ! -d "$PY/pycute" ]; then
    echo "setup: installing lit and pycute (nvidia-cutlass==4.2.0.0) into $PY"
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --target "$PY" --no-deps --upgrade lit==18.1.8 nvidia-cutlass==4.2.0.0
fi
# The Python extension (python/): maturin builds its wheel, pytest runs its tests. Their own folder:
# pip --target would replace .tools/python/bin (lit's) with theirs.
PYEXT=.tools/pyext
if [ ! -x "$PYEXT/bin/maturin" ] || [ ! -d "$PYEXT/pytest" ]; then
    echo "setup: installing maturin and pytest (the Python extension's wheel and tests) into $PYEXT"
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --target "$PYEXT" --upgrade \
        maturin==1.16.0 pytest==9.0.2
fi
# Ruff lints and formats the repository's Python (ruff.toml; scripts/test.sh checks both). Its own folder
# too: its bin/ would replace the other folders' bin/.
RUFF=.tools/ruff
if [ ! -x "$RUFF/bin/ruff" ] || [ "$("$RUFF/bin/ruff" --version)" != "ruff 0.17.6" ]; then
    echo "setup: installing ruff 0.17.6 into $RUFF"
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --target "$RUFF" --upgrade ruff==0.17.6
fi
"$PY/nvidia/cu13/bin/ptxas" --version | tail -1
echo "setup: done"
