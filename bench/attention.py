"""The attention forward of samples/flash_attention_sm90.cute beside torch's scaled_dot_product_attention
with each backend torch has on the GPU (cuDNN, flash, memory-efficient: torch.nn.attention.sdpa_kernel),
timed with bench.py's method (CUDA events per call behind a sleep kernel, inputs rotated over enough
sets to miss the L2, median), each checked against torch first (relative error of O).

    python3 bench/attention.py CUBIN [CUBIN ...] [--seqlens 1024,2048,4096,8192] [--dims 64,128] [--dtype bf16] [--rounds 3]

Each CUBIN is a build of samples/flash_attention_sm90.cute (cutec build ... --arch sm_90a, with -D
options for variants such as -D PINGPONG=true); its file name labels its row.
The grid is issue 34's: batch * seqlen = 16k tokens, 16 heads, seqlen_q = seqlen_k = S, head dims D,
causal and not. TFLOP/s = 4 * B * H * S * S * D / t, halved for causal. cutec takes Q, K, V, O as
(batch, seqlen, heads, D) (flash-attn's layout), torch as (batch, heads, seqlen, D) contiguous (its
own): the same bytes either way. Each cell times every implementation once per round, round-robin,
and reports the median over the rounds (clocks move with power and temperature).
"""

import argparse
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

TOKENS, HEADS = 16384, 16


def torch_backends(torch):
    from torch.nn.attention import SDPBackend

    return [
        ("torch cudnn", SDPBackend.CUDNN_ATTENTION),
        ("torch flash", SDPBackend.FLASH_ATTENTION),
        ("torch efficient", SDPBackend.EFFICIENT_ATTENTION),
    ]


def cell(torch, attns, env, s, d, causal, dtype, rounds, l2):
    from torch.nn.attention import sdpa_kernel

    b = TOKENS // s
    scale = 1.0 / math.sqrt(d)
    per_set = 4 * b * s * HEADS * d * dtype.itemsize + b * HEADS * s * 4
    sets = []
    for _ in range(B.n_rotations(per_set, l2)):
        q, k, v = (torch.randn(b, s, HEADS, d, device="cuda", dtype=dtype) for _ in range(3))
        o = torch.empty_like(q)
        lse = torch.empty(b, HEADS, s, device="cuda", dtype=torch.float32)
        # torch's own layout: (batch, heads, seqlen, D) contiguous copies of the same values.
        qt, kt, vt = (t.transpose(1, 2).contiguous() for t in (q, k, v))
        sets.append((q, k, v, o, lse, qt, kt, vt))
    impls = [(label, [lambda t=t, a=attn: a(*t[:5], scale, int(causal)) for t in sets]) for label, attn in attns]
    outs = {}
    for label, attn in attns:
        q, k, v, o, lse, qt, kt, vt = sets[0]
        attn(q, k, v, o, lse, scale, int(causal))
        outs[label] = o.transpose(1, 2).float()
    errs = {}
    ref = None
    for label, backend in torch_backends(torch):

        def call(t, backend=backend):
            with sdpa_kernel(backend):
                return torch.nn.functional.scaled_dot_product_attention(t[5], t[6], t[7], is_causal=causal, scale=scale)

        try:
            out = call(sets[0])
        except RuntimeError as e:
            print(f"  {label}: not available here ({str(e).splitlines()[0][:80]})")
            continue
        if ref is None:
            ref = out.float()
            for label_c, out_c in outs.items():
                errs[label_c] = float((out_c - ref).norm() / ref.norm())
        errs[label] = float((out.float() - ref).norm() / ref.norm())
        impls.append((label, [lambda t=t, c=call: c(t) for t in sets]))
    flop = 4 * b * HEADS * s * s * d * (0.5 if causal else 1.0)
    rates = {label: [] for label, _ in impls}
    for _ in range(rounds):
        for label, calls in impls:
            r = B.bench(env, calls, min_reps=10, max_reps=50)
            rates[label].append(flop / (r["median_ms"] * 1e-3) / 1e12)
    print(f"== B{b} H{HEADS} S{s} D{d} {'causal' if causal else 'full'} {str(dtype).removeprefix('torch.')}")
    best_peer = max((statistics.median(v) for k, v in rates.items() if k not in outs), default=float("nan"))
    for label, each in rates.items():
        tf = statistics.median(each)
        spread = " ".join(f"{x:.0f}" for x in each)
        err = errs.get(label)
        err_s = f"relerr {err:.2e}" if err is not None else "unchecked"
        print(f"  {label:16s} {tf:7.1f} TFLOP/s  {tf / best_peer:5.3f} of the best peer  {err_s}  rounds: {spread}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cubins", nargs="+", help="builds of samples/flash_attention_sm90.cute")
    ap.add_argument("--seqlens", default="1024,2048,4096,8192")
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    ap.add_argument("--causal", default="0,1", help="0 (full), 1 (causal) or both")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    import torch
    import cutec

    env = B.TorchEnv(torch)
    attns = [(os.path.basename(p).removesuffix(".cubin"), cutec.load(p).host("flash_attn_fwd")) for p in a.cubins]
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[a.dtype]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}")
    for d in map(int, a.dims.split(",")):
        for s in map(int, a.seqlens.split(",")):
            for causal in (c == "1" for c in a.causal.split(",")):
                cell(torch, attns, env, s, d, causal, dtype, a.rounds, l2)


if __name__ == "__main__":
    main()
