"""cutec.attention (issue 34): the attention samples as torch autograd functions. O of the forward and
dQ, dK, dV from `.backward()` against autograd of torch's SDPA in float32/float64 (test_gpu_flash_attention
and _bwd's references and tolerances), fixed-length and packed variable-length, causal, windows, GQA,
strided (B, H, S, D) views; refusals and a forward without a backward module. Needs an sm_90 GPU and
torch (skipped otherwise)."""

import pytest

import cutec
import cutec.attention
from test_gpu_flash_attention import TOL as O_TOL
from test_gpu_flash_attention import reference as forward_reference
from test_gpu_flash_attention import require_hopper
from test_gpu_flash_attention_bwd import FLOOR, TOL
from test_gpu_flash_attention_bwd import reference as backward_reference
from test_gpu_flash_attention_varlen import packed_inputs, segments


@pytest.fixture(scope="module")
def attn(gpu, cubin):
    require_hopper(gpu)
    return cutec.attention.FlashAttention(
        cutec.load(cubin("flash_attention_sm90")), cutec.load(cubin("flash_attention_bwd_sm90"))
    )


@pytest.fixture(scope="module")
def varlen(gpu, cubin):
    require_hopper(gpu)
    return cutec.attention.FlashAttentionVarlen(
        cutec.load(cubin("flash_attention_varlen_sm90")), cutec.load(cubin("flash_attention_varlen_bwd_sm90"))
    )


def close(torch, name, g, r, tol, case):
    assert not bool(torch.isnan(g).any()), (name, case)
    err = g.to(r.dtype) - r
    assert float(err.abs().max()) <= tol * float(r.abs().max()) + FLOOR, (name, case, float(err.abs().max()))


def leaves(torch, shapes, dtype, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return [torch.randn(s, device="cuda", generator=gen).to(dtype).requires_grad_(True) for s in shapes]


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("masking", [False, True, (100, 0)], ids=["full", "causal", "w100_0"])
def test_autograd_matches_sdpa(gpu, attn, d, masking):
    torch = gpu
    b, sq, sk, h, hkv = 2, 300, 500, 4, 2
    q, k, v = leaves(torch, [(b, sq, h, d), (b, sk, hkv, d), (b, sk, hkv, d)], torch.bfloat16, seed=d)
    do = torch.randn(b, sq, h, d, device="cuda").to(torch.bfloat16)
    window = masking if isinstance(masking, tuple) else None
    o = attn(q, k, v, causal=masking is True, window=window, softmax_scale=0.1)
    o.backward(do)
    ref_o, _ = forward_reference(torch, q.detach(), k.detach(), v.detach(), 0.1, masking, torch.float32)
    atol, rtol = O_TOL["bfloat16"]
    assert bool(((o.float() - ref_o).abs() <= atol + rtol * ref_o.abs()).all()), ("O", d, masking)
    refs = backward_reference(torch, q.detach(), k.detach(), v.detach(), do, 0.1, masking, torch.float32)
    for name, g, r in zip(("dQ", "dK", "dV"), (q.grad, k.grad, v.grad), refs):
        close(torch, name, g, r, TOL["bfloat16"], (d, masking))


def test_bhsd_views_default_scale(gpu, attn):
    """(B, H, S, D) leaves passed as (B, S, H, D) transposes; the default scale head_dim^-0.5; the
    gradients arrive in the leaves' own layout."""
    torch = gpu
    qb, kb, vb = leaves(torch, [(2, 4, 200, 128)] * 3, torch.float16, seed=3)
    o = attn(qb.transpose(1, 2), kb.transpose(1, 2), vb.transpose(1, 2), causal=True)
    o.sum().backward()
    q, k, v = (t.detach().transpose(1, 2) for t in (qb, kb, vb))
    refs = backward_reference(torch, q, k, v, torch.ones_like(o), 128**-0.5, True, torch.float32)
    for name, g, r in zip(("dQ", "dK", "dV"), (qb.grad, kb.grad, vb.grad), refs):
        close(torch, name, g.transpose(1, 2), r, TOL["float16"], "bhsd")


def test_varlen_autograd(gpu, varlen):
    torch = gpu
    lens = [(300, 300), (17, 17), (700, 500), (128, 128)]
    q, k, v, cu_q, cu_k = packed_inputs(torch, torch.bfloat16, lens, 4, 2, 128, seed=7)
    q, k, v = (t.requires_grad_(True) for t in (q, k, v))
    do = torch.randn(q.shape, device="cuda").to(torch.bfloat16)
    o = varlen(q, k, v, cu_q, cu_k, 700, 500, causal=True)
    o.backward(do)
    for i, (q0, q1, k0, k1) in enumerate(segments(cu_q, cu_k)):
        args = (q.detach()[None, q0:q1], k.detach()[None, k0:k1], v.detach()[None, k0:k1])
        refs = backward_reference(torch, *args, do[None, q0:q1], 128**-0.5, True, torch.float32)
        grads = (q.grad[q0:q1], k.grad[k0:k1], v.grad[k0:k1])
        for name, g, r in zip(("dQ", "dK", "dV"), grads, refs):
            close(torch, name, g, r[0], TOL["bfloat16"], ("varlen", i))


def test_refusals(gpu, cubin, attn):
    torch = gpu
    q, k, v = leaves(torch, [(1, 64, 4, 64)] * 3, torch.bfloat16, seed=1)
    with pytest.raises(ValueError):
        attn(q, k, v, causal=True, window=(16, 0))
    q96, k96, v96 = leaves(torch, [(1, 64, 4, 96)] * 3, torch.bfloat16, seed=2)
    with pytest.raises(cutec.Refused):
        attn(q96, k96, v96)
    forward_only = cutec.attention.FlashAttention(cutec.load(cubin("flash_attention_sm90")))
    o = forward_only(q, k, v)
    with pytest.raises(RuntimeError, match="no backward module"):
        o.sum().backward()
