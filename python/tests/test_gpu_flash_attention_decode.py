"""samples/flash_attention_decode_sm90.cute (issue 34): split-K/V attention for decoding (few queries
over a long K/V cache, the query heads of a K/V head packed into its query tiles), O and LSE against the
reference of test_gpu_flash_attention.py (SDPA and logsumexp in float32, float64 where small) with
its tolerances, over contiguous and paged caches, and with the causal mask or a sliding window over
the cache against a float64 reference of its own (`masked_reference`). The splits are the host
function's choice for the workspace it is given (`cutec.attention.decode_splits`): one split writes O and LSE itself, more are merged by each
tile's last split, so the tests give workspaces of one to many splits. Outputs and workspaces are
poisoned with NaN before the call: an element left unwritten, or a partial the merge reads that no
split wrote, fails; the tile counters must be back at zero after every call. Needs an sm_90 GPU and
torch (skipped otherwise)."""

import math

import pytest

import cutec
import cutec.attention
from test_gpu_flash_attention import LSE_TOL, TOL, inputs, require_hopper
from test_gpu_flash_attention import check as check_attention

# (seqlen_q, seqlen_k): one query over keys from one to 16k, a few queries (speculative decoding),
# tails of the 128- and 80-key tiles; 17 and 40 queries of 8 heads fill more than one 64-row tile.
SEQLENS = [(1, 1), (1, 17), (1, 128), (1, 1000), (1, 4096), (1, 16384), (2, 1000), (5, 4097), (17, 300), (40, 1000)]


@pytest.fixture(scope="module")
def decode(gpu, cubin):
    require_hopper(gpu)
    return cutec.load(cubin("flash_attention_decode_sm90"))


@pytest.fixture(scope="module")
def paged_decode(gpu, cubin):
    require_hopper(gpu)
    return cutec.load(cubin("flash_attention_decode_paged_sm90"))


def run(torch, module, q, k, v, scale, splits, lengths=None, causal=0, window=None):
    """The host call with a workspace of `splits` splits and cache_seqlens `lengths` (default: every
    key), outputs and workspaces NaN; `window` (left, right): flash_attn_decode_window's."""
    b, sq, h, d = q.shape
    lengths = lengths if lengths is not None else [k.shape[1]] * b
    cache_seqlens = torch.tensor(lengths, device="cuda", dtype=torch.int32)
    counters = torch.zeros(cutec.attention.decode_tiles(b, sq, h, k.shape[2]), device="cuda", dtype=torch.int32)
    nan = float("nan")
    o = torch.full_like(q, nan)
    lse = torch.full((b, h, sq), nan, device="cuda", dtype=torch.float32)
    o_acc = torch.full((splits, b, sq, h, d), nan, device="cuda", dtype=torch.float32)
    lse_acc = torch.full((splits, b, h, sq), nan, device="cuda", dtype=torch.float32)
    if window is None:
        module.host("flash_attn_decode")(q, k, v, o, lse, o_acc, lse_acc, cache_seqlens, counters, scale, causal)
    else:
        host = module.host("flash_attn_decode_window")
        host(q, k, v, o, lse, o_acc, lse_acc, cache_seqlens, counters, scale, *window)
    torch.cuda.synchronize()
    assert int(counters.abs().sum()) == 0, "the tile counters are not back at zero"
    return o, lse


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("gqa", [1, 4, 8], ids=["mha", "gqa4", "gqa8"])
@pytest.mark.parametrize("seqlens", SEQLENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_decode(gpu, decode, dtype, d, gqa, seqlens):
    torch = gpu
    sq, sk = seqlens
    b, h = 2, 8
    q, k, v = inputs(torch, getattr(torch, dtype), b, sq, sk, h, h // gqa, d)
    scale = 1.0 / math.sqrt(d)
    splits = cutec.attention.decode_splits(b, sq, h, h // gqa, d, sk)
    o, lse = run(torch, decode, q, k, v, scale, splits)
    check_attention(torch, o, lse, q, k, v, scale, False, ("decode", dtype, d, gqa, seqlens, splits))


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("most", [1, 2, 3, 7, 200])
def test_workspace_bounds_splits(gpu, decode, d, most):
    """A workspace of `most` splits: one (no merge), uneven shares (3 and 7 splits of 8-13 K tiles),
    more than the heuristic wants (200: the kernel takes its own count, the rest unread)."""
    torch = gpu
    q, k, v = inputs(torch, torch.bfloat16, 1, 1, 1000, 16, 2, d)
    o, lse = run(torch, decode, q, k, v, 0.1, most)
    check_attention(torch, o, lse, q, k, v, 0.1, False, ("splits", d, most))


# Caches of 8192 keys, each batch's own length: none, one, tails, a split's share and less, all,
# and out-of-range lengths (clamped: -5 none, 10**6 all).
CACHE_LENGTHS = [0, 1, 17, 200, 1000, 4097, 8191, 8192, -5, 10**6]


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("gqa", [1, 8], ids=["mha", "gqa8"])
@pytest.mark.parametrize("sq", [1, 3])
def test_cache_seqlens(gpu, decode, d, gqa, sq):
    """Batch b sees its first cache_seqlens[b] keys: each against the reference over those keys; a
    batch with none gets O = 0 and LSE = -inf."""
    torch = gpu
    b, h, sk = len(CACHE_LENGTHS), 8, 8192
    q, k, v = inputs(torch, torch.bfloat16, b, sq, sk, h, h // gqa, d)
    splits = cutec.attention.decode_splits(b, sq, h, h // gqa, d, sk)
    o, lse = run(torch, decode, q, k, v, 0.1, splits, CACHE_LENGTHS)
    check_each(torch, o, lse, q, k, v, 0.1, CACHE_LENGTHS, ("cache", d, gqa, sq, splits))


def check_each(torch, o, lse, q, k, v, scale, lengths, case):
    """O and LSE of each sequence i against the reference over its first lengths[i] keys (clamped
    to the cache's, as the kernel clamps cache_seqlens): a sequence with none has O = 0 and LSE =
    -inf."""
    for i, n in enumerate(lengths):
        keys = min(max(n, 0), k.shape[1])
        if keys == 0:
            assert bool((o[i] == 0).all()) and bool((lse[i] == float("-inf")).all()), (*case, n)
            continue
        sl = slice(i, i + 1)
        check_attention(torch, o[sl], lse[sl], q[sl], k[sl, :keys], v[sl, :keys], scale, False, (*case, n))


def masked_reference(torch, q, k, v, scale, lengths, window=(-1, 0)):
    """O (1, Sq, H, D) and LSE (1, H, Sq) in float64 of each sequence b over its first lengths[b]
    keys, query i seeing keys up to lengths[b] - Sq + i (bottom-right aligned; rows that see none:
    O = 0, LSE = -inf), or None for a sequence with no key. `window` (left, right), -1 unbounded:
    the keys from that position - left to it + right."""
    out = []
    sq, group = q.shape[1], q.shape[2] // k.shape[2]
    for b, n in enumerate(lengths):
        n = min(max(n, 0), k.shape[1])
        if n == 0:
            out.append(None)
            continue
        qt = q[b].double().transpose(0, 1)  # (H, Sq, D)
        kt, vt = (t[b, :n].double().transpose(0, 1).repeat_interleave(group, dim=0) for t in (k, v))
        s = (qt @ kt.transpose(-1, -2)) * scale
        i = torch.arange(sq, device=q.device)[:, None]
        j = torch.arange(n, device=q.device)[None, :]
        left, right = window
        if right != -1:
            s = s.masked_fill(j > n - sq + i + right, float("-inf"))
        if left != -1:
            s = s.masked_fill(j < n - sq + i - left, float("-inf"))
        lse = torch.logsumexp(s, dim=-1)
        p = torch.exp(s - lse[..., None]).nan_to_num(0.0)  # rows of -inf: 0
        out.append(((p @ vt).transpose(0, 1)[None], lse[None]))
    return out


CAUSAL_LENGTHS = [0, 1, 3, 5, 17, 300, 4096]


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("gqa", [1, 4, 8], ids=["mha", "gqa4", "gqa8"])
@pytest.mark.parametrize("sq", [1, 5, 17])
def test_causal(gpu, decode, d, gqa, sq):
    """Causal decoding (speculative tokens): query i of a sequence of L cached keys sees keys up to
    L - Sq + i; with L < Sq the first queries see none (O = 0, LSE = -inf)."""
    torch = gpu
    b, h = len(CAUSAL_LENGTHS), 8
    q, k, v = inputs(torch, torch.bfloat16, b, sq, 4096, h, h // gqa, d)
    splits = cutec.attention.decode_splits(b, sq, h, h // gqa, d, 4096)
    o, lse = run(torch, decode, q, k, v, 0.1, splits, CAUSAL_LENGTHS, causal=1)
    check_masked(torch, o, lse, masked_reference(torch, q, k, v, 0.1, CAUSAL_LENGTHS), ("causal", d, gqa, sq))


def check_masked(torch, o, lse, refs, case):
    """O and LSE of each sequence against its float64 reference (`masked_reference`) with the
    bf16 tolerances: rows that see no key have LSE -inf (and O 0), a sequence with none O 0."""
    atol, rtol = TOL["bfloat16"]
    for i, ref in enumerate(refs):
        if ref is None:
            assert bool((o[i] == 0).all()) and bool((lse[i] == float("-inf")).all()), (*case, i)
            continue
        ref_o, ref_lse = ref  # (1, sq, h, d), (1, h, sq)
        seen = torch.isfinite(ref_lse[0])  # rows that see a key
        err = (o[i].to(ref_o.dtype) - ref_o[0]).abs()
        assert bool((err <= atol + rtol * ref_o[0].abs()).all()), (*case, i, float(err.max()))
        assert bool((lse[i][~seen] == float("-inf")).all()), (*case, i)
        lerr = (lse[i].to(ref_lse.dtype) - ref_lse[0]).abs()[seen]
        assert bool((lerr <= LSE_TOL[0] + LSE_TOL[1] * ref_lse[0].abs()[seen]).all()), (*case, i, float(lerr.max()))


def paged_cache(torch, k, v, page, lengths, seed):
    """k, v (B, S, Hkv, D) as a paged cache: (pages, page, Hkv, D) with each sequence's pages at
    shuffled places, two spare pages, and a block table (B, ceil(S / page)) whose entries past a
    sequence's length are garbage (-1, past the cache, huge): the kernel must not read them."""
    b, s, hkv, d = k.shape
    per = -(-s // page)
    n = b * per + 2
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))[: b * per].view(b, per)
    kp = torch.zeros(n, page, hkv, d, dtype=k.dtype, device="cuda")
    vp = torch.zeros_like(kp)
    for i in range(b):
        for j in range(per):
            rows = slice(j * page, min((j + 1) * page, s))
            kp[perm[i, j], : rows.stop - rows.start] = k[i, rows]
            vp[perm[i, j], : rows.stop - rows.start] = v[i, rows]
    table = perm.clone().to(torch.int32)
    junk = [-1, n + 5, 2**30]
    for i, length in enumerate(lengths):
        for j in range(-(-max(min(length, s), 0) // page), per):
            table[i, j] = junk[(i + j) % 3]
    return kp, vp, table.cuda()


PAGED_LENGTHS = [0, 1, 63, 64, 65, 700, 2000, 2048]


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("gqa", [1, 8], ids=["mha", "gqa8"])
@pytest.mark.parametrize("page", [16, 48, 64, 128, 256])
def test_paged(gpu, paged_decode, d, gqa, page):
    """flash_attn_decode_paged over a shuffled paged cache against the reference on each sequence's
    keys, through cutec.attention.decode (its workspaces and counters)."""
    torch = gpu
    b, h, s = len(PAGED_LENGTHS), 8, 2048
    q, k, v = inputs(torch, torch.bfloat16, b, 1, s, h, h // gqa, d)
    kp, vp, table = paged_cache(torch, k, v, page, PAGED_LENGTHS, page + d + gqa)
    lengths = torch.tensor(PAGED_LENGTHS, device="cuda", dtype=torch.int32)
    o, lse = cutec.attention.decode(
        paged_decode, q, kp, vp, cache_seqlens=lengths, softmax_scale=0.1, block_table=table
    )
    torch.cuda.synchronize()
    check_each(torch, o, lse, q, k, v, 0.1, PAGED_LENGTHS, ("paged", d, gqa, page))


WINDOW_LENGTHS = [0, 1, 5, 300, 1000, 4096]


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("gqa", [1, 8], ids=["mha", "gqa8"])
@pytest.mark.parametrize("sq", [1, 5])
@pytest.mark.parametrize("window", [(0, 0), (100, 0), (1000, 0), (300, 2), (257, -1), (-1, 0), (-1, -1)])
def test_window(gpu, decode, d, gqa, sq, window):
    """Sliding-window decoding (flash_attn_decode_window): query i of a sequence of L keys sees keys
    L - Sq + i - left .. L - Sq + i + right, against the float64 reference, over cache lengths
    shorter than the window and the queries and far longer; (-1, 0) is the causal mask, (-1, -1)
    every key. Workspaces of the splits cutec.attention.decode_splits predicts for the window."""
    torch = gpu
    b, h = len(WINDOW_LENGTHS), 8
    q, k, v = inputs(torch, torch.bfloat16, b, sq, 4096, h, h // gqa, d)
    splits = cutec.attention.decode_splits(b, sq, h, h // gqa, d, 4096, window=window)
    o, lse = run(torch, decode, q, k, v, 0.1, splits, WINDOW_LENGTHS, window=window)
    refs = masked_reference(torch, q, k, v, 0.1, WINDOW_LENGTHS, window)
    check_masked(torch, o, lse, refs, ("window", window, d, gqa, sq))


@pytest.mark.parametrize("window", [(16, 0), (700, 0)])
def test_paged_window(gpu, paged_decode, window):
    """flash_attn_decode_paged_window through cutec.attention.decode over 16-key pages."""
    torch = gpu
    lengths_list = [1, 17, 999, 2048]
    b, h, s, d = len(lengths_list), 8, 2048, 128
    q, k, v = inputs(torch, torch.bfloat16, b, 3, s, h, 2, d)
    kp, vp, table = paged_cache(torch, k, v, 16, lengths_list, 16)
    lengths = torch.tensor(lengths_list, device="cuda", dtype=torch.int32)
    o, lse = cutec.attention.decode(
        paged_decode, q, kp, vp, cache_seqlens=lengths, softmax_scale=0.1, block_table=table, window=window
    )
    torch.cuda.synchronize()
    check_masked(torch, o, lse, masked_reference(torch, q, k, v, 0.1, lengths_list, window), ("paged window", window))


def test_window_refusals(gpu, decode):
    """A side below -1, and causal with a window, are refused."""
    torch = gpu
    q, k, v = inputs(torch, torch.bfloat16, 1, 1, 512, 8, 2, 128)
    with pytest.raises(cutec.Refused):
        cutec.attention.decode(decode, q, k, v, window=(-2, 0))
    with pytest.raises(ValueError):
        cutec.attention.decode(decode, q, k, v, window=(8, 0), causal=True)


@pytest.mark.parametrize("page", [16, 48])
def test_paged_table_ends_inside_a_tile(gpu, paged_decode, page):
    """A table of 1008 keys (63 pages of 16, 21 of 48) ends inside the last 64-key tile: the boxes
    past its last page must read zeros (no table column past max_pages is read), and sequences
    ending in that tile see only their keys."""
    torch = gpu
    lengths_list = [1, 17, 999, 1000, 1008]
    b, h, s, d = len(lengths_list), 8, 1008, 128
    q, k, v = inputs(torch, torch.bfloat16, b, 1, s, h, 2, d)
    kp, vp, table = paged_cache(torch, k, v, page, lengths_list, page)
    lengths = torch.tensor(lengths_list, device="cuda", dtype=torch.int32)
    o, lse = cutec.attention.decode(
        paged_decode, q, kp, vp, cache_seqlens=lengths, softmax_scale=0.1, block_table=table
    )
    torch.cuda.synchronize()
    check_each(torch, o, lse, q, k, v, 0.1, lengths_list, ("end", page))


def test_paged_refuses_pages_of_other_sizes(gpu, paged_decode):
    torch = gpu
    q, k, v = inputs(torch, torch.bfloat16, 2, 1, 24, 8, 2, 128)  # pages of 24 keys
    table = torch.zeros(2, 4, device="cuda", dtype=torch.int32)
    with pytest.raises(cutec.Refused):
        cutec.attention.decode(paged_decode, q, k, v, block_table=table)


def test_python_api_on_bhsd_views(gpu, decode):
    """cutec.attention.decode on (B, H, S, D) tensors passed as their transposes, a batch of 3."""
    torch = gpu
    qb = torch.randn(3, 32, 1, 128, device="cuda").to(torch.bfloat16)
    kb = torch.randn(3, 8, 5000, 128, device="cuda").to(torch.bfloat16)
    vb = torch.randn(3, 8, 5000, 128, device="cuda").to(torch.bfloat16)
    q, k, v = (t.transpose(1, 2) for t in (qb, kb, vb))
    o, lse = cutec.attention.decode(decode, q, k, v)
    torch.cuda.synchronize()
    check_attention(torch, o, lse, q, k, v, 128**-0.5, False, "api")
    lengths = torch.tensor([5000, 100, 3333], device="cuda", dtype=torch.int32)
    o, lse = cutec.attention.decode(decode, q, k, v, cache_seqlens=lengths, max_splits=4)
    torch.cuda.synchronize()
    check_each(torch, o, lse, q, k, v, 128**-0.5, lengths.tolist(), ("api",))


def test_refuses_bad_workspaces(gpu, decode):
    torch = gpu
    q, k, v = inputs(torch, torch.bfloat16, 2, 1, 512, 8, 2, 128)
    o = torch.empty_like(q)
    lse = torch.empty(2, 8, 1, device="cuda")
    host = decode.host("flash_attn_decode")
    lengths = torch.full((2,), 512, device="cuda", dtype=torch.int32)
    counters = torch.zeros(4, device="cuda", dtype=torch.int32)  # 2 batches x 2 K/V heads: 4 tiles
    ws = torch.empty(4, 2, 1, 8, 128, device="cuda"), torch.empty(4, 2, 8, 1, device="cuda")
    host.check(q, k, v, o, lse, *ws, lengths, counters, 0.125, 0)  # accepted: the rest are the refusals
    with pytest.raises(cutec.Refused):
        host.check(q, k, v, o, lse, *ws, lengths, counters, 0.125, 2)  # causal 2
    for o_acc, lse_acc, n, c in (
        ((4, 2, 1, 8, 64), (4, 2, 8, 1), 2, 4),  # head_dim
        ((4, 2, 1, 8, 128), (3, 2, 8, 1), 2, 4),  # splits differ
        ((0, 2, 1, 8, 128), (0, 2, 8, 1), 2, 4),  # no split
        ((4, 2, 1, 8, 128), (4, 2, 8, 1), 1, 4),  # one length for two sequences
        ((4, 2, 1, 8, 128), (4, 2, 8, 1), 2, 3),  # a counter short
    ):
        ws = torch.empty(o_acc, device="cuda"), torch.empty(lse_acc, device="cuda")
        with pytest.raises(cutec.Refused):
            host.check(q, k, v, o, lse, *ws, lengths[:n], counters[:c], 0.125, 0)
