"""The variable-length attention forward of samples/flash_attention_varlen_sm90.cute beside torch's
scaled_dot_product_attention on nested jagged tensors (torch.nested's NJT: the packed (total, heads, D)
values and the offsets, which torch's flash and memory-efficient backends run as their varlen
kernels, zero-copy), timed with bench.py's method (CUDA events per call behind a sleep kernel, inputs
rotated over enough sets to miss the L2, median over rounds taken round-robin), each checked against
torch first (relative error of O).

    python3 bench/attention_varlen.py CUBIN [CUBIN ...] [--means 512,1024,2048,4096] [--dims 64,128,256] [--causal 0,1] [--rounds 3] [--fixed FIXED_CUBIN]

    python3 bench/attention_varlen.py --bwd --fwd FWD_CUBIN CUBIN [CUBIN ...] [same options]

Each CUBIN is a build of samples/flash_attention_varlen_sm90.cute (--bwd: of
flash_attention_varlen_bwd_sm90.cute, FWD_CUBIN one of the varlen forward, for O and LSE; timed: one
`flash_attn_varlen_bwd` call, its three kernels, beside torch.autograd.grad of the NJT forward with
the graph kept, TFLOP/s counting 2.5x the forward's FLOPs). A cell's batch: sequences of
lengths drawn uniformly from [MEAN / 2, 3 MEAN / 2] (seeded), as many as make 16k tokens, 16 heads,
seqlen_q = seqlen_k per sequence. TFLOP/s = 4 * H * D * sum(len²) / t, halved for causal (issue 34's
count). `--fixed`: a build of samples/flash_attention_sm90.cute timed on the same tokens as one
fixed-length batch of MEAN-long sequences (the varlen kernel's overhead beside the fixed-length one
at about the same work; its row counts its own FLOPs).
"""

import argparse
import math
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402
from attention import checked_peer, grid_args, torch_setup  # noqa: E402

TOKENS, HEADS = 16384, 16


def packed_batch(torch, mean, d):
    """A cell's sequence lengths (seeded by the cell) and their int32 offsets on the GPU."""
    lens = lengths(mean, seed=mean + d)
    offs = torch.tensor([0] + [sum(lens[: i + 1]) for i in range(len(lens))], dtype=torch.int32, device="cuda")
    return lens, offs


def jagged(torch, x, offs64, lens):
    """The packed (total, heads, D) `x` as torch's nested jagged (batch, heads, j, D), min and max lengths
    given (without them torch reads the max back from the GPU on every call). Q, K and V must share one
    `offs64` tensor (int64): torch matches their ragged dimension by it."""
    nt = torch.nested.nested_tensor_from_jagged(x, offs64, min_seqlen=min(lens), max_seqlen=max(lens))
    return nt.transpose(1, 2)


def lengths(mean, seed):
    rng = random.Random(seed)
    lens = []
    while sum(lens) < TOKENS:
        lens.append(rng.randint(mean // 2, 3 * mean // 2))
    return lens


def cell(torch, ours, fixed, env, mean, d, causal, dtype, rounds, l2):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    lens, offs = packed_batch(torch, mean, d)
    total = sum(lens)
    scale = 1.0 / math.sqrt(d)
    per_set = 4 * total * HEADS * d * dtype.itemsize + total * HEADS * 4
    sets = []
    for _ in range(B.n_rotations(per_set, l2)):
        q, k, v = (torch.randn(total, HEADS, d, device="cuda", dtype=dtype) for _ in range(3))
        o = torch.empty_like(q)
        lse = torch.empty(HEADS, total, device="cuda", dtype=torch.float32)
        sets.append((q, k, v, o, lse))
    max_len = max(lens)
    impls = [
        (label, [lambda t=t, f=f: f(*t, offs, offs, max_len, scale, int(causal)) for t in sets]) for label, f in ours
    ]
    outs = {}
    for label, f in ours:
        q, k, v, o, lse = sets[0]
        f(q, k, v, o, lse, offs, offs, max_len, scale, int(causal))
        outs[label] = o.float()
    if fixed is not None:
        b = total // mean
        fixed_lse = torch.empty(b, HEADS, mean, device="cuda", dtype=torch.float32)
        fsets = [tuple(x[: b * mean].view(b, mean, HEADS, d) for x in t[:4]) + (fixed_lse,) for t in sets]
        impls.append(("fixed-length", [lambda t=t: fixed(*t, scale, int(causal)) for t in fsets]))
    errs = {}
    ref = None
    offs64 = offs.to(torch.int64)
    nested = [tuple(jagged(torch, x, offs64, lens) for x in t[:3]) for t in sets]  # once per set
    for label, backend in (
        ("torch flash (njt)", SDPBackend.FLASH_ATTENTION),
        ("torch efficient (njt)", SDPBackend.EFFICIENT_ATTENTION),
    ):

        def call(n, backend=backend):
            with sdpa_kernel(backend):
                return torch.nn.functional.scaled_dot_product_attention(*n, is_causal=causal, scale=scale)

        available, ref = checked_peer(label, lambda c=call: c(nested[0]).transpose(1, 2).values(), ref, outs, errs)
        if available:
            impls.append((label, [lambda n=n, c=call: c(n) for n in nested]))
    flop = 4 * HEADS * d * sum(n * n for n in lens) * (0.5 if causal else 1.0)
    fixed_flop = 4 * HEADS * d * (total // mean) * mean * mean * (0.5 if causal else 1.0)
    name = f"{len(lens)} seqs mean {mean} (max {max_len}) H{HEADS} D{d} {'causal' if causal else 'full'}"
    report(env, impls, errs, flop, {"fixed-length": fixed_flop}, rounds, name, dtype)


def report(env, impls, errs, flop, own_flop, rounds, name, dtype):
    """Times the implementations round-robin and prints TFLOP/s beside the best torch backend's;
    `own_flop`: the rows that count FLOPs of their own (label: FLOPs)."""
    rates = B.round_robin_tflops(env, impls, flop, rounds, min_reps=10, max_reps=50)
    for label, f in own_flop.items():
        if label in rates:
            rates[label] = [r * f / flop for r in rates[label]]
    print(f"== {name} {str(dtype).removeprefix('torch.')}")
    peers = [statistics.median(v) for k, v in rates.items() if k.startswith("torch")]
    best_peer = max(peers, default=float("nan"))
    for label, each in rates.items():
        tf = statistics.median(each)
        err = errs.get(label)
        err_s = f"relerr {err:.2e}" if err is not None else "unchecked"
        spread = " ".join(f"{x:.0f}" for x in each)
        print(f"  {label:22s} {tf:7.1f} TFLOP/s  {tf / best_peer:5.3f} of the best peer  {err_s}  rounds: {spread}")
    SUMMARY.append((name, {label: statistics.median(each) for label, each in rates.items()}, best_peer))


SUMMARY = []


def cell_bwd(torch, bwds, fwd, env, mean, d, causal, dtype, rounds, l2):
    """One backward cell: cutec's flash_attn_varlen_bwd (O and LSE from the varlen forward `fwd`) beside
    torch's SDPA backward on nested jagged tensors (autograd of the forward, graph kept)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    lens, offs = packed_batch(torch, mean, d)
    total, batch, max_len = sum(lens), len(lens), max(lens)
    scale = 1.0 / math.sqrt(d)
    rows = -(-total // 128) * 128 + 128 * batch
    per_set = 8 * total * HEADS * d * dtype.itemsize + HEADS * rows * (d + 2) * 4
    sets = []
    for _ in range(B.n_rotations(per_set, l2)):
        q, k, v, do = (torch.randn(total, HEADS, d, device="cuda", dtype=dtype) for _ in range(4))
        o = torch.empty_like(q)
        lse = torch.empty(HEADS, total, device="cuda", dtype=torch.float32)
        fwd(q, k, v, o, lse, offs, offs, max_len, scale, int(causal))
        grads = tuple(torch.empty_like(t) for t in (q, k, v))
        ws = (torch.empty(HEADS, rows * d, device="cuda"), torch.empty(HEADS, 2, rows, device="cuda"))
        sets.append((q, k, v, o, do, lse, *grads, *ws))
    args = (offs, offs, max_len, max_len, scale, int(causal))
    impls = [(label, [lambda t=t, f=f: f(*t, *args) for t in sets]) for label, f in bwds]
    outs = {}
    for label, f in bwds:
        f(*sets[0], *args)
        outs[label] = sets[0][6].float()  # dQ
    errs = {}
    ref = None
    offs64 = offs.to(torch.int64)
    for label, backend in (
        ("torch flash (njt)", SDPBackend.FLASH_ATTENTION),
        ("torch efficient (njt)", SDPBackend.EFFICIENT_ATTENTION),
    ):
        graphs = []

        def first(backend=backend, graphs=graphs):
            for t in sets:
                leaves = tuple(x.detach().requires_grad_(True) for x in t[:3])
                nested = (jagged(torch, x, offs64, lens) for x in leaves)
                with sdpa_kernel(backend):
                    out = torch.nn.functional.scaled_dot_product_attention(*nested, is_causal=causal, scale=scale)
                graphs.append((out.transpose(1, 2).values(), leaves, t[4]))
            g = graphs[0]
            return torch.autograd.grad(g[0], g[1], g[2], retain_graph=True)[0]

        available, ref = checked_peer(label, first, ref, outs, errs)
        if available:
            calls = [lambda g=g: torch.autograd.grad(g[0], g[1], g[2], retain_graph=True) for g in graphs]
            impls.append((label, calls))
    flop = 2.5 * 4 * HEADS * d * sum(n * n for n in lens) * (0.5 if causal else 1.0)
    name = f"backward {batch} seqs mean {mean} (max {max_len}) H{HEADS} D{d} {'causal' if causal else 'full'}"
    report(env, impls, errs, flop, {}, rounds, name, dtype)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cubins", nargs="+", help="builds of samples/flash_attention_varlen_sm90.cute")
    grid_args(ap, "--means", "512,1024,2048,4096", "64,128,256")
    ap.add_argument("--fixed", help="a build of samples/flash_attention_sm90.cute, timed on MEAN-long sequences")
    ap.add_argument(
        "--bwd", action="store_true", help="the backward (CUBINs: builds of flash_attention_varlen_bwd_sm90)"
    )
    ap.add_argument("--fwd", help="with --bwd: a build of flash_attention_varlen_sm90.cute, for O and LSE")
    a = ap.parse_args()
    if a.bwd and not a.fwd:
        ap.error("--bwd needs --fwd FWD_CUBIN (the forward makes the backward's O and LSE)")
    import cutec

    torch, env, dtype, l2 = torch_setup(a.dtype)
    name = "flash_attn_varlen_bwd" if a.bwd else "flash_attn_varlen_fwd"
    ours = [(os.path.basename(p).removesuffix(".cubin"), cutec.load(p).host(name)) for p in a.cubins]
    fwd = cutec.load(a.fwd).host("flash_attn_varlen_fwd") if a.bwd else None
    fixed = cutec.load(a.fixed).host("flash_attn_fwd") if a.fixed else None
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    for d in map(int, a.dims.split(",")):
        for mean in map(int, a.means.split(",")):
            for causal in (c == "1" for c in a.causal.split(",")):
                if a.bwd:
                    cell_bwd(torch, ours, fwd, env, mean, d, causal, dtype, a.rounds, l2)
                else:
                    cell(torch, ours, fixed, env, mean, d, causal, dtype, a.rounds, l2)
    print("\n== summary: TFLOP/s (median over the rounds); ratio = cutec / the best torch backend")
    for name, medians, best in SUMMARY:
        parts = " | ".join(f"{label} {tf:.0f}" for label, tf in medians.items())
        ratios = ", ".join(f"{label} {medians[label] / best:.3f}" for label, _ in ours)
        print(f"  {name:44s} {parts}   ratio: {ratios}")


if __name__ == "__main__":
    main()
