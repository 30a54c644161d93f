"""Fixtures of the cutec Python tests.

* `cubin(name)`: the path of `samples/NAME.cute` compiled to a cubin: from $CUTEC_CUBINS (a folder
  of prebuilt cubins, as the GPU suite carries), else compiled once per session with the cutec
  compiler ($CUTEC, `cutec` on PATH, or a cargo build of this checkout). Tests that need a cubin
  skip, saying so, when there is neither.
* `compile_cache` (every test): $CUTEC_CACHE_DIR set to a fresh folder for the session.
* `gpu`: torch with a usable CUDA device and the CUDA driver; tests that need them skip otherwise
  (CI has no GPU: `scripts/gpu-suite/python.sh` runs them on the GPU machine).
"""

import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"


def find_compiler():
    """The cutec compiler to build sample cubins with, or None."""
    if os.environ.get("CUTEC"):
        return os.environ["CUTEC"]
    on_path = shutil.which("cutec")
    if on_path:
        return on_path
    targets = [os.environ.get("CARGO_TARGET_DIR"), str(REPO / "target")]
    for t in filter(None, targets):
        for profile in ("release", "debug"):
            exe = pathlib.Path(t) / profile / "cutec"
            if exe.is_file():
                return str(exe)
    return None


def sample_arch(name):
    """The target samples/NAME.cute asks for on a line `// cutec-build: --arch ARCH` (sm_90 if none)."""
    for line in (SAMPLES / f"{name}.cute").read_text().splitlines():
        line = line.strip()
        if line.startswith("// cutec-build: --arch "):
            return line.split("--arch", 1)[1].split()[0]
    return "sm_90"


@pytest.fixture(scope="session")
def cubin(tmp_path_factory):
    prebuilt = os.environ.get("CUTEC_CUBINS")
    built = {}
    out = None

    def get(name):
        nonlocal out
        if prebuilt:
            p = pathlib.Path(prebuilt) / f"{name}.cubin"
            if not p.is_file():
                pytest.fail(f"{p} is missing (CUTEC_CUBINS={prebuilt})")
            return p
        if name not in built:
            exe = find_compiler()
            if exe is None:
                pytest.skip(
                    "no cubins: set CUTEC_CUBINS=DIR, or build the compiler (cargo build -p cutec) or put cutec on PATH"
                )
            if out is None:
                out = tmp_path_factory.mktemp("cubins")
            p = out / f"{name}.cubin"
            r = subprocess.run(
                [exe, "build", str(SAMPLES / f"{name}.cute"), "--arch", sample_arch(name), "-o", str(p)],
                capture_output=True,
                text=True,
            )
            if r.returncode != 0:
                pytest.fail(f"cutec build samples/{name}.cute failed:\n{r.stderr}")
            built[name] = p
        return built[name]

    return get


@pytest.fixture(scope="session", autouse=True)
def compile_cache(tmp_path_factory):
    """`cutec.compile`'s cache in a folder of the session's, not the user's (~/.cache/cutec)."""
    before = os.environ.get("CUTEC_CACHE_DIR")
    os.environ["CUTEC_CACHE_DIR"] = str(tmp_path_factory.mktemp("cutec-cache"))
    yield os.environ["CUTEC_CACHE_DIR"]
    if before is None:
        del os.environ["CUTEC_CACHE_DIR"]
    else:
        os.environ["CUTEC_CACHE_DIR"] = before


@pytest.fixture(scope="session")
def gpu():
    """torch, when it and the CUDA driver can run kernels here; else the test is skipped."""
    import cutec

    if not cutec.driver_available():
        pytest.skip("no GPU: the CUDA driver (libcuda) is not installed here")
    try:
        import torch
    except ImportError:
        pytest.skip("no GPU tests without torch (pip install torch)")
    if not torch.cuda.is_available():
        pytest.skip(f"no GPU: torch {torch.__version__} sees no CUDA device")
    torch.empty(1, device="cuda")  # torch's context first (the primary context cutec shares)
    return torch
