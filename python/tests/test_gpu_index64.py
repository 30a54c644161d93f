"""64-bit index math on the GPU (issue 32): samples/index64_add.cute, an `index(i64)` kernel, adds
two f16 tensors of 2^31 + 4096 elements (4 GiB each; about 17 GiB of GPU memory in all) and is
checked against torch at the elements around 0, 2^31 - 1, 2^31 and the end, then everywhere. A
32-bit kernel is refused such tensors (runtime/tests/index64.rs); this one must reach past 2^31
with no offset wrapping. Needs a GPU with the memory, and torch (skipped otherwise)."""

import pytest

import cutec

N = (1 << 31) + 4096
WINDOWS = [(0, 4096), ((1 << 31) - 4096, (1 << 31) + 4096), (N - 4096, N)]


@pytest.fixture(scope="module")
def add(gpu, cubin):
    return cutec.load(cubin("index64_add")).index64_add


def test_small_tensors(gpu, add):
    torch = gpu
    for n in (1, 255, 257, 100_000):
        a = torch.rand(n, device="cuda", dtype=torch.float16)
        b = torch.rand(n, device="cuda", dtype=torch.float16)
        c = torch.full((n,), float("nan"), device="cuda", dtype=torch.float16)
        add(a, b, c)
        torch.cuda.synchronize()
        assert torch.equal(c, a + b), n


def test_past_2_31_elements(gpu, add):
    torch = gpu
    need = 4 * N * 2 + (1 << 30)
    free, _ = torch.cuda.mem_get_info()
    if free < need:
        pytest.skip(f"needs about {need >> 30} GiB of free GPU memory, {free >> 30} GiB free")
    a = torch.rand(N, device="cuda", dtype=torch.float16)
    b = torch.rand(N, device="cuda", dtype=torch.float16)
    # Distinct values across 2^31: an offset wrapped to 32 bits would read the wrong element.
    a[1 << 31 :] += 2
    c = torch.full((N,), float("nan"), device="cuda", dtype=torch.float16)
    add(a, b, c)
    torch.cuda.synchronize()
    for lo, hi in WINDOWS:
        assert torch.equal(c[lo:hi], a[lo:hi] + b[lo:hi]), (lo, hi)
    assert not bool(c.isnan().any()), "some elements were not written"
    assert torch.equal(c, a + b)


def test_mismatched_sizes_are_refused(gpu, add):
    torch = gpu
    a = torch.zeros(1000, device="cuda", dtype=torch.float16)
    c = torch.zeros(999, device="cuda", dtype=torch.float16)
    with pytest.raises(cutec.Refused) as e:
        add(a, a, c)
    assert "a, b and c must have the same number of elements" in str(e.value)
