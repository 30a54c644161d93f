"""samples/flash_attention_sm90.cute (issue 34): the FlashAttention forward on Hopper (TMA ring, warp
specialization, SS wgmma for S = Q·Kᵀ, the online softmax in registers, RS wgmma for O += P·V)
against torch: O against torch.nn.functional.scaled_dot_product_attention computed in float32
(float64 where the shape is small) on the same bf16/f16 inputs, and the log-sum-exp per row against
torch.logsumexp of the scaled, masked scores. Causal is torch's `is_causal=True` (top-left aligned:
query i sees keys j <= i, for unequal lengths too). GQA: query head h reads K/V head h // (H / Hkv),
as K.repeat_interleave(H // Hkv, dim=heads) gives torch. Sliding windows (`flash_attn_fwd_window`,
query i sees keys i - left .. i + right, -1 unbounded) against the same reference with that boolean
mask; a row that sees no key must be O = 0 and LSE = -inf (the reference's NaN row replaced so).

Tolerance, per element: |O - ref| <= atol + rtol * |ref| with (atol, rtol) = (1e-2, 1e-2) for bf16
and (2e-3, 2e-3) for f16 (P is rounded to the input type for the P·V wgmma and O once at the end:
a few units of the type's last place, 2^-8 for bf16, 2^-11 for f16), and |LSE - ref| <= 1e-3 + 1e-5
* |ref| (S and the sums are f32; ex2.approx's error is 2 ulp). Outputs are poisoned with NaN before
the call, so an element the kernel does not write fails. Needs an sm_90 GPU and torch (skipped
otherwise)."""

import math

import pytest

import cutec

TOL = {"bfloat16": (1e-2, 1e-2), "float16": (2e-3, 2e-3)}
LSE_TOL = (1e-3, 1e-5)

# (seqlen_q, seqlen_k): the tile multiples and not, one query or key, unequal lengths both ways.
SEQLENS = [
    (1, 1),
    (17, 17),
    (128, 128),
    (1000, 1000),
    (4096, 4096),
    (1, 1000),
    (17, 128),
    (1000, 17),
    (128, 4096),
    (4096, 1000),
]


def require_hopper(torch):
    """Skips unless the GPU runs sm_90a cubins (the attention samples' wgmmas)."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip(f"wgmma cubins are sm_90a: needs a Hopper GPU, found {torch.cuda.get_device_name()}")


@pytest.fixture(scope="module")
def attn(gpu, cubin):
    require_hopper(gpu)
    return cutec.load(cubin("flash_attention_sm90")).host("flash_attn_fwd")


def attention_mask(torch, sq, sk, masking, device):
    """The keys each query sees, (seqlen_q, seqlen_k) bool, or None for all: `masking` False (full),
    True (causal, top-left aligned) or a window (left, right), a side -1 where unbounded."""
    if masking is False:
        return None
    left, right = (-1, 0) if masking is True else masking
    i = torch.arange(sq, device=device)[:, None]
    j = torch.arange(sk, device=device)[None, :]
    mask = torch.ones(sq, sk, dtype=torch.bool, device=device)
    if left >= 0:
        mask &= j >= i - left
    if right >= 0:
        mask &= j <= i + right
    return mask


def reference(torch, q, k, v, scale, causal, dtype):
    """O (batch, seqlen_q, heads, D) and LSE (batch, heads, seqlen_q) in `dtype`, from the
    (batch, seqlen, heads, D) inputs; `causal` as attention_mask's `masking`. Rows that see no key:
    O = 0 and LSE = -inf (SDPA computes them unmasked, then they are overwritten, so that autograd
    gives them no gradient)."""
    group = q.shape[2] // k.shape[2]
    qt = q.to(dtype).transpose(1, 2)
    kt = k.to(dtype).transpose(1, 2).repeat_interleave(group, dim=1)
    vt = v.to(dtype).transpose(1, 2).repeat_interleave(group, dim=1)
    sq, sk = qt.shape[2], kt.shape[2]
    mask = attention_mask(torch, sq, sk, causal, q.device)
    empty = None
    if mask is not None:
        empty = ~mask.any(dim=-1)
        mask = mask | empty[:, None]
    o = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, attn_mask=mask, scale=scale)
    s = (qt @ kt.transpose(-1, -2)) * scale
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    if empty is not None and bool(empty.any()):
        o = o.masked_fill(empty[:, None], 0.0)
        lse = lse.masked_fill(empty, float("-inf"))
    return o.transpose(1, 2), lse


def masking_args(causal):
    """The host function's last arguments: `causal` 0/1 (flash_attn_*), or the window's two sides
    (flash_attn_*_window)."""
    return causal if isinstance(causal, tuple) else (int(causal),)


def run(torch, attn, q, k, v, scale, causal, o=None):
    """`causal` a bool (flash_attn_fwd) or a window (left, right) (flash_attn_fwd_window)."""
    b, sq, h, d = q.shape
    if o is None:
        o = torch.full_like(q, float("nan"))
    lse = torch.full((b, h, sq), float("nan"), device="cuda", dtype=torch.float32)
    attn(q, k, v, o, lse, scale, *masking_args(causal))
    torch.cuda.synchronize()
    return o, lse


def check(torch, o, lse, q, k, v, scale, causal, case):
    small = q.shape[1] * k.shape[1] * q.shape[2] <= 1 << 22
    ref_o, ref_lse = reference(torch, q, k, v, scale, causal, torch.float64 if small else torch.float32)
    atol, rtol = TOL[str(q.dtype).removeprefix("torch.")]
    err = (o.to(ref_o.dtype) - ref_o).abs()
    bound = atol + rtol * ref_o.abs()
    assert not bool(torch.isnan(o).any()), ("O has unwritten or NaN elements", case)
    assert bool((err <= bound).all()), ("O", case, float(err.max()), float((err - bound).max()))
    assert not bool(torch.isnan(lse).any()), ("LSE has unwritten or NaN elements", case)
    seen = torch.isfinite(ref_lse)  # rows that see no key: LSE -inf
    assert bool((lse[~seen] == float("-inf")).all()), ("LSE of rows that see no key", case)
    lerr = (lse.to(ref_lse.dtype) - ref_lse).abs()[seen]
    assert bool((lerr <= LSE_TOL[0] + LSE_TOL[1] * ref_lse.abs()[seen]).all()), ("LSE", case, float(lerr.max()))


def inputs(torch, dtype, b, sq, sk, h, hkv, d):
    gen = torch.Generator(device="cuda").manual_seed(sq * 7919 + sk * 31 + d + h + hkv)
    q = torch.randn(b, sq, h, d, device="cuda", generator=gen).to(dtype)
    k = torch.randn(b, sk, hkv, d, device="cuda", generator=gen).to(dtype)
    v = torch.randn(b, sk, hkv, d, device="cuda", generator=gen).to(dtype)
    return q, k, v


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("gqa", [1, 4], ids=["mha", "gqa4"])
@pytest.mark.parametrize("seqlens", SEQLENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_forward(gpu, attn, dtype, d, causal, gqa, seqlens):
    torch = gpu
    sq, sk = seqlens
    if d == 256 and max(sq, sk) > 1000:
        pytest.skip("head_dim 256 is checked up to 1000 keys (the reference's memory and time)")
    b, h = 2, 4
    q, k, v = inputs(torch, getattr(torch, dtype), b, sq, sk, h, h // gqa, d)
    scale = 1.0 / math.sqrt(d)
    o, lse = run(torch, attn, q, k, v, scale, causal)
    check(torch, o, lse, q, k, v, scale, causal, (dtype, d, causal, gqa, seqlens))


# The long sequences and GQA 8 of the grid: one batch of 8 query heads over 8 or 1 K/V heads, every
# head dim, bf16 (the reference's S is 8 x 8192 x 8192 f32, 2 GiB; the backward's autograd keeps a few).
LONG = [(8192, 8192), (4096, 8192), (8192, 1000)]


def long_grid(test):
    """Parametrizes `test(d, causal, gqa, seqlens)` over the long-sequence grid (shared with the backward)."""
    test = pytest.mark.parametrize("d", [64, 128, 256])(test)
    test = pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])(test)
    test = pytest.mark.parametrize("gqa", [1, 8], ids=["mha", "gqa8"])(test)
    return pytest.mark.parametrize("seqlens", LONG, ids=lambda s: f"{s[0]}x{s[1]}")(test)


@long_grid
def test_forward_long(gpu, attn, d, causal, gqa, seqlens):
    torch = gpu
    sq, sk = seqlens
    q, k, v = inputs(torch, torch.bfloat16, 1, sq, sk, 8, 8 // gqa, d)
    scale = 1.0 / math.sqrt(d)
    o, lse = run(torch, attn, q, k, v, scale, causal)
    check(torch, o, lse, q, k, v, scale, causal, ("long", d, causal, gqa, seqlens))


# Causal shapes whose zigzag units fill the persistent grid (test_offline.py checks the grids): an odd
# count of query blocks per head (9 of 128 rows: units straddle two heads) and an odd total (261
# tiles: the last unit has one tile), equal and unequal lengths; and an even count (8 x 66 heads,
# 264 units: two waves). The smaller shapes of test_forward launch a block per tile.
ZIGZAG = [(1, 29, 1100, 1100), (1, 29, 1100, 1500), (2, 33, 1000, 1000)]


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("shape", ZIGZAG, ids=lambda s: "x".join(map(str, s)))
def test_forward_zigzag(gpu, attn, d, shape):
    torch = gpu
    b, h, sq, sk = shape
    q, k, v = inputs(torch, torch.bfloat16, b, sq, sk, h, h, d)
    scale = 1.0 / math.sqrt(d)
    o, lse = run(torch, attn, q, k, v, scale, True)
    check(torch, o, lse, q, k, v, scale, True, ("zigzag", d, shape))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_bhsd_views_and_scale(gpu, attn, causal):
    """(batch, heads, seqlen, D) tensors passed as their (batch, seqlen, heads, D) transposes (head_dim
    contiguous, the other strides torch's), into a strided O, with a softmax scale that is not D^-0.5."""
    torch = gpu
    b, h, sq, sk, d = 3, 8, 300, 520, 128
    qb = torch.randn(b, h, sq, d, device="cuda").to(torch.bfloat16)
    kb = torch.randn(b, 2, sk, d, device="cuda").to(torch.bfloat16)
    vb = torch.randn(b, 2, sk, d, device="cuda").to(torch.bfloat16)
    ob = torch.full((b, h, sq, d), float("nan"), device="cuda", dtype=torch.bfloat16)
    q, k, v, o = (t.transpose(1, 2) for t in (qb, kb, vb, ob))
    o, lse = run(torch, attn, q, k, v, 0.05, causal, o=o)
    check(torch, o, lse, q, k, v, 0.05, causal, ("bhsd", causal))


# Sliding windows (left, right): causal ones (right 0) narrower and wider than a K tile, a band both
# ways, the diagonal alone, one side unbounded. With seqlen_q > seqlen_k + left the last rows see no
# key (1000 x 300 with left <= 200; whole query blocks at left 0 and 64).
WINDOWS = [(0, 0), (64, 0), (200, 0), (100, 37), (-1, 100), (300, -1)]
WINDOW_SEQLENS = [(17, 17), (1000, 1000), (1000, 300), (300, 1000)]


@pytest.fixture(scope="module")
def attn_window(gpu, cubin):
    require_hopper(gpu)
    return cutec.load(cubin("flash_attention_sm90")).host("flash_attn_fwd_window")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("gqa", [1, 4], ids=["mha", "gqa4"])
@pytest.mark.parametrize("window", WINDOWS, ids=lambda w: f"w{w[0]}_{w[1]}")
@pytest.mark.parametrize("seqlens", WINDOW_SEQLENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_forward_window(gpu, attn_window, dtype, d, gqa, window, seqlens):
    torch = gpu
    sq, sk = seqlens
    q, k, v = inputs(torch, getattr(torch, dtype), 2, sq, sk, 4, 4 // gqa, d)
    scale = 1.0 / math.sqrt(d)
    o, lse = run(torch, attn_window, q, k, v, scale, window)
    check(torch, o, lse, q, k, v, scale, window, ("window", dtype, d, gqa, window, seqlens))


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("window", [(1024, 0), (511, 511)], ids=lambda w: f"w{w[0]}_{w[1]}")
def test_forward_window_long(gpu, attn_window, d, window):
    """8192 queries and keys on the persistent grid: every tile a window's work."""
    torch = gpu
    q, k, v = inputs(torch, torch.bfloat16, 1, 8192, 8192, 8, 2, d)
    scale = 1.0 / math.sqrt(d)
    o, lse = run(torch, attn_window, q, k, v, scale, window)
    check(torch, o, lse, q, k, v, scale, window, ("window long", d, window))


@pytest.mark.parametrize("d", [64, 128, 256])
def test_window_without_bounds_is_causal_or_full(gpu, attn, attn_window, d):
    """(-1, 0) is causal attention and (-1, -1) full attention: the same kernels, bit for bit."""
    torch = gpu
    q, k, v = inputs(torch, torch.bfloat16, 2, 1000, 700, 4, 2, d)
    for window, causal in (((-1, 0), True), ((-1, -1), False)):
        o, lse = run(torch, attn_window, q, k, v, 0.1, window)
        o_ref, lse_ref = run(torch, attn, q, k, v, 0.1, causal)
        assert torch.equal(o, o_ref) and torch.equal(lse, lse_ref), (d, window)


def test_refuses_bad_shapes(gpu, attn):
    torch = gpu
    q, k, v = inputs(torch, torch.bfloat16, 1, 64, 64, 6, 4, 64)  # 6 heads over 4 K/V heads
    o = torch.empty_like(q)
    lse = torch.empty(1, 6, 64, device="cuda")
    with pytest.raises(cutec.Refused):
        attn.check(q, k, v, o, lse, 0.125, 0)
    q, k, v = inputs(torch, torch.bfloat16, 1, 64, 64, 4, 4, 96)  # head_dim 96
    o = torch.empty_like(q)
    lse = torch.empty(1, 4, 64, device="cuda")
    with pytest.raises(cutec.Refused):
        attn.check(q, k, v, o, lse, 0.125, 0)


def test_window_refuses_bad_sides(gpu, attn_window):
    torch = gpu
    q, k, v = inputs(torch, torch.bfloat16, 1, 64, 64, 4, 4, 64)
    o = torch.empty_like(q)
    lse = torch.empty(1, 4, 64, device="cuda")
    attn_window.check(q, k, v, o, lse, 0.125, 16, 0)  # accepted: the windows below are the refusals
    for window in ((-2, 0), (16, -5)):
        with pytest.raises(cutec.Refused):
            attn_window.check(q, k, v, o, lse, 0.125, *window)
