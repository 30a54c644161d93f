"""FlashAttention as PyTorch autograd functions, on the cubins of cutec's attention samples.

    import cutec, cutec.attention, torch
    attn = cutec.attention.FlashAttention(cutec.load("flash_attention_sm90.cubin"),
                                          cutec.load("flash_attention_bwd_sm90.cubin"))
    o = attn(q, k, v, causal=True)          # q (B, Sq, H, D), k, v (B, Sk, Hkv, D); head_dim contiguous
    o.backward(do)                          # dQ, dK, dV from the backward sample

    varlen = cutec.attention.FlashAttentionVarlen(cutec.load("flash_attention_varlen_sm90.cubin"),
                                                  cutec.load("flash_attention_varlen_bwd_sm90.cubin"))
    o = varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal=True)

    dec = cutec.load("flash_attention_decode_sm90.cubin")
    o, lse = cutec.attention.decode(dec, q, k_cache, v_cache, cache_seqlens)   # split-KV decoding
    paged = cutec.load("flash_attention_decode_paged_sm90.cubin")
    o, lse = cutec.attention.decode(paged, q, k_pages, v_pages, cache_seqlens, block_table=table)

The forward and backward are the samples' host functions (`flash_attn_fwd`, `flash_attn_bwd`, their
`_window` and `_varlen` forms; docs/tutorial.md §18), called on torch's current stream and checked
like every host call (a refused call raises `cutec.Refused`). The forward saves Q, K, V, O and the
log-sum-exp for the backward, which allocates its f32 workspaces itself. `causal` is torch's
`is_causal` (top-left aligned), `window=(left, right)` a sliding window (-1 unbounded; causal is
(-1, 0)), `softmax_scale` defaults to head_dim^-0.5. Tensors whose head_dim is not contiguous are
copied first. Without a backward module the forward still runs, and a backward through it raises.
"""

_functions = {}  # the torch.autograd.Function classes, made on first use (torch is imported then)


def _masking(causal, window):
    """The host functions' name suffix and last arguments: `causal` (0/1) or the window's sides."""
    if window is None:
        return "", (int(bool(causal)),)
    if causal:
        raise ValueError("give causal=True or a window, not both (causal attention is the window (-1, 0))")
    left, right = window
    return "_window", (int(left), int(right))


def _contiguous_head_dim(t):
    return t if t.stride(-1) == 1 else t.contiguous()


def _backward_host(module, name):
    if module is None:
        raise RuntimeError(f"no backward module was given: cannot differentiate through {name}")
    return module.host(name)


def _function(kind):
    """The autograd function of `kind` ("fixed" or "varlen"), made once."""
    if kind in _functions:
        return _functions[kind]
    import torch

    class Fixed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, hosts, scale, mask):
            q, k, v = (_contiguous_head_dim(t) for t in (q, k, v))
            b, sq, h, _ = q.shape
            o = torch.empty_like(q)
            lse = torch.empty(b, h, sq, device=q.device, dtype=torch.float32)
            hosts[0](q, k, v, o, lse, scale, *mask)
            ctx.save_for_backward(q, k, v, o, lse)
            ctx.call = (hosts[1], scale, mask)
            return o

        @staticmethod
        def backward(ctx, do):
            bwd, scale, mask = ctx.call
            q, k, v, o, lse = ctx.saved_tensors
            b, sq, h, d = q.shape
            dq, dk, dv = (torch.empty_like(t) for t in (q, k, v))
            rows = -(-sq // 64) * 64  # seqlen_q padded to the backward's 64-row tiles
            dq_accum = torch.empty(b, h, rows * d, device=q.device, dtype=torch.float32)
            stats = torch.empty(b, h, 2, rows, device=q.device, dtype=torch.float32)
            bwd()(q, k, v, o, _contiguous_head_dim(do), lse, dq, dk, dv, dq_accum, stats, scale, *mask)
            return dq, dk, dv, None, None, None

    class Varlen(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, cu_q, cu_k, max_q, max_k, hosts, scale, mask):
            q, k, v = (_contiguous_head_dim(t) for t in (q, k, v))
            o = torch.empty_like(q)
            lse = torch.empty(q.shape[1], q.shape[0], device=q.device, dtype=torch.float32)
            hosts[0](q, k, v, o, lse, cu_q, cu_k, max_q, scale, *mask)
            ctx.save_for_backward(q, k, v, o, lse, cu_q, cu_k)
            ctx.call = (hosts[1], max_q, max_k, scale, mask)
            return o

        @staticmethod
        def backward(ctx, do):
            bwd, max_q, max_k, scale, mask = ctx.call
            q, k, v, o, lse, cu_q, cu_k = ctx.saved_tensors
            total_q, h, d = q.shape
            dq, dk, dv = (torch.empty_like(t) for t in (q, k, v))
            # Each sequence's workspace rows start at a multiple of 128 (the sample's varlen_rows).
            rows = -(-total_q // 128) * 128 + 128 * (cu_q.shape[0] - 1)
            dq_accum = torch.empty(h, rows * d, device=q.device, dtype=torch.float32)
            stats = torch.empty(h, 2, rows, device=q.device, dtype=torch.float32)
            args = (dq, dk, dv, dq_accum, stats, cu_q, cu_k, max_q, max_k, scale, *mask)
            bwd()(q, k, v, o, _contiguous_head_dim(do), lse, *args)
            return dq, dk, dv, None, None, None, None, None, None, None

    _functions.update(fixed=Fixed, varlen=Varlen)
    return _functions[kind]


class FlashAttention:
    """Attention over (batch, seqlen, heads, head_dim) tensors: `forward` is a module of
    samples/flash_attention_sm90.cute (`cutec.load(...)`), `backward` one of
    samples/flash_attention_bwd_sm90.cute (or None: no gradients)."""

    def __init__(self, forward, backward=None):
        self.forward, self.backward = forward, backward

    def __call__(self, q, k, v, causal=False, window=None, softmax_scale=None):
        suffix, mask = _masking(causal, window)
        scale = float(softmax_scale) if softmax_scale is not None else q.shape[-1] ** -0.5
        fwd = self.forward.host("flash_attn_fwd" + suffix)
        bwd_name = "flash_attn_bwd" + suffix
        hosts = (fwd, lambda: _backward_host(self.backward, bwd_name))
        return _function("fixed").apply(q, k, v, hosts, scale, mask)


class FlashAttentionVarlen:
    """Attention over packed variable-length sequences (flash-attn's `flash_attn_varlen_func`): Q
    (total_q, heads, head_dim), K, V (total_k, kv_heads, head_dim), `cu_seqlens_q`/`cu_seqlens_k`
    int32 offsets (batch + 1) on the GPU, `max_seqlen_q`/`max_seqlen_k` the longest lengths.
    `forward`: a module of samples/flash_attention_varlen_sm90.cute, `backward` one of
    samples/flash_attention_varlen_bwd_sm90.cute (or None)."""

    def __init__(self, forward, backward=None):
        self.forward, self.backward = forward, backward

    def __call__(
        self,
        q,
        k,
        v,
        cu_seqlens_q,
        cu_seqlens_k,
        max_seqlen_q,
        max_seqlen_k,
        causal=False,
        window=None,
        softmax_scale=None,
    ):
        suffix, mask = _masking(causal, window)
        scale = float(softmax_scale) if softmax_scale is not None else q.shape[-1] ** -0.5
        fwd = self.forward.host("flash_attn_varlen_fwd" + suffix)
        bwd_name = "flash_attn_varlen_bwd" + suffix
        hosts = (fwd, lambda: _backward_host(self.backward, bwd_name))
        lengths = (int(max_seqlen_q), int(max_seqlen_k))
        return _function("varlen").apply(q, k, v, cu_seqlens_q, cu_seqlens_k, *lengths, hosts, scale, mask)


# samples/flash_attention_decode_sm90.cute's constants: the SMs its splits fill, its query tile's rows.
_SMS = 132
_DECODE_ROWS = 64


def decode_tiles(batch, seqlen_q, heads, kv_heads):
    """The query tiles of a `flash_attn_decode` call (its `tile_counters` needs one entry each): the
    query heads of a K/V head share its 64-row tiles (GQA packing)."""
    return batch * kv_heads * -(-(heads // kv_heads * seqlen_q) // _DECODE_ROWS)


def decode_splits(batch, seqlen_q, heads, kv_heads, head_dim, seqlen_k, most=None, paged=False, window=None):
    """The splits `flash_attn_decode` (`paged`: `flash_attn_decode_paged`, whose K/V tiles are 64
    keys at head dim 256; `seqlen_k` the table's max_pages x page_size; `window` (left, right), -1
    unbounded: the `_window` hosts) takes for these extents given a workspace of `most` splits (the
    sample's `decode_splits`): enough blocks to fill the SMs once, at most one a K tile of the
    window's keys, and no split without tiles."""
    tiles = decode_tiles(batch, seqlen_q, heads, kv_heads)
    bn = 128 if head_dim <= 128 else 64 if paged else 80
    k_tiles = -(-seqlen_k // bn)
    if window is not None:
        left, right = (seqlen_k if side == -1 else min(side, seqlen_k) for side in window)
        k_tiles = min(k_tiles, -(-min(left + seqlen_q + right, seqlen_k) // bn) + 1)
    per_sm = 2 if paged and head_dim == 64 else 1  # the sample's decode_blocks_per_sm, for its splits
    want = min(max(_SMS * per_sm // tiles, 1), k_tiles, most or k_tiles)
    return -(-k_tiles // -(-k_tiles // want))


def decode(
    module,
    q,
    k,
    v,
    cache_seqlens=None,
    softmax_scale=None,
    max_splits=None,
    block_table=None,
    causal=False,
    window=None,
):
    """Attention of few queries over a long K/V cache (a decode step): q (B, Sq, H, D), k, v
    (B, Sk, Hkv, D), head_dim contiguous; batch b's queries see its first cache_seqlens[b] keys
    (an int32 tensor of B on the GPU; None: all Sk); `causal`: query i of a sequence of L keys sees
    keys up to L - Sq + i (flash-attn's causal over a K/V cache); `window` (left, right), a side -1
    where unbounded: query i sees keys L - Sq + i - left .. L - Sq + i + right (flash-attn's
    `window_size`; causal is (-1, 0)). With `block_table` (int32 (B, max_pages)) k and v are a
    paged cache (pages, page_size, Hkv, D), page_size a multiple of 16, sequence b's keys
    j·page_size.. in page block_table[b, j]. `module` is samples/flash_attention_decode_sm90.cute's
    (with `block_table`, samples/flash_attention_decode_paged_sm90.cute's). Returns O (B, Sq, H, D)
    and LSE (B, H, Sq) f32. The f32 workspaces of the split K/V are sized by `decode_splits` (at
    most `max_splits`) and allocated here; its tile counters are kept zeroed per (device, stream)
    (each call leaves them at zero). No autograd."""
    import torch

    if window is not None and causal:
        raise ValueError("give causal=True or window=(left, right), not both: causal is the window (-1, 0)")
    paged = block_table is not None
    cache_keys = block_table.shape[1] * k.shape[1] if paged else k.shape[1]
    if cache_seqlens is None:
        cache_seqlens = torch.full((q.shape[0],), cache_keys, device=q.device, dtype=torch.int32)

    q, k, v = (_contiguous_head_dim(t) for t in (q, k, v))
    b, sq, h, d = q.shape
    splits = decode_splits(b, sq, h, k.shape[2], d, cache_keys, max_splits, paged, window)
    o = torch.empty_like(q)
    lse = torch.empty(b, h, sq, device=q.device, dtype=torch.float32)
    o_accum = torch.empty(splits, b, sq, h, d, device=q.device, dtype=torch.float32)
    lse_accum = torch.empty(splits, b, h, sq, device=q.device, dtype=torch.float32)
    scale = float(softmax_scale) if softmax_scale is not None else d**-0.5
    counters = _tile_counters(torch, q.device, decode_tiles(b, sq, h, k.shape[2]))
    host = "flash_attn_decode" + ("_paged" if paged else "") + ("_window" if window is not None else "")
    mask = (int(window[0]), int(window[1])) if window is not None else (int(bool(causal)),)
    table = (block_table,) if paged else ()
    module.host(host)(q, k, v, o, lse, o_accum, lse_accum, cache_seqlens, *table, counters, scale, *mask)
    return o, lse


_counters = {}  # (device, stream) -> int32 zeros, grown as calls need


def _tile_counters(torch, device, n):
    """Zeroed tile counters for a decode call on the current stream: the kernel sets each back to 0,
    so one buffer serves every call on a stream (calls on different streams may overlap: each
    stream has its own)."""
    key = (str(device), torch.cuda.current_stream(device).cuda_stream)
    have = _counters.get(key)
    if have is None or have.numel() < n:
        have = torch.zeros(max(n, 1024), device=device, dtype=torch.int32)
        _counters[key] = have
    return have
