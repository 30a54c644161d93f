"""Fast math on the GPU (issue 34): samples/online_softmax.cute, a row softmax under
`math(ftz, approx, contract)`, against torch.softmax computed in float64.

Tolerance: each output is exp2(fma(x, scale_log2, -max)) * rcp(sum). `ex2.approx.ftz.f32` is within
2 ulp, `rcp.approx.ftz.f32` within 1 ulp, the fma rounds once, and the sum of a row (at most 8192
terms, each within 2 ulp, added in f32 per lane then across the warp) is within a few ulp of
itself relatively; the exponent's argument is rounded once, an absolute error of about
2^-24 * |x * scale_log2| in the exponent, so a relative error of that much (times ln 2) in the
result. With |x * scale| below 16 the bound is rtol 2e-5 (about 170 ulp of slack over the
estimate, for the sum's order of additions); outputs below 2^-126 flush to zero (ftz), so atol
1e-30. Needs a GPU and torch (skipped otherwise)."""

import math

import pytest

import cutec

LOG2_E = 1.0 / math.log(2.0)


@pytest.fixture(scope="module")
def softmax(gpu, cubin):
    return cutec.load(cubin("online_softmax")).online_softmax


@pytest.mark.parametrize("rows,cols", [(1, 1), (3, 31), (5, 127), (64, 128), (7, 1000), (130, 4096), (2, 8192)])
@pytest.mark.parametrize("scale", [1.0, 0.125])
def test_matches_torch(gpu, softmax, rows, cols, scale):
    torch = gpu
    g = torch.Generator(device="cuda").manual_seed(rows * 10007 + cols)
    x = torch.randn(rows, cols, device="cuda", dtype=torch.float32, generator=g) * 4
    y = torch.full_like(x, float("nan"))
    softmax(x, y, scale * LOG2_E)
    torch.cuda.synchronize()
    want = torch.softmax(x.double() * scale, dim=1)
    assert not bool(y.isnan().any()), "some outputs were not written"
    torch.testing.assert_close(y.double(), want, rtol=2e-5, atol=1e-30)
    # Each row sums to 1 within the same error.
    torch.testing.assert_close(
        y.double().sum(dim=1), torch.ones(rows, device="cuda", dtype=torch.float64), rtol=2e-5 * 4, atol=0
    )


def test_large_and_equal_scores(gpu, softmax):
    """Scores far from 0 (the maximum is subtracted before the exponential) and a row of equal scores.
    The exponent's argument x * scale_log2 - max * scale_log2 carries the rounding of the rounded
    max * scale_log2 (about 1443 here: 2^-24 * 1443 absolute, a relative error of that times ln 2,
    up to 6e-5 in the result; measured 3.3e-5), so this case's tolerance is 1e-4, not 2e-5."""
    torch = gpu
    x = torch.tensor([[1000.0, 999.0, 998.0, -1000.0], [-500.0, -500.0, -500.0, -500.0]], device="cuda")
    y = torch.full_like(x, float("nan"))
    softmax(x, y, LOG2_E)
    torch.cuda.synchronize()
    want = torch.softmax(x.double(), dim=1)
    assert not bool(y.isnan().any()), "some outputs were not written"
    torch.testing.assert_close(y.double(), want, rtol=1e-4, atol=1e-30)


def test_mismatched_shapes_are_refused(gpu, softmax):
    torch = gpu
    x = torch.zeros(4, 8, device="cuda")
    y = torch.zeros(4, 9, device="cuda")
    with pytest.raises(cutec.Refused, match="shape of x"):
        softmax(x, y, LOG2_E)
