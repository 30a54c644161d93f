"""Decoding attention (few queries over a long K/V): samples/flash_attention_decode_sm90.cute's split
K/V beside torch's scaled_dot_product_attention with each backend torch has (cuDNN, flash,
memory-efficient; `enable_gqa=True`) and, with --fixed, the forward of samples/flash_attention_sm90.cute
(a block per query tile and head, no split). Timed with bench.py's method (CUDA events per call
behind a sleep kernel, inputs rotated over enough sets to miss the L2, median over rounds taken
round-robin), each checked against torch first (relative error of O).

    python3 bench/attention_decode.py DECODE_CUBIN [DECODE_CUBIN ...] [--fixed FIXED_CUBIN]
        [--cells 1x16384,1x65536,8x8192,32x4096,64x4096] [--heads 32,8] [--dims 128] [--seqlen-q 1] [--rounds 3]

A cell BxS is a batch of B sequences of S keys; --heads H,HKV the query and K/V heads (32,8: GQA 4,
as Llama 3 8B). --page P times `flash_attn_decode_paged` instead (the CUBINs then builds of
samples/flash_attention_decode_paged_sm90.cute), over a paged cache of P-key pages in shuffled
order (the same keys). --window W times the `_window` host functions with the window (W, 0) over
one query a sequence, beside torch on the last W + 1 keys (the same attention: the rate counts
those keys). A build that refuses a cell (pages it does not take) is left out of it. Decoding is
memory-bound: the rate is the bytes of K and V read (and Q, O written)
per second, TB/s, against the H100's ~3.35 TB/s of HBM3; the ratio is to the best torch backend.
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402
from attention import checked_peer, torch_backends, torch_setup  # noqa: E402

SUMMARY = []


def paged(torch, k, v, page):
    """k, v (B, S, Hkv, D) as a paged cache of `page`-key pages in shuffled order, and its table."""
    b, s, hkv, d = k.shape
    perm = torch.randperm(b * s // page, device="cuda")
    kp, vp = (t.reshape(b * s // page, page, hkv, d)[perm].contiguous() for t in (k, v))
    table = torch.argsort(perm).to(torch.int32).view(b, s // page)
    return kp, vp, table


def cell(torch, cutec, decoders, fixed, env, b, s, heads, d, sq, dtype, rounds, l2, page, window):
    from torch.nn.attention import sdpa_kernel

    h, hkv = heads
    scale = d**-0.5
    seen = s if window is None else min(window + 1, s)  # the keys a query sees (and torch reads)
    wsides = None if window is None else (window, 0)
    mask = wsides or (0,)
    splits = cutec.attention.decode_splits(b, sq, h, hkv, d, s, paged=page is not None, window=wsides)
    kv_bytes = 2 * b * seen * hkv * d * dtype.itemsize
    io_bytes = kv_bytes + 2 * b * sq * h * d * dtype.itemsize
    sets = []
    for _ in range(B.n_rotations(io_bytes, l2)):
        q = torch.randn(b, sq, h, d, device="cuda", dtype=dtype)
        k, v = (torch.randn(b, s, hkv, d, device="cuda", dtype=dtype) for _ in range(2))
        ws = (
            torch.empty(splits, b, sq, h, d, device="cuda"),
            torch.empty(splits, b, h, sq, device="cuda"),
        )
        ws += (torch.full((b,), s, device="cuda", dtype=torch.int32),)  # cache_seqlens: every key
        ws += (torch.zeros(cutec.attention.decode_tiles(b, sq, h, hkv), device="cuda", dtype=torch.int32),)
        o = torch.empty_like(q)
        lse = torch.empty(b, h, sq, device="cuda")
        if page is not None:  # the paged host's arguments: the pages, and the table after cache_seqlens
            kp, vp, table = paged(torch, k, v, page)
            ours = (q, kp, vp, o, lse, (*ws[:3], table, ws[3]))
        else:
            ours = (q, k, v, o, lse, ws)
        # torch's own layout, (batch, heads, seqlen, D), as views of the same tensors.
        sets.append((*ours, tuple(t.transpose(1, 2) for t in (q, k[:, s - seen :], v[:, s - seen :]))))
    impls, outs = [], {}
    for label, host in decoders:
        t = sets[0]
        try:
            host(*t[:5], *t[5], scale, *mask)
        except cutec.Refused as e:
            print(f"  {label}: refused ({str(e).splitlines()[0][:80]})")
            continue
        impls.append((label, [lambda t=t, f=host: f(*t[:5], *t[5], scale, *mask) for t in sets]))
        outs[label] = t[3].transpose(1, 2).float().clone()
    if fixed is not None:
        impls.append(("fixed forward", [lambda t=t: fixed(*t[:5], scale, 0) for t in sets]))
        t = sets[0]
        fixed(*t[:5], scale, 0)
        outs["fixed forward"] = t[3].transpose(1, 2).float().clone()
    errs, ref = {}, None
    for label, backend in torch_backends(torch):

        def call(t, backend=backend):
            with sdpa_kernel(backend):
                return torch.nn.functional.scaled_dot_product_attention(*t[6], scale=scale, enable_gqa=hkv != h)

        available, ref = checked_peer(label, lambda c=call: c(sets[0]), ref, outs, errs)
        if available:
            impls.append((label, [lambda t=t, c=call: c(t) for t in sets]))
    rates = B.round_robin_tflops(env, impls, io_bytes, rounds, min_reps=20, max_reps=200)  # TB/s
    ours = list(outs)
    name = (
        f"B{b} S{s} H{h}/{hkv} D{d} Sq{sq}"
        + (f" page{page}" if page else "")
        + (f" window{window}" if window is not None else "")
    )
    print(f"== {name} {str(dtype).removeprefix('torch.')}")
    best = max((statistics.median(v) for k, v in rates.items() if k not in ours), default=float("nan"))
    for label, each in rates.items():
        tb = statistics.median(each)
        us = io_bytes / (tb * 1e12) * 1e6
        err = errs.get(label)
        err_s = f"relerr {err:.2e}" if err is not None else "unchecked"
        spread = " ".join(f"{x:.2f}" for x in each)
        print(
            f"  {label:24s} {tb:5.2f} TB/s {us:8.1f} us  {tb / best:5.3f} of the best peer  {err_s}  rounds: {spread}"
        )
    SUMMARY.append((name, {label: statistics.median(v) for label, v in rates.items()}, ours, best))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cubins", nargs="+", help="builds of samples/flash_attention_decode_sm90.cute")
    ap.add_argument("--fixed", help="a build of samples/flash_attention_sm90.cute, timed beside")
    ap.add_argument("--cells", default="1x16384,1x65536,8x8192,32x4096,64x4096", help="BATCHxSEQLEN_K, ...")
    ap.add_argument("--heads", default="32,8", help="query heads, K/V heads")
    ap.add_argument("--dims", default="128")
    ap.add_argument("--seqlen-q", type=int, default=1)
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--page", type=int, help="time flash_attn_decode_paged over pages of this many keys")
    ap.add_argument("--window", type=int, help="time the _window hosts with the window (W, 0), one query a sequence")
    a = ap.parse_args()
    if (a.page or a.window is not None) and a.fixed:
        ap.error("--fixed compares contiguous caches without a window: leave it out with --page or --window")
    if a.window is not None and (a.seqlen_q != 1 or a.window < 0):
        ap.error("--window W: one query a sequence (--seqlen-q 1), W at least 0")
    import cutec
    import cutec.attention

    torch, env, dtype, l2 = torch_setup(a.dtype)
    host = "flash_attn_decode" + ("_paged" if a.page else "") + ("_window" if a.window is not None else "")
    decoders = [(os.path.basename(p).removesuffix(".cubin"), cutec.load(p).host(host)) for p in a.cubins]
    fixed = cutec.load(a.fixed).host("flash_attn_fwd") if a.fixed else None
    heads = tuple(map(int, a.heads.split(",")))
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}")
    for d in map(int, a.dims.split(",")):
        for c in a.cells.split(","):
            b, s = map(int, c.split("x"))
            cell(torch, cutec, decoders, fixed, env, b, s, heads, d, a.seqlen_q, dtype, a.rounds, l2, a.page, a.window)
    print("\n== summary: TB/s (median over the rounds); ratio = cutec / the best torch backend")
    for name, medians, ours, best in SUMMARY:
        parts = " | ".join(f"{label} {tb:.2f}" for label, tb in medians.items())
        ratios = ", ".join(f"{label} {medians[label] / best:.3f}" for label in ours)
        print(f"  {name:30s} {parts}   ratio: {ratios}")


if __name__ == "__main__":
    main()
