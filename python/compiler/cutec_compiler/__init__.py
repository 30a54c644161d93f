"""cutec-compiler: the cutec compiler (`bin/cutec`, MLIR and LLVM linked in, stripped) as a wheel,
for machines with no Rust and no LLVM. The `cutec` package (`cutec.compile`, `python -m cutec`) runs
it; so does the `cutec` command this wheel installs.

The compiler needs NVIDIA's ptxas (PTX to cubin) and, for kernels that call math functions,
libdevice. Neither is in this wheel: `tools_env()` finds them where NVIDIA's PyPI packages, Triton
(which torch installs) or a CUDA toolkit put them, and passes them to the compiler as
`CUTEC_PTXAS` / `CUTEC_LIBDEVICE`. docs/python.md in the cutec repository is the guide.
"""

import importlib.util
import os
import sys

try:  # written by python/compiler/build_wheel.py into the wheel
    from ._build import BUILD_ID, VERSION
except ImportError:  # the source tree: no binary here
    BUILD_ID, VERSION = None, "0+source"

__version__ = VERSION
__all__ = ["BUILD_ID", "ToolNotFound", "binary", "find_libdevice", "find_ptxas", "main", "tools_env"]

_HERE = os.path.dirname(os.path.abspath(__file__))

# Where each tool lies inside a Python package's folder, by package: NVIDIA's CUDA 13 wheels
# (`nvidia-cuda-nvcc`, `nvidia-nvvm`: nvidia/cu13/...), their CUDA 12 predecessors
# (`nvidia-cuda-nvcc-cu12`: nvidia/cuda_nvcc/...), and the copies Triton carries.
_PTXAS_IN_PACKAGES = [
    ("nvidia", "cu13/bin/ptxas"),
    ("nvidia", "cuda_nvcc/bin/ptxas"),
    ("triton", "backends/nvidia/bin/ptxas"),
]
_LIBDEVICE_IN_PACKAGES = [
    ("nvidia", "cu13/nvvm/libdevice/libdevice.10.bc"),
    ("nvidia", "cuda_nvcc/nvvm/libdevice/libdevice.10.bc"),
    ("triton", "backends/nvidia/lib/libdevice.10.bc"),
]
PTXAS_HELP = (
    "install NVIDIA's ptxas from PyPI: `pip install 'cutec-compiler[cuda]'` (nvidia-cuda-nvcc 13.0), "
    "or set CUTEC_PTXAS=/path/to/ptxas (CUDA 12.4 or newer; Triton's and a CUDA toolkit's are found too)"
)
LIBDEVICE_HELP = (
    "install NVIDIA's libdevice from PyPI: `pip install 'cutec-compiler[cuda]'` (nvidia-nvvm 13.0), "
    "or set CUTEC_LIBDEVICE=/path/to/libdevice.10.bc (Triton's and a CUDA toolkit's are found too)"
)


class ToolNotFound(RuntimeError):
    """ptxas or libdevice is not where this package looks; the message says where it looked and how
    to install it."""


def binary():
    """The path of the compiler executable in this wheel."""
    return os.path.join(_HERE, "bin", "cutec")


def _package_dirs(top):
    """Every folder of the importable package (or namespace package) `top`, without importing it."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec else []


def _cuda_homes():
    homes = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")]
    return [h for h in homes if h] + ["/usr/local/cuda"]


def _find(env, in_packages, in_cuda_home, on_path):
    """(path or None, the places looked at) for one tool."""
    looked = []
    explicit = os.environ.get(env)
    if explicit:
        return (explicit if os.path.isfile(explicit) else None), [f"{env}={explicit}"]
    for top, rel in in_packages:
        dirs = _package_dirs(top)
        for d in dirs:
            p = os.path.join(d, rel)
            if os.path.isfile(p):
                return p, looked
            looked.append(p)
        if not dirs:
            looked.append(f"{top}/{rel} (no `{top}` package installed)")
    for home in _cuda_homes():
        p = os.path.join(home, in_cuda_home)
        if os.path.isfile(p):
            return p, looked
        looked.append(p)
    if on_path:
        import shutil  # here: a process whose builds hit the cache never imports it

        p = shutil.which(on_path)
        if p:
            return p, looked
        looked.append(f"{on_path} on PATH")
    return None, looked


def find_ptxas():
    """ptxas: $CUTEC_PTXAS; else NVIDIA's PyPI package (nvidia/cu13/bin/ptxas), Triton's copy, a
    CUDA toolkit ($CUDA_HOME, /usr/local/cuda), PATH. Raises `ToolNotFound` naming where it looked."""
    path, looked = _find("CUTEC_PTXAS", _PTXAS_IN_PACKAGES, "bin/ptxas", "ptxas")
    if path is None:
        raise ToolNotFound(f"ptxas not found (looked at: {', '.join(looked)}).\n  help: {PTXAS_HELP}")
    return path


def find_libdevice():
    """libdevice.10.bc, as `find_ptxas` looks (nvidia-nvvm's nvidia/cu13/nvvm/libdevice, Triton's,
    a toolkit's nvvm/libdevice). Raises `ToolNotFound`."""
    path, looked = _find("CUTEC_LIBDEVICE", _LIBDEVICE_IN_PACKAGES, "nvvm/libdevice/libdevice.10.bc", None)
    if path is None:
        raise ToolNotFound(f"libdevice not found (looked at: {', '.join(looked)}).\n  help: {LIBDEVICE_HELP}")
    return path


def tools_env():
    """os.environ with CUTEC_PTXAS and CUTEC_LIBDEVICE set, where unset, to what was
    found. A tool not found is left unset: the compiler then says so where it needs it (libdevice
    only for math functions; ptxas only for cubins)."""
    env = dict(os.environ)
    for var, find in (("CUTEC_PTXAS", find_ptxas), ("CUTEC_LIBDEVICE", find_libdevice)):
        if not env.get(var):
            try:
                env[var] = find()
            except ToolNotFound:
                pass
    return env


def main(argv=None):
    """The `cutec` command: runs the compiler with `argv` (default: this process's arguments) and
    the tools found, in place of this process."""
    argv = sys.argv[1:] if argv is None else list(argv)
    exe = binary()
    os.execve(exe, [exe, *argv], tools_env())
