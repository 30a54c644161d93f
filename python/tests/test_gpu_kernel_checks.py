"""samples/kernel_checks.cute on the GPU: kernel run-time asserts (one that holds, one that fails on
one thread, the same kernel built with `--release-asserts=off`) and inline PTX (`asm`) against exact
results. Needs a GPU and torch (skipped otherwise).

A failed assert traps, which loses the process's CUDA context (every later CUDA call fails, as in
CUDA): that test runs the failing call in a child process."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

import cutec
from conftest import SAMPLES, find_compiler
from printed import flushed_stdout

N = 1000
BAD = 300  # block 2 (of 128 threads), thread 44
ASSERT_LINE = re.compile(
    r"kernel_checks\.cute:15: kernel scale_checked: block \((\d+),0,0\), thread \((\d+),0,0\): "
    r"assertion failed: x must be non-negative"
)


@pytest.fixture(scope="module")
def asserts_off(gpu, tmp_path_factory):
    """samples/kernel_checks.cute built with `--release-asserts=off`, loaded."""
    prebuilt = os.environ.get("CUTEC_CUBINS")
    if prebuilt:
        path = pathlib.Path(prebuilt) / "kernel_checks_asserts_off.cubin"
        if not path.is_file():
            pytest.fail(f"{path} is missing (CUTEC_CUBINS={prebuilt})")
    else:
        exe = find_compiler()
        if exe is None:
            pytest.skip("no cubins: set CUTEC_CUBINS=DIR, or build the compiler (cargo build -p cutec)")
        path = tmp_path_factory.mktemp("off") / "kernel_checks_asserts_off.cubin"
        cmd = [exe, "build", str(SAMPLES / "kernel_checks.cute"), "--release-asserts=off", "-o", str(path)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            pytest.fail(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return cutec.load(path)


def test_asm_lane_lop3_prmt(gpu, cubin):
    torch = gpu
    m = cutec.load(cubin("kernel_checks"))
    n = 4099  # a partial last block
    gen = torch.Generator().manual_seed(7)
    words = [torch.randint(-(2**31), 2**31, (n,), generator=gen, dtype=torch.int64) for _ in range(3)]
    x, y, z = (w.to(torch.int32).cuda() for w in words)
    outs = [torch.full((n,), -1, dtype=torch.int32, device="cuda") for _ in range(3)]
    m.bits(*(t.view(torch.uint32) for t in (x, y, z, *outs)))
    torch.cuda.synchronize()
    lanes, xor3, reversed_ = ([v & 0xFFFFFFFF for v in t.cpu().tolist()] for t in outs)
    a, b, c = ([v & 0xFFFFFFFF for v in w.tolist()] for w in words)
    assert lanes == [i % 32 for i in range(n)]
    assert xor3 == [p ^ q ^ r for p, q, r in zip(a, b, c)]
    assert reversed_ == [int.from_bytes(v.to_bytes(4, "little"), "big") for v in a]


def scale_quietly(torch, capfd, module, x):
    """module.scale(x, y) runs without printing and gives y = 2 x."""
    y = torch.full_like(x, float("nan"))
    flushed_stdout(capfd)
    module.scale(x, y)
    torch.cuda.synchronize()
    assert flushed_stdout(capfd) == ""
    assert torch.equal(y, x * 2)


def test_assert_that_holds_prints_nothing(gpu, cubin, capfd, asserts_off):
    x = gpu.rand(N, device="cuda")
    for module in (cutec.load(cubin("kernel_checks")), asserts_off):
        scale_quietly(gpu, capfd, module, x)


def test_asserts_off_check_nothing(gpu, capfd, asserts_off):
    x = gpu.rand(N, device="cuda")
    x[BAD] = -1.0
    scale_quietly(gpu, capfd, asserts_off, x)


CHILD = f"""
import sys, torch, cutec
m = cutec.load(sys.argv[1])
x = torch.rand({N}, device="cuda")
x[{BAD}] = -1.0
y = torch.empty_like(x)
torch.cuda.synchronize()
m.scale(x, y)
try:
    torch.cuda.synchronize()
    print("SYNC: no error")
except Exception as e:
    print("SYNC:", type(e).__name__)
try:
    m.scale(x, y)
    torch.cuda.synchronize()
    print("NEXT: no error")
except cutec.Error as e:
    print("NEXT:", e)
except Exception as e:
    print("NEXT (not cutec):", type(e).__name__, e)
sys.stdout.flush()
"""


def test_failed_assert_prints_where_and_fails_the_launch(gpu, cubin):
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(cubin("kernel_checks"))], capture_output=True, text=True, timeout=300
    )
    out = r.stdout + r.stderr
    found = ASSERT_LINE.findall(out)
    assert found == [(str(BAD // 128), str(BAD % 128))], out  # one thread failed: one line
    assert "SYNC: no error" not in out, out
    # The context keeps the error: the next call is refused by cute-runtime, which says why.
    next_call = [line for line in out.splitlines() if line.startswith("NEXT")]
    assert next_call and next_call[0].startswith("NEXT: "), out
    assert "the kernel trapped (an assert failed? `scale" in next_call[0], out
    assert "run-time asserts: see the printed message" in next_call[0], out
