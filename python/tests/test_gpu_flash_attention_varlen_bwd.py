"""samples/flash_attention_varlen_bwd_sm90.cute (issue 34): the FlashAttention backward over variable-length
batches, chained to samples/flash_attention_varlen_sm90.cute's forward (its O and LSE): the packed
(total, heads, D) tensors and cu_seqlens of test_gpu_flash_attention_varlen.py, dQ, dK and dV of each
sequence against test_gpu_flash_attention_bwd's reference (autograd of SDPA on that sequence alone, in
float32, float64 where small) with that file's tolerances. Outputs and workspaces are poisoned with
NaN before the call: every row of a sequence must be written, rows past the last sequence must not be.
Needs an sm_90 GPU and torch (skipped otherwise)."""

import math

import pytest

import cutec
from test_gpu_flash_attention import masking_args, require_hopper
from test_gpu_flash_attention_bwd import FLOOR, TOL
from test_gpu_flash_attention_bwd import reference as backward_reference
from test_gpu_flash_attention_varlen import BATCHES, dims_and_causal, packed_inputs, segments, varlen_grid

ALIGN = 128  # the sample's VARLEN_ALIGN: each sequence's workspace rows start at a multiple of it


@pytest.fixture(scope="module")
def hosts(gpu, cubin):
    require_hopper(gpu)
    fwd = cutec.load(cubin("flash_attention_varlen_sm90"))
    bwd = cutec.load(cubin("flash_attention_varlen_bwd_sm90"))
    return fwd, bwd


def suffix(masking):
    return "_window" if isinstance(masking, tuple) else ""


def workspaces(torch, total_q, batch, h, d):
    """dQaccum (heads, R * D) and stats (heads, 2, R), R = ceil(total_q / 128) * 128 + 128 * batch, NaN."""
    rows = -(-total_q // ALIGN) * ALIGN + ALIGN * batch
    dq_accum = torch.full((h, rows * d), float("nan"), device="cuda", dtype=torch.float32)
    stats = torch.full((h, 2, rows), float("nan"), device="cuda", dtype=torch.float32)
    return dq_accum, stats


def forward_backward(torch, hosts, q, k, v, do, cu_q, cu_k, max_q, max_k, scale, masking):
    """O and LSE from the varlen forward, then dQ, dK, dV from the varlen backward (NaN-poisoned)."""
    fwd, bwd = (m.host(f"flash_attn_varlen_{name}{suffix(masking)}") for m, name in zip(hosts, ("fwd", "bwd")))
    o = torch.full_like(q, float("nan"))
    lse = torch.full((q.shape[1], q.shape[0]), float("nan"), device="cuda", dtype=torch.float32)
    fwd(q, k, v, o, lse, cu_q, cu_k, max_q, scale, *masking_args(masking))
    dq, dk, dv = (torch.full_like(t, float("nan")) for t in (q, k, v))
    dq_accum, stats = workspaces(torch, q.shape[0], cu_q.shape[0] - 1, q.shape[1], q.shape[2])
    bwd(q, k, v, o, do, lse, dq, dk, dv, dq_accum, stats, cu_q, cu_k, max_q, max_k, scale, *masking_args(masking))
    torch.cuda.synchronize()
    return dq, dk, dv


def close(torch, name, g, r, tol, case):
    assert not bool(torch.isnan(g).any()), (f"{name} has unwritten or NaN elements", case)
    err = g.to(r.dtype) - r
    scale_r = float(r.abs().max()) if r.numel() else 0.0
    assert float(err.abs().max()) <= tol * scale_r + FLOOR, (name, case, float(err.abs().max()), scale_r)
    assert float(err.norm()) <= tol / 2 * float(r.norm()) + FLOOR * r.numel() ** 0.5, (name, case)


def check(torch, grads, q, k, v, do, segs, scale, masking, case):
    """Each sequence's dQ, dK, dV against autograd on that sequence; rows past the last sequence NaN."""
    dq, dk, dv = grads
    tol = TOL[str(q.dtype).removeprefix("torch.")]
    for i, (q0, q1, k0, k1) in enumerate(segs):
        if q1 == q0 or k1 == k0:  # no queries: dK = dV = 0; no keys: dQ = 0
            assert bool((dq[q0:q1] == 0).all()), ("dQ without keys", case, i)
            assert bool((dk[k0:k1] == 0).all()) and bool((dv[k0:k1] == 0).all()), ("dK, dV without queries", case, i)
            continue
        small = (q1 - q0) * (k1 - k0) * q.shape[1] <= 1 << 22
        dtype = torch.float64 if small else torch.float32
        refs = backward_reference(
            torch, q[None, q0:q1], k[None, k0:k1], v[None, k0:k1], do[None, q0:q1], scale, masking, dtype
        )
        for name, g, r in zip(("dQ", "dK", "dV"), (dq[q0:q1], dk[k0:k1], dv[k0:k1]), refs):
            close(torch, name, g, r[0], tol, (case, i))
    q_end = max(q1 for _, q1, _, _ in segs)
    k_end = max(k1 for _, _, _, k1 in segs)
    assert bool(torch.isnan(dq[q_end:]).all()), ("dQ written past the last sequence", case)
    assert bool(torch.isnan(dk[k_end:]).all()) and bool(torch.isnan(dv[k_end:]).all()), ("dK/dV past the end", case)


def packed_with_do(torch, dtype, lens, h, hkv, d, seed):
    q, k, v, cu_q, cu_k = packed_inputs(torch, dtype, lens, h, hkv, d, seed)
    gen = torch.Generator(device="cuda").manual_seed(seed + 1)
    do = torch.randn(q.shape, device="cuda", generator=gen).to(dtype)
    return q, k, v, do, cu_q, cu_k


@varlen_grid
def test_varlen_backward(gpu, hosts, dtype, d, masking, gqa, batch):
    torch = gpu
    lens = BATCHES[batch]
    q, k, v, do, cu_q, cu_k = packed_with_do(torch, getattr(torch, dtype), lens, 4, 4 // gqa, d, seed=d + gqa)
    scale = 1.0 / math.sqrt(d)
    max_q = max(max(sq for sq, _ in lens), 1)
    max_k = max(max(sk for _, sk in lens), 1)
    grads = forward_backward(torch, hosts, q, k, v, do, cu_q, cu_k, max_q, max_k, scale, masking)
    check(torch, grads, q, k, v, do, segments(cu_q, cu_k), scale, masking, (batch, dtype, d, masking, gqa))


@dims_and_causal
def test_varlen_backward_long(gpu, hosts, d, causal):
    torch = gpu
    lens = [(3000, 3000), (1500, 1500), (2000, 4000)]
    q, k, v, do, cu_q, cu_k = packed_with_do(torch, torch.bfloat16, lens, 8, 2, d, seed=d)
    scale = 1.0 / math.sqrt(d)
    grads = forward_backward(torch, hosts, q, k, v, do, cu_q, cu_k, 3000, 4000, scale, causal)
    check(torch, grads, q, k, v, do, segments(cu_q, cu_k), scale, causal, ("long", d, causal))


@pytest.mark.parametrize("d", [64, 128, 256])
def test_equal_lengths_match_the_fixed_length_backward(gpu, hosts, cubin, d):
    """A packed batch of equal sequences, the same O and LSE (the fixed-length forward's): dK and dV
    (each a block's own sums, in the same order) equal the fixed-length backward's bit for bit; dQ (f32
    atomics, in any order) to rounding."""
    torch = gpu
    b, s, h, hkv = 3, 700, 4, 2
    q, k, v, do, cu_q, cu_k = packed_with_do(torch, torch.float16, [(s, s)] * b, h, hkv, d, seed=13)
    fwd = cutec.load(cubin("flash_attention_sm90")).host("flash_attn_fwd")
    bwd = cutec.load(cubin("flash_attention_bwd_sm90")).host("flash_attn_bwd")
    qb, kb, vb, dob = (t[: b * s].reshape(b, s, t.shape[1], d) for t in (q, k, v, do))
    ob = torch.empty_like(qb)
    lseb = torch.empty(b, h, s, device="cuda", dtype=torch.float32)
    fwd(qb, kb, vb, ob, lseb, 0.1, 1)
    grads = tuple(torch.empty_like(t) for t in (qb, kb, vb))
    padded = -(-s // 64) * 64
    ws = (torch.empty(b, h, padded * d, device="cuda"), torch.empty(b, h, 2, padded, device="cuda"))
    bwd(qb, kb, vb, ob, dob, lseb, *grads, *ws, 0.1, 1)
    # The varlen backward on the same O and LSE, packed.
    o = torch.full_like(q, float("nan"))
    o[: b * s] = ob.reshape(b * s, h, d)
    lse = torch.full((h, q.shape[0]), float("nan"), device="cuda")
    lse[:, : b * s] = lseb.permute(1, 0, 2).reshape(h, b * s)
    dq, dk, dv = (torch.full_like(t, float("nan")) for t in (q, k, v))
    dq_accum, stats = workspaces(torch, q.shape[0], b, h, d)
    varlen_bwd = hosts[1].host("flash_attn_varlen_bwd")
    varlen_bwd(q, k, v, o, do, lse, dq, dk, dv, dq_accum, stats, cu_q, cu_k, s, s, 0.1, 1)
    torch.cuda.synchronize()
    assert torch.equal(dk[: b * s], grads[1].reshape(b * s, hkv, d)), d
    assert torch.equal(dv[: b * s], grads[2].reshape(b * s, hkv, d)), d
    diff = (dq[: b * s].float() - grads[0].reshape(b * s, h, d).float()).abs().max()
    assert float(diff) <= 1e-2 * float(dq[: b * s].float().abs().max()), d


def test_short_max_seqlen_k_marks_dq(gpu, hosts):
    """A max_seqlen_k short of a sequence's keys: the keys past it are not computed, and that sequence's
    dQ is NaN (not silently missing terms); the other sequences are right."""
    torch = gpu
    lens = [(100, 300), (50, 60)]
    q, k, v, do, cu_q, cu_k = packed_with_do(torch, torch.bfloat16, lens, 4, 4, 128, seed=2)
    dq, dk, dv = forward_backward(torch, hosts, q, k, v, do, cu_q, cu_k, 100, 128, 0.1, False)
    assert bool(torch.isnan(dq[:100]).all())
    check(torch, (dq, dk, dv), q, k, v, do, [(100, 150, 300, 360)], 0.1, False, "short max_seqlen_k")


def test_bad_offsets_stay_inside_the_tensors(gpu, hosts):
    """Out-of-range offsets are clamped (compute-sanitizer checks the accesses in the GPU suite); the
    sequences they leave are computed: here rows 0..150 over every key, none, and rows 150..end over
    keys 0..7."""
    torch = gpu
    q, k, v, do, _, _ = packed_with_do(torch, torch.bfloat16, [(100, 100), (100, 100)], 4, 4, 64, seed=5)
    tq = q.shape[0]
    cu_q = torch.tensor([-50, 150, 150, 10**6], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, 10**6, -3, 7], dtype=torch.int32, device="cuda")
    dq, dk, dv = forward_backward(torch, hosts, q, k, v, do, cu_q, cu_k, 300, 300, 0.1, False)
    tol = TOL["bfloat16"]
    ref = backward_reference(torch, q[None, :150], k[None], v[None], do[None, :150], 0.1, False, torch.float32)
    close(torch, "dQ", dq[:150], ref[0][0], tol, "bad offsets, sequence 0")
    # Keys 0..7 are two sequences' here (both write their dK, dV rows): only the others are checked.
    close(torch, "dK", dk[7:], ref[1][0, 7:], tol, "bad offsets, sequence 0")
    close(torch, "dV", dv[7:], ref[2][0, 7:], tol, "bad offsets, sequence 0")
    ref = backward_reference(torch, q[None, 150:], k[None, :7], v[None, :7], do[None, 150:], 0.1, False, torch.float32)
    close(torch, "dQ", dq[150:tq], ref[0][0], tol, "bad offsets, sequence 2")


def test_refuses_bad_workspaces(gpu, hosts):
    torch = gpu
    bwd = hosts[1].host("flash_attn_varlen_bwd")
    q, k, v, do, cu_q, cu_k = packed_with_do(torch, torch.bfloat16, [(64, 64), (30, 30)], 4, 4, 64, seed=1)
    o = torch.empty_like(q)
    lse = torch.empty(4, q.shape[0], device="cuda")
    grads = tuple(torch.empty_like(t) for t in (q, k, v))
    acc, stats = workspaces(torch, q.shape[0], 2, 4, 64)
    bwd.check(q, k, v, o, do, lse, *grads, acc, stats, cu_q, cu_k, 64, 64, 0.125, 1)  # accepted
    bad = [
        (acc[:, : -64 * 64], stats),  # dQaccum one 64-row tile short
        (acc, stats[:, :, :-1]),  # stats one row short
    ]
    for a, s in bad:
        with pytest.raises(cutec.Refused):
            bwd.check(q, k, v, o, do, lse, *grads, a, s, cu_q, cu_k, 64, 64, 0.125, 1)
    with pytest.raises(cutec.Refused):
        bwd.check(q, k, v, o, do, lse, *grads, acc, stats, cu_q, cu_k, 64, 0, 0.125, 1)  # max_seqlen_k 0
