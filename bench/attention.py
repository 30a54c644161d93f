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

    python3 bench/attention.py CUBIN [CUBIN ...] --window LEFT,RIGHT [same options]

Sliding windows (`--window`, forward only): `flash_attn_fwd_window` with query i seeing keys
i - LEFT .. i + RIGHT, beside torch's backends given the window as a boolean attn_mask (those that
take one); TFLOP/s = 4 * B * H * D * (the (query, key) pairs the window keeps) / t.

    python3 bench/attention.py --bwd --fwd FWD_CUBIN CUBIN [CUBIN ...] [same options]

The backward (`--bwd`): each CUBIN is a build of samples/flash_attention_bwd_sm90.cute, FWD_CUBIN one
of the forward (it makes O and LSE for the backward's inputs, once per input set). Timed: one
`flash_attn_bwd` call (its three kernels: the D pre-pass, the main kernel, the dQ conversion) beside
torch's backward of SDPA with each backend (`torch.autograd.grad` of the output with a retained
graph: the backward kernels only, the forward ran before). TFLOP/s = 2.5 * 4 * B * H * S * S * D / t,
halved for causal (the forward's count times 2.5: five GEMMs to the forward's two). Checked first:
the relative error of dQ, dK and dV against the first torch backend's (the largest of the three).
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
    """One forward cell; `causal` a bool, or a window (left, right) for flash_attn_fwd_window."""
    from torch.nn.attention import sdpa_kernel

    window = causal if isinstance(causal, tuple) else None
    args = window or (int(causal),)
    mask = None
    if window:
        i = torch.arange(s, device="cuda")[:, None]
        j = torch.arange(s, device="cuda")[None, :]
        mask = (j >= i - window[0]) & (j <= i + window[1])

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
    impls = [(label, [lambda t=t, a=attn: a(*t[:5], scale, *args) for t in sets]) for label, attn in attns]
    outs = {}
    for label, attn in attns:
        q, k, v, o, lse, qt, kt, vt = sets[0]
        attn(q, k, v, o, lse, scale, *args)
        outs[label] = o.transpose(1, 2).float()
    errs = {}
    ref = None
    for label, backend in torch_backends(torch):

        def call(t, backend=backend):
            with sdpa_kernel(backend):
                return torch.nn.functional.scaled_dot_product_attention(
                    t[5], t[6], t[7], attn_mask=mask, is_causal=causal is True, scale=scale
                )

        available, ref = checked_peer(label, lambda c=call: c(sets[0]), ref, outs, errs)
        if available:
            impls.append((label, [lambda t=t, c=call: c(t) for t in sets]))
    pairs = int(mask.sum()) if window else s * s * (0.5 if causal else 1.0)
    report(env, impls, outs, errs, 4 * b * HEADS * pairs * d, rounds, f"B{b} H{HEADS} S{s} D{d}", causal, dtype)


def checked_peer(label, first, ref, outs, errs):
    """Runs a torch backend once (`first()` returns its O) and records in `errs` the relative error of
    O against `ref`, the first available backend's (this one's where `ref` is None, and then cutec's
    outputs `outs` against it too). Returns (whether the backend ran, ref)."""
    try:
        out = first().float()
    except (RuntimeError, AttributeError) as e:
        print(f"  {label}: not available here ({str(e).splitlines()[0][:80]})")
        return False, ref
    if ref is None:
        ref = out
        for label_c, out_c in outs.items():
            errs[label_c] = float((out_c - ref).norm() / ref.norm())
    errs[label] = float((out - ref).norm() / ref.norm())
    return True, ref


def report(env, impls, ours, errs, flop, rounds, shape, causal, dtype, pass_name=""):
    """Times each implementation `rounds` times round-robin and prints TFLOP/s (median over the rounds)
    beside the best torch backend; `ours` names cutec's rows (not peers)."""
    rates = B.round_robin_tflops(env, impls, flop, rounds, min_reps=10, max_reps=50)
    print(f"== {pass_name}{shape} {masking_name(causal)} {str(dtype).removeprefix('torch.')}")
    best_peer = max((statistics.median(v) for k, v in rates.items() if k not in ours), default=float("nan"))
    for label, each in rates.items():
        tf = statistics.median(each)
        spread = " ".join(f"{x:.0f}" for x in each)
        err = errs.get(label)
        err_s = f"relerr {err:.2e}" if err is not None else "unchecked"
        print(f"  {label:16s} {tf:7.1f} TFLOP/s  {tf / best_peer:5.3f} of the best peer  {err_s}  rounds: {spread}")
    medians = {label: statistics.median(each) for label, each in rates.items()}
    SUMMARY.append((f"{pass_name or 'forward '}{shape} {masking_name(causal)}", medians, list(ours)))


def masking_name(causal):
    return f"window {causal[0]},{causal[1]}" if isinstance(causal, tuple) else "causal" if causal else "full"


# One line per cell, printed at the end: every implementation's TFLOP/s and cutec's ratio to cuDNN.
SUMMARY = []


def print_summary():
    if not SUMMARY:
        return
    print("\n== summary: TFLOP/s (median over the rounds); ratio = cutec / torch cudnn")
    for cell_name, medians, ours in SUMMARY:
        cudnn = medians.get("torch cudnn")
        parts = [f"{label} {tf:.0f}" for label, tf in medians.items()]
        ratios = [f"{label} {medians[label] / cudnn:.3f}" for label in ours if cudnn]
        print(f"  {cell_name:34s} {' | '.join(parts)}   ratio: {', '.join(ratios) or 'n/a'}")


def cell_bwd(torch, bwds, fwd, env, s, d, causal, dtype, rounds, l2):
    """One backward cell: cutec's flash_attn_bwd (O and LSE from the forward build `fwd`) beside torch's
    SDPA backward with each backend, on the same values."""
    from torch.nn.attention import sdpa_kernel

    b = TOKENS // s
    scale = 1.0 / math.sqrt(d)
    padded = -(-s // 64) * 64
    per_set = 8 * b * s * HEADS * d * dtype.itemsize + b * HEADS * padded * (d + 3) * 4
    sets = []
    for _ in range(B.n_rotations(per_set, l2)):
        q, k, v, do = (torch.randn(b, s, HEADS, d, device="cuda", dtype=dtype) for _ in range(4))
        o = torch.empty_like(q)
        lse = torch.empty(b, HEADS, s, device="cuda", dtype=torch.float32)
        fwd(q, k, v, o, lse, scale, int(causal))
        grads = tuple(torch.empty_like(t) for t in (q, k, v))
        ws = (torch.empty(b, HEADS, padded * d, device="cuda"), torch.empty(b, HEADS, 2, padded, device="cuda"))
        sets.append((q, k, v, o, do, lse, *grads, *ws))
    impls = [(label, [lambda t=t, f=bwd: f(*t, scale, int(causal)) for t in sets]) for label, bwd in bwds]
    outs = {}
    for label, bwd in bwds:
        t = sets[0]
        bwd(*t, scale, int(causal))
        outs[label] = [g.transpose(1, 2).float() for g in t[6:9]]
    errs = {}
    ref = None
    for label, backend in torch_backends(torch):
        # torch's own layout, (batch, heads, seqlen, D) contiguous, with the graph of its forward kept.
        graphs = []
        try:
            for t in sets:
                qt, kt, vt = (x.transpose(1, 2).contiguous().requires_grad_(True) for x in t[:3])
                with sdpa_kernel(backend):
                    out = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, scale=scale)
                graphs.append((out, (qt, kt, vt), t[4].transpose(1, 2).contiguous()))
            first = torch.autograd.grad(graphs[0][0], graphs[0][1], graphs[0][2], retain_graph=True)
        except RuntimeError as e:
            print(f"  {label}: not available here ({str(e).splitlines()[0][:80]})")
            continue
        if ref is None:
            ref = [g.float() for g in first]
            for label_c, out_c in outs.items():
                errs[label_c] = max(float((g - r).norm() / r.norm()) for g, r in zip(out_c, ref))
        errs[label] = max(float((g.float() - r).norm() / r.norm()) for g, r in zip(first, ref))
        calls = [lambda g=g: torch.autograd.grad(g[0], g[1], g[2], retain_graph=True) for g in graphs]
        impls.append((label, calls))
    flop = 2.5 * 4 * b * HEADS * s * s * d * (0.5 if causal else 1.0)
    report(env, impls, outs, errs, flop, rounds, f"B{b} H{HEADS} S{s} D{d}", causal, dtype, pass_name="backward ")


def grid_args(ap, lengths_flag, lengths, dims):
    """The options of a grid of cells (both attention benches): lengths, head dims, dtype, masking, rounds."""
    ap.add_argument(lengths_flag, default=lengths)
    ap.add_argument("--dims", default=dims)
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    ap.add_argument("--causal", default="0,1", help="0 (full), 1 (causal) or both")
    ap.add_argument("--rounds", type=int, default=3)


def torch_setup(dtype_name):
    """torch, bench.py's timing environment, the element type named by --dtype and the GPU's L2 bytes."""
    import torch

    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype_name]
    return torch, B.TorchEnv(torch), dtype, torch.cuda.get_device_properties(0).L2_cache_size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cubins", nargs="+", help="builds of samples/flash_attention_sm90.cute (--bwd: _bwd_sm90)")
    grid_args(ap, "--seqlens", "1024,2048,4096,8192", "64,128")
    ap.add_argument("--bwd", action="store_true", help="time the backward (CUBINs: builds of flash_attention_bwd_sm90)")
    ap.add_argument("--fwd", help="with --bwd: a build of flash_attention_sm90.cute, for O and LSE")
    ap.add_argument("--window", help="LEFT,RIGHT: sliding-window attention (forward), instead of --causal")
    a = ap.parse_args()
    if a.bwd and not a.fwd:
        ap.error("--bwd needs --fwd FWD_CUBIN (the forward makes the backward's O and LSE)")
    if a.bwd and a.window:
        ap.error("--window times the forward only")
    import cutec

    torch, env, dtype, l2 = torch_setup(a.dtype)
    name = "flash_attn_bwd" if a.bwd else "flash_attn_fwd_window" if a.window else "flash_attn_fwd"
    attns = [(os.path.basename(p).removesuffix(".cubin"), cutec.load(p).host(name)) for p in a.cubins]
    fwd = cutec.load(a.fwd).host("flash_attn_fwd") if a.bwd else None
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}")
    for d in map(int, a.dims.split(",")):
        for s in map(int, a.seqlens.split(",")):
            maskings = [tuple(map(int, a.window.split(",")))] if a.window else [c == "1" for c in a.causal.split(",")]
            for causal in maskings:
                if a.bwd:
                    cell_bwd(torch, attns, fwd, env, s, d, causal, dtype, a.rounds, l2)
                else:
                    cell(torch, attns, env, s, d, causal, dtype, a.rounds, l2)
    print_summary()


if __name__ == "__main__":
    main()
