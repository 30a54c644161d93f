"""The variable-length attention forward of samples/flash_attention_varlen_sm90.cute beside torch's
scaled_dot_product_attention on nested jagged tensors (torch.nested's NJT: the packed (total, heads, D)
values and the offsets, which torch's flash and memory-efficient backends run as their varlen
kernels, zero-copy), timed with bench.py's method (CUDA events per call behind a sleep kernel, inputs
rotated over enough sets to miss the L2, median over rounds taken round-robin), each checked against
torch first (relative error of O).

    python3 bench/attention_varlen.py CUBIN [CUBIN ...] [--means 512,1024,2048,4096] [--dims 64,128,256] [--causal 0,1] [--rounds 3] [--fixed FIXED_CUBIN]

Each CUBIN is a build of samples/flash_attention_varlen_sm90.cute. A cell's batch: sequences of
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


def lengths(mean, seed):
    rng = random.Random(seed)
    lens = []
    while sum(lens) < TOKENS:
        lens.append(rng.randint(mean // 2, 3 * mean // 2))
    return lens


def cell(torch, ours, fixed, env, mean, d, causal, dtype, rounds, l2):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    lens = lengths(mean, seed=mean + d)
    total = sum(lens)
    scale = 1.0 / math.sqrt(d)
    offs = torch.tensor([0] + [sum(lens[: i + 1]) for i in range(len(lens))], dtype=torch.int32, device="cuda")
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
    # The nested tensors are made once per set, with their min and max lengths given: without them
    # torch computes the max on the device and reads it back (a synchronization per call).
    nested = [
        tuple(
            torch.nested.nested_tensor_from_jagged(x, offs64, min_seqlen=min(lens), max_seqlen=max_len).transpose(1, 2)
            for x in t[:3]
        )
        for t in sets
    ]
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
    rates = B.round_robin_tflops(env, impls, flop, rounds, min_reps=10, max_reps=50)
    if "fixed-length" in rates:
        rates["fixed-length"] = [r * fixed_flop / flop for r in rates["fixed-length"]]
    name = f"{len(lens)} seqs mean {mean} (max {max_len}) H{HEADS} D{d} {'causal' if causal else 'full'}"
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cubins", nargs="+", help="builds of samples/flash_attention_varlen_sm90.cute")
    grid_args(ap, "--means", "512,1024,2048,4096", "64,128,256")
    ap.add_argument("--fixed", help="a build of samples/flash_attention_sm90.cute, timed on MEAN-long sequences")
    a = ap.parse_args()
    import cutec

    torch, env, dtype, l2 = torch_setup(a.dtype)
    ours = [(os.path.basename(p).removesuffix(".cubin"), cutec.load(p).host("flash_attn_varlen_fwd")) for p in a.cubins]
    fixed = cutec.load(a.fixed).host("flash_attn_fwd") if a.fixed else None
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    for d in map(int, a.dims.split(",")):
        for mean in map(int, a.means.split(",")):
            for causal in (c == "1" for c in a.causal.split(",")):
                cell(torch, ours, fixed, env, mean, d, causal, dtype, a.rounds, l2)
    print("\n== summary: TFLOP/s (median over the rounds); ratio = cutec / the best torch backend")
    for name, medians, best in SUMMARY:
        parts = " | ".join(f"{label} {tf:.0f}" for label, tf in medians.items())
        ratios = ", ".join(f"{label} {medians[label] / best:.3f}" for label, _ in ours)
        print(f"  {name:44s} {parts}   ratio: {ratios}")


if __name__ == "__main__":
    main()
