"""samples/flash_attention_varlen_sm90.cute (issue 34): the FlashAttention forward over variable-length
batches (flash-attn's `flash_attn_varlen_func` layout): the sequences packed along one axis, Q and O
(total_q, heads, D), K and V (total_k, kv_heads, D), `cu_seqlens_q` / `cu_seqlens_k` (batch + 1 i32
offsets) on the device, LSE (heads, total_q). Each sequence against test_gpu_flash_attention's
reference (torch's SDPA in float32, float64 where small, on the same bf16/f16 inputs; causal and
windows top-left aligned within the sequence), with that file's tolerances. Outputs are poisoned with
NaN before the call: every row of a sequence must be written, and the padding rows past the last
offset (each test leaves some) must not be. Needs an sm_90 GPU and torch (skipped otherwise)."""

import math

import pytest

import cutec
from test_gpu_flash_attention import LSE_TOL, TOL, masking_args, reference, require_hopper

PAD = 37  # rows of Q/O and K/V past the last sequence: never read into a sequence, never written


@pytest.fixture(scope="module")
def varlen(gpu, cubin):
    require_hopper(gpu)
    return cutec.load(cubin("flash_attention_varlen_sm90"))


def packed_inputs(torch, dtype, lens, h, hkv, d, seed):
    """Q (total_q + PAD, h, d), K and V (total_k + PAD, hkv, d), and cu_seqlens_q/k (i32, on the GPU)
    for `lens`, a list of (seqlen_q, seqlen_k) per sequence."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    tq = sum(sq for sq, _ in lens) + PAD
    tk = sum(sk for _, sk in lens) + PAD
    q = torch.randn(tq, h, d, device="cuda", generator=gen).to(dtype)
    k = torch.randn(tk, hkv, d, device="cuda", generator=gen).to(dtype)
    v = torch.randn(tk, hkv, d, device="cuda", generator=gen).to(dtype)
    cu_q = torch.tensor([0] + [sum(sq for sq, _ in lens[: i + 1]) for i in range(len(lens))], dtype=torch.int32)
    cu_k = torch.tensor([0] + [sum(sk for _, sk in lens[: i + 1]) for i in range(len(lens))], dtype=torch.int32)
    return q, k, v, cu_q.cuda(), cu_k.cuda()


def run(torch, host, q, k, v, cu_q, cu_k, max_seqlen_q, scale, masking):
    o = torch.full_like(q, float("nan"))
    lse = torch.full((q.shape[1], q.shape[0]), float("nan"), device="cuda", dtype=torch.float32)
    host(q, k, v, o, lse, cu_q, cu_k, max_seqlen_q, scale, *masking_args(masking))
    torch.cuda.synchronize()
    return o, lse


def host_for(varlen, masking):
    name = "flash_attn_varlen_fwd_window" if isinstance(masking, tuple) else "flash_attn_varlen_fwd"
    return varlen.host(name)


def segments(cu_q, cu_k):
    """The sequences' (first query row, end, first key row, end) from the offsets."""
    cq, ck = cu_q.tolist(), cu_k.tolist()
    return [(cq[i], cq[i + 1], ck[i], ck[i + 1]) for i in range(len(cq) - 1)]


def check(torch, o, lse, q, k, v, segs, scale, masking, case):
    """Each sequence's O and LSE against the reference (`segs` as `segments` gives them); the rows
    past the last sequence still NaN."""
    atol, rtol = TOL[str(q.dtype).removeprefix("torch.")]
    for i, (q0, q1, k0, k1) in enumerate(segs):
        if q1 == q0:
            continue
        o_i, lse_i = o[q0:q1], lse[:, q0:q1]
        if k1 == k0:  # no keys: every row sees none
            assert bool((o_i == 0).all()) and bool((lse_i == float("-inf")).all()), ("no keys", case, i)
            continue
        small = (q1 - q0) * (k1 - k0) * q.shape[1] <= 1 << 22
        dtype = torch.float64 if small else torch.float32
        ref_o, ref_lse = reference(torch, q[None, q0:q1], k[None, k0:k1], v[None, k0:k1], scale, masking, dtype)
        ref_o, ref_lse = ref_o[0], ref_lse[0]
        assert not bool(torch.isnan(o_i).any()), ("O has unwritten or NaN elements", case, i)
        err = (o_i.to(dtype) - ref_o).abs()
        bound = atol + rtol * ref_o.abs()
        assert bool((err <= bound).all()), ("O", case, i, float(err.max()))
        assert not bool(torch.isnan(lse_i).any()), ("LSE has unwritten or NaN elements", case, i)
        seen = torch.isfinite(ref_lse)
        assert bool((lse_i[~seen] == float("-inf")).all()), ("LSE of rows that see no key", case, i)
        lerr = (lse_i.to(dtype) - ref_lse).abs()[seen]
        assert bool((lerr <= LSE_TOL[0] + LSE_TOL[1] * ref_lse.abs()[seen]).all()), ("LSE", case, i, float(lerr.max()))
    end = max(q1 for _, q1, _, _ in segs)
    assert bool(torch.isnan(o[end:]).all()) and bool(torch.isnan(lse[:, end:]).all()), (
        "wrote past the last sequence",
        case,
    )


# Batches of (seqlen_q, seqlen_k) sequences: one token; tile multiples and not; unequal lengths both
# ways (a window's rows that see no key among them); a sequence without queries and one without keys;
# many short ones, most shorter than a tile, so that tiles straddle several sequences.
BATCHES = {
    "one": [(1, 1)],
    "equal": [(17, 17), (128, 128), (1000, 1000), (200, 200)],
    "unequal": [(300, 1000), (1, 17), (1000, 300), (129, 129), (64, 700)],
    "empty": [(0, 40), (50, 0), (64, 64), (0, 0), (193, 77)],
    "short": [(n, n) for n in (5, 1, 63, 64, 65, 100, 2, 191, 192, 193, 30, 7, 250, 128, 1, 90)],
}
WINDOWS = [(64, 0), (100, 37), (-1, 100)]


def masking_id(m):
    return f"w{m[0]}_{m[1]}" if isinstance(m, tuple) else ("causal" if m else "full")


def varlen_grid(test):
    """Parametrizes `test(dtype, d, masking, gqa, batch)` over the batches, maskings, GQA ratios, head
    dims and types (shared with the backward's test)."""
    test = pytest.mark.parametrize("dtype", ["bfloat16", "float16"])(test)
    test = pytest.mark.parametrize("d", [64, 128, 256])(test)
    test = pytest.mark.parametrize("masking", [False, True, *WINDOWS], ids=masking_id)(test)
    test = pytest.mark.parametrize("gqa", [1, 4], ids=["mha", "gqa4"])(test)
    return pytest.mark.parametrize("batch", sorted(BATCHES))(test)


@varlen_grid
def test_varlen_forward(gpu, varlen, dtype, d, masking, gqa, batch):
    torch = gpu
    lens = BATCHES[batch]
    q, k, v, cu_q, cu_k = packed_inputs(torch, getattr(torch, dtype), lens, 4, 4 // gqa, d, seed=d + gqa + len(lens))
    scale = 1.0 / math.sqrt(d)
    max_q = max(sq for sq, _ in lens)
    o, lse = run(torch, host_for(varlen, masking), q, k, v, cu_q, cu_k, max(max_q, 1), scale, masking)
    check(torch, o, lse, q, k, v, segments(cu_q, cu_k), scale, masking, (batch, dtype, d, masking, gqa))


def dims_and_causal(test):
    """Parametrizes `test(d, causal)` over the head dims, causal and not (the long tests of both files)."""
    test = pytest.mark.parametrize("d", [64, 128, 256])(test)
    return pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])(test)


@dims_and_causal
def test_varlen_long(gpu, varlen, d, causal):
    """Long sequences of unequal lengths, GQA 8 over 1 (the blocks of the longest run on many K tiles)."""
    torch = gpu
    lens = [(4096, 4096), (1500, 1500), (3000, 5000)]
    q, k, v, cu_q, cu_k = packed_inputs(torch, torch.bfloat16, lens, 8, 1, d, seed=d)
    scale = 1.0 / math.sqrt(d)
    o, lse = run(torch, host_for(varlen, causal), q, k, v, cu_q, cu_k, 4096, scale, causal)
    check(torch, o, lse, q, k, v, segments(cu_q, cu_k), scale, causal, ("long", d, causal))


@pytest.mark.parametrize("d", [64, 128, 256])
def test_short_max_seqlen_still_computes_every_row(gpu, varlen, d):
    """A max_seqlen_q below the longest sequence (here one query block's slot for 1000 rows): fewer
    blocks, each walking its sequence's query blocks a grid's slots apart; every row still right."""
    torch = gpu
    lens = [(1000, 800), (300, 300), (17, 1000)]
    q, k, v, cu_q, cu_k = packed_inputs(torch, torch.bfloat16, lens, 4, 2, d, seed=3 * d)
    for max_q in (1, 200):
        o, lse = run(torch, host_for(varlen, True), q, k, v, cu_q, cu_k, max_q, 0.1, True)
        check(torch, o, lse, q, k, v, segments(cu_q, cu_k), 0.1, True, ("max_seqlen_q", d, max_q))


@pytest.mark.parametrize("d", [64, 128, 256])
def test_equal_lengths_match_the_fixed_length_kernel(gpu, varlen, cubin, d):
    """A packed batch of equal sequences is the fixed-length kernel's batch: the same tiles, the same
    instructions per tile, so the same bits (full attention: both files take the same instances)."""
    torch = gpu
    b, s, h = 3, 700, 4
    q, k, v, cu_q, cu_k = packed_inputs(torch, torch.float16, [(s, s)] * b, h, 2, d, seed=11)
    o, lse = run(torch, host_for(varlen, False), q, k, v, cu_q, cu_k, s, 0.1, False)
    fixed = cutec.load(cubin("flash_attention_sm90")).host("flash_attn_fwd")
    qb, kb, vb = (t[: b * s].reshape(b, s, t.shape[1], d) for t in (q, k, v))
    ob = torch.full_like(qb, float("nan"))
    lseb = torch.full((b, h, s), float("nan"), device="cuda", dtype=torch.float32)
    fixed(qb, kb, vb, ob, lseb, 0.1, 0)
    torch.cuda.synchronize()
    assert torch.equal(o[: b * s], ob.reshape(b * s, h, d))
    assert torch.equal(lse[:, : b * s], lseb.permute(1, 0, 2).reshape(h, b * s))


def test_bad_offsets_stay_inside_the_tensors(gpu, varlen):
    """Offsets out of range or decreasing are clamped in the kernel, each to [0, total] and each end
    to at least its start: no access outside Q, K, V, O and LSE (compute-sanitizer checks that in the
    GPU suite), and the sequences they leave are computed. (Decreasing query offsets make sequences
    overlap: their common rows are then either's; not checked here.)"""
    torch = gpu
    q, k, v, _, _ = packed_inputs(torch, torch.bfloat16, [(100, 100), (100, 100)], 4, 4, 128, seed=5)
    tq, tk = q.shape[0], k.shape[0]
    cu_q = torch.tensor([-50, 150, 150, 10**6], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, 10**6, -3, 7], dtype=torch.int32, device="cuda")
    o, lse = run(torch, host_for(varlen, False), q, k, v, cu_q, cu_k, 300, 0.1, False)
    # Clamped: sequence 0 is rows 0..150 over every key, 1 has no rows (and keys tk..tk), 2 is rows
    # 150..tq over keys 0..7.
    check(torch, o, lse, q, k, v, [(0, 150, 0, tk), (150, 150, tk, tk), (150, tq, 0, 7)], 0.1, False, "bad offsets")


def test_refuses_bad_shapes(gpu, varlen):
    torch = gpu
    host = varlen.host("flash_attn_varlen_fwd")
    q, k, v, cu_q, cu_k = packed_inputs(torch, torch.bfloat16, [(64, 64), (30, 30)], 4, 4, 64, seed=1)
    o = torch.empty_like(q)
    lse = torch.empty(4, q.shape[0], device="cuda")
    host.check(q, k, v, o, lse, cu_q, cu_k, 64, 0.125, 1)  # accepted: the calls below are the refusals
    bad = [
        (q, k, v, o, lse, cu_q, cu_k[:2], 64, 0.125, 1),  # cu_seqlens of different lengths
        (q, k, v, o, lse, cu_q, cu_k, 0, 0.125, 1),  # max_seqlen_q 0
        (q, k, v, o, lse.t(), cu_q, cu_k, 64, 0.125, 1),  # LSE (total_q, heads)
        (q, k[:, :3], v[:, :3], o, lse, cu_q, cu_k, 64, 0.125, 1),  # 4 heads over 3 K/V heads
        (q, k, v, o, lse, cu_q, cu_k, 64, 0.125, 2),  # causal 2
    ]
    for args in bad:
        with pytest.raises(cutec.Refused):
            host.check(*args)
