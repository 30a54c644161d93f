"""samples/flash_attention_bwd_sm90.cute (issue 34): the FlashAttention backward on Hopper (a pre-pass for
D = rowsum(dO * O), one block per 128 keys with SS wgmmas for S^T = K Q^T and dP^T = V dO^T, RS wgmmas
for dV += P^T dO and dK += dS^T Q, dQ += dS K through shared memory with f32 atomics, a post-pass
converting dQ) against torch: dQ, dK, dV against the autograd gradients of
torch.nn.functional.scaled_dot_product_attention computed in float32 (float64 where the shape is small)
on the same bf16/f16 inputs. O and LSE given to the kernel are torch's (O rounded to the input type),
so the backward is checked on its own; test_forward_then_backward chains it to
samples/flash_attention_sm90.cute's forward. Causal is torch's `is_causal=True` (top-left aligned).
Head dims 64, 128 and 256 (its own work split: 64 keys per block, P and dS through shared
memory). GQA: query head h reads K/V head h // (H / Hkv); dK, dV of a K/V head sum over its query heads (as
autograd through K.repeat_interleave gives them). Sliding windows (`flash_attn_bwd_window`) against
the same reference with the window's mask (test_gpu_flash_attention.py's, rows that see no key
contributing nothing).

Tolerance, per gradient G against the reference R: max |G - R| <= tol * max |R| and
||G - R|| <= tol / 2 * ||R|| with tol = 2e-2 for bf16 and 4e-3 for f16: P and dS are rounded to the
input type to enter the wgmmas (2^-8 relative for bf16, 2^-11 for f16) and G once at the end; the
sums over keys or queries are f32. Both bounds have an absolute floor (FLOOR, and FLOOR * sqrt(numel)
for the norm) for gradients that cancel to 0 in exact arithmetic. Outputs and workspaces are poisoned with NaN before the call, so an
element the kernels do not write (or a workspace they forget to initialize) fails. Needs an sm_90 GPU
and torch (skipped otherwise)."""

import math

import pytest

import cutec
from test_gpu_flash_attention import reference as forward_reference
from test_gpu_flash_attention import WINDOW_SEQLENS, WINDOWS, long_grid, masking_args, require_hopper


TOL = {"bfloat16": 2e-2, "float16": 4e-3}
# An absolute floor: where dS = P * (dP - D) cancels exactly (one key: dP = D), the reference's dQ and dK
# are 0 and the kernel's are f32 rounding of dP - D (a few ulp of |dO| |V| ~ 10), times scale * |K|.
FLOOR = 1e-4
BM = 64  # the query tile of the sample: the workspaces are padded to it

# (seqlen_q, seqlen_k): the tile multiples and not, one query or key, unequal lengths both ways.
SEQLENS = [
    (1, 1),
    (17, 17),
    (128, 128),
    (1000, 1000),
    (1, 1000),
    (17, 128),
    (1000, 17),
    (128, 1000),
    (300, 130),
]


@pytest.fixture(scope="module")
def bwd(gpu, cubin):
    require_hopper(gpu)
    return cutec.load(cubin("flash_attention_bwd_sm90")).host("flash_attn_bwd")


def workspaces(torch, b, sq, h, d):
    """dQaccum (batch, heads, S * D) and stats (batch, heads, 2, S), S = seqlen_q padded to 64, NaN."""
    padded = -(-sq // BM) * BM
    dq_accum = torch.full((b, h, padded * d), float("nan"), device="cuda", dtype=torch.float32)
    stats = torch.full((b, h, 2, padded), float("nan"), device="cuda", dtype=torch.float32)
    return dq_accum, stats


def reference(torch, q, k, v, do, scale, causal, dtype):
    """dQ, dK, dV of sum(O * dO) in `dtype` by autograd."""
    qr, kr, vr = (t.detach().to(dtype).requires_grad_(True) for t in (q, k, v))
    o, _ = forward_reference(torch, qr, kr, vr, scale, causal, dtype)
    o.backward(do.to(dtype))
    return qr.grad, kr.grad, vr.grad


def forward_inputs(torch, q, k, v, scale, causal):
    """O (rounded to the input type) and LSE (f32) for the kernel, from torch in float32."""
    with torch.no_grad():
        o, lse = forward_reference(torch, q, k, v, scale, causal, torch.float32)
    return o.to(q.dtype), lse.contiguous()


def run(torch, bwd, q, k, v, o, do, lse, scale, causal, grads=None):
    """`causal` a bool (flash_attn_bwd) or a window (left, right) (flash_attn_bwd_window)."""
    b, sq, h, d = q.shape
    if grads is None:
        grads = tuple(torch.full_like(t, float("nan")) for t in (q, k, v))
    dq, dk, dv = grads
    dq_accum, stats = workspaces(torch, b, sq, h, d)
    bwd(q, k, v, o, do, lse, dq, dk, dv, dq_accum, stats, scale, *masking_args(causal))
    torch.cuda.synchronize()
    return dq, dk, dv


def check(torch, grads, q, k, v, do, scale, causal, case):
    small = q.shape[1] * k.shape[1] * q.shape[2] <= 1 << 22
    refs = reference(torch, q, k, v, do, scale, causal, torch.float64 if small else torch.float32)
    tol = TOL[str(q.dtype).removeprefix("torch.")]
    for name, g, r in zip(("dQ", "dK", "dV"), grads, refs):
        assert not bool(torch.isnan(g).any()), (f"{name} has unwritten or NaN elements", case)
        err = g.to(r.dtype) - r
        scale_r = float(r.abs().max())
        assert float(err.abs().max()) <= tol * scale_r + FLOOR, (name, case, float(err.abs().max()), scale_r)
        floor = FLOOR * r.numel() ** 0.5
        assert float(err.norm()) <= tol / 2 * float(r.norm()) + floor, (name, case, float(err.norm() / r.norm()))


def backward_against_torch(torch, bwd, q, k, v, do, scale, causal, case):
    """The backward on torch's O and LSE, checked against autograd (`causal` as `run` takes it)."""
    o, lse = forward_inputs(torch, q, k, v, scale, causal)
    grads = run(torch, bwd, q, k, v, o, do, lse, scale, causal)
    check(torch, grads, q, k, v, do, scale, causal, case)


def backward_case(torch, bwd, dtype, b, seqlens, h, hkv, d, masking, case):
    """Seeded inputs of the shape, the backward on torch's O and LSE at the default scale D^-0.5, checked."""
    q, k, v, do = inputs(torch, dtype, b, *seqlens, h, hkv, d)
    backward_against_torch(torch, bwd, q, k, v, do, 1.0 / math.sqrt(d), masking, case)


def inputs(torch, dtype, b, sq, sk, h, hkv, d):
    gen = torch.Generator(device="cuda").manual_seed(sq * 7919 + sk * 31 + d + h + hkv)
    q = torch.randn(b, sq, h, d, device="cuda", generator=gen).to(dtype)
    k = torch.randn(b, sk, hkv, d, device="cuda", generator=gen).to(dtype)
    v = torch.randn(b, sk, hkv, d, device="cuda", generator=gen).to(dtype)
    do = torch.randn(b, sq, h, d, device="cuda", generator=gen).to(dtype)
    return q, k, v, do


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("gqa", [1, 4], ids=["mha", "gqa4"])
@pytest.mark.parametrize("seqlens", SEQLENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_backward(gpu, bwd, dtype, d, causal, gqa, seqlens):
    backward_case(gpu, bwd, getattr(gpu, dtype), 2, seqlens, 4, 4 // gqa, d, causal, (dtype, d, causal, gqa, seqlens))


@long_grid
def test_backward_long(gpu, bwd, d, causal, gqa, seqlens):
    backward_case(gpu, bwd, gpu.bfloat16, 1, seqlens, 8, 8 // gqa, d, causal, ("long", d, causal, gqa, seqlens))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_bhsd_views_and_scale(gpu, bwd, causal):
    """(batch, heads, seqlen, D) tensors, gradients included, passed as their (batch, seqlen, heads, D)
    transposes (head_dim contiguous, the other strides torch's), GQA 8 -> 2, a softmax scale that is
    not D^-0.5."""
    torch = gpu
    b, h, hkv, sq, sk, d = 3, 8, 2, 300, 520, 128
    dt = torch.bfloat16
    qb, dob = (torch.randn(b, h, sq, d, device="cuda").to(dt) for _ in range(2))
    kb, vb = (torch.randn(b, hkv, sk, d, device="cuda").to(dt) for _ in range(2))
    q, k, v, do = (t.transpose(1, 2) for t in (qb, kb, vb, dob))
    o, lse = forward_inputs(torch, q, k, v, 0.05, causal)
    grads_b = (
        torch.full((b, h, sq, d), float("nan"), device="cuda", dtype=dt),
        torch.full((b, hkv, sk, d), float("nan"), device="cuda", dtype=dt),
        torch.full((b, hkv, sk, d), float("nan"), device="cuda", dtype=dt),
    )
    grads = run(torch, bwd, q, k, v, o, do, lse, 0.05, causal, grads=tuple(g.transpose(1, 2) for g in grads_b))
    check(torch, grads, q, k, v, do, 0.05, causal, ("bhsd", causal))


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("masking", [True, (64, 0), (100, 37)], ids=["causal", "w64_0", "w100_37"])
def test_forward_then_backward(gpu, bwd, cubin, d, masking):
    """O and LSE from samples/flash_attention_sm90.cute's forward, then the backward: the two samples agree
    on the layout and meaning of LSE. Windows (the `_window` hosts, f16) over 500 keys: the rows past
    seqlen_k + left get LSE -inf from the forward."""
    torch = gpu
    windowed = isinstance(masking, tuple)
    suffix = "_window" if windowed else ""
    fwd = cutec.load(cubin("flash_attention_sm90")).host("flash_attn_fwd" + suffix)
    bwd = cutec.load(cubin("flash_attention_bwd_sm90")).host("flash_attn_bwd" + suffix)
    b, h, sq, sk = 2, 4, 777, (500 if windowed else 777)
    q, k, v, do = inputs(torch, torch.float16 if windowed else torch.bfloat16, b, sq, sk, h, h, d)
    scale = 1.0 / math.sqrt(d)
    o = torch.empty_like(q)
    lse = torch.empty(b, h, sq, device="cuda", dtype=torch.float32)
    fwd(q, k, v, o, lse, scale, *masking_args(masking))
    grads = run(torch, bwd, q, k, v, o, do, lse, scale, masking)
    check(torch, grads, q, k, v, do, scale, masking, ("fwd+bwd", d, masking))


@pytest.fixture(scope="module")
def bwd_window(gpu, cubin):
    require_hopper(gpu)
    return cutec.load(cubin("flash_attention_bwd_sm90")).host("flash_attn_bwd_window")


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("gqa", [1, 4], ids=["mha", "gqa4"])
@pytest.mark.parametrize("window", WINDOWS, ids=lambda w: f"w{w[0]}_{w[1]}")
@pytest.mark.parametrize("seqlens", WINDOW_SEQLENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_backward_window(gpu, bwd_window, d, gqa, window, seqlens):
    case = ("window", d, gqa, window, seqlens)
    backward_case(gpu, bwd_window, gpu.bfloat16, 2, seqlens, 4, 4 // gqa, d, window, case)


def test_refuses_bad_shapes(gpu, bwd):
    torch = gpu

    def call(q, k, v, do, dq_accum=None, stats=None):
        b, sq, h, d = q.shape
        o = torch.empty_like(q)
        lse = torch.empty(b, h, sq, device="cuda")
        ws = workspaces(torch, b, sq, h, d)
        dq_accum = ws[0] if dq_accum is None else dq_accum
        stats = ws[1] if stats is None else stats
        grads = (torch.empty_like(q), torch.empty_like(k), torch.empty_like(v))
        bwd.check(q, k, v, o, do, lse, *grads, dq_accum, stats, 0.125, 0)

    call(*inputs(torch, torch.bfloat16, 1, 64, 64, 4, 4, 64))  # accepted: the shapes below are the refusals
    with pytest.raises(cutec.Refused):
        call(*inputs(torch, torch.bfloat16, 1, 64, 64, 6, 4, 64))  # 6 heads over 4 K/V heads
    with pytest.raises(cutec.Refused):
        call(*inputs(torch, torch.bfloat16, 1, 64, 64, 4, 4, 96))  # head_dim 96
    with pytest.raises(cutec.Refused):  # dQaccum not padded to whole 64-row tiles
        q, k, v, do = inputs(torch, torch.bfloat16, 1, 100, 64, 4, 4, 64)
        call(q, k, v, do, dq_accum=torch.empty(1, 4, 100 * 64, device="cuda"))
