"""samples/gemm_sm90_grouped.cute's grouped (MoE) GEMM beside a loop of torch.matmul over the groups
and torch._grouped_mm (where this torch has it), timed with bench.py's method (CUDA events per call
behind a sleep kernel, operands rotated beyond L2, median), each checked against float64 first.

    python3 bench/gemm_grouped.py CUBIN [CUBIN ...] [--experts 8,64] [--tokens 16384] [--n 4096] [--k 4096]
        [--layouts tn,tt,k_nt,fp8_tn,fp8_tn_fast_accum] [--rounds 3]

Several CUBINs (builds of the sample, each labelled by its file name) are timed in the same run.

Group sizes are uneven: `tokens` rows split over the experts by a fixed-seed Dirichlet draw,
rounded to multiples of 16 (torch._grouped_mm's alignment; the cutec kernel takes any sizes).
C (tokens, N) = per group A_e (rows, K) @ W[e], bf16, for weights stored per layout: tn, B (E, N, K)
(nn.Linear's, W[e] = B[e]^T: gemm_grouped_tn); tt, W (E, K, N) row-major (gemm_grouped_tt on its
(E, N, K) view); k_nt, the weight gradient dW (E, N, K), dW[e] = dC_e^T @ X_e over the group's
tokens (gemm_grouped_k_nt(dC.t(), X.t(), dW, offs); torch._grouped_mm(dC.t(), X, offs=offs));
fp8_tn, e4m3 A and B (E, N, K) with row-wise scales into bf16 (gemm_grouped_fp8_tn against
torch._scaled_grouped_mm, both promoting); fp8_tn_fast_accum, the same with fast accumulation
(gemm_grouped_fp8_tn_fast_accum against use_fast_accum=True).
TFLOP/s = 2 * tokens * N * K / t.
"""

import argparse
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402


def group_sizes(torch, experts, tokens):
    torch.manual_seed(experts)
    w = torch.distributions.Dirichlet(torch.full((experts,), 2.0)).sample()
    sizes = [int(x) // 16 * 16 for x in (w * tokens).tolist()]
    sizes[0] += tokens - sum(sizes)
    return sizes


def weights(torch, layout, E, N, K, dt):
    """B (E, N, K): K-major for tn; for tt the (E, N, K) view of W (E, K, N) stored row-major."""
    if layout == "tn":
        return (torch.randn(E, N, K, device="cuda") * K**-0.25).to(dt)
    return (torch.randn(E, K, N, device="cuda") * K**-0.25).to(dt).transpose(-2, -1)


def forward_case(torch, hosts, layout, E, offs, bounds, M, N, K, dt, l2):
    """C (tokens, N) = A_e @ W[e] per group: the implementations, C to check, its float64 value."""
    per_set = (M * K + E * N * K + M * N) * 2
    sets = [
        (
            (torch.randn(M, K, device="cuda") * K**-0.25).to(dt),
            weights(torch, layout, E, N, K, dt),
            torch.empty(M, N, device="cuda", dtype=dt),
        )
        for _ in range(B.n_rotations(per_set, l2, max_sets=2))
    ]

    def loop(x, w, c):
        for e in range(E):
            if bounds[e + 1] > bounds[e]:
                torch.matmul(x[bounds[e] : bounds[e + 1]], w[e].t(), out=c[bounds[e] : bounds[e + 1]])
        return c

    impls = [("torch.matmul loop", [lambda x=x, w=w, c=c: loop(x, w, c) for x, w, c in sets])]
    if hasattr(torch, "_grouped_mm"):
        # Timed as torch returns it (a new C each call, from its caching allocator); checked
        # through a copy.
        grouped = [lambda x=x, w=w: torch._grouped_mm(x, w.transpose(-2, -1), offs=offs) for x, w, _ in sets]
        impls.append(("torch._grouped_mm", grouped))
    for name, host in hosts:
        impls.append((f"cutec {name}", [B.cutec_call(host, (x, w, c, offs), out_index=2) for x, w, c in sets]))
    x, w, c0 = sets[0]
    ref = torch.empty(M, N, dtype=torch.float64, device="cuda")
    for e in range(E):
        ref[bounds[e] : bounds[e + 1]] = x[bounds[e] : bounds[e + 1]].double() @ w[e].double().t()
    return impls, c0, ref


def fp8_case(torch, hosts, E, offs, bounds, M, N, K, dt, l2, fast):
    """FP8 e4m3 A (tokens, K) and B (E, N, K) with row-wise scales (scale_a per token, scale_b per
    expert and column), bf16 C, promoted or with fast accumulation (torch's use_fast_accum): the
    implementations, C to check, its float64 value."""
    f8 = torch.float8_e4m3fn
    per_set = (M * K + E * N * K) + M * N * 2
    sets = [
        (
            torch.randn(M, K, device="cuda").to(f8),
            (torch.randn(E, N, K, device="cuda") * 0.5).to(f8),
            torch.empty(M, N, device="cuda", dtype=dt),
            torch.rand(M, device="cuda") + 0.5,
            torch.rand(E, N, device="cuda") + 0.5,
        )
        for _ in range(B.n_rotations(per_set, l2, max_sets=2))
    ]
    impls = []
    if hasattr(torch, "_scaled_grouped_mm"):
        grouped = [
            lambda x=x, w=w, sa=sa, sb=sb: torch._scaled_grouped_mm(
                x, w.transpose(-2, -1), sa, sb, offs=offs, out_dtype=dt, use_fast_accum=fast
            )
            for x, w, _, sa, sb in sets
        ]
        impls.append(("torch._scaled_grouped_mm" + (" fast_accum" if fast else ""), grouped))
    for name, host in hosts:
        calls = [B.cutec_call(host, (x, w, c, offs, sa, sb), out_index=2) for x, w, c, sa, sb in sets]
        impls.append((f"cutec {name}", calls))
    x, w, c0, sa, sb = sets[0]
    ref = torch.empty(M, N, dtype=torch.float64, device="cuda")
    for e in range(E):
        r = slice(bounds[e], bounds[e + 1])
        ref[r] = (x[r].double() * sa[r, None].double()) @ (w[e].double() * sb[e, :, None].double()).t()
    return impls, c0, ref


def wgrad_case(torch, hosts, E, offs, bounds, M, N, K, dt, l2):
    """The weight gradient dW (E, N, K), dW[e] = dC_e^T @ X_e over the group's tokens (groups along
    the contraction): the implementations, dW to check, its float64 value."""
    per_set = (M * K + M * N + E * N * K) * 2
    sets = [
        (
            (torch.randn(M, N, device="cuda") * 0.5).to(dt),
            (torch.randn(M, K, device="cuda") * 0.5).to(dt),
            torch.empty(E, N, K, device="cuda", dtype=dt),
        )
        for _ in range(B.n_rotations(per_set, l2, max_sets=2))
    ]

    def loop(dc, x, dw):
        for e in range(E):
            torch.matmul(dc[bounds[e] : bounds[e + 1]].t(), x[bounds[e] : bounds[e + 1]], out=dw[e])
        return dw

    impls = [("torch.matmul loop", [lambda dc=dc, x=x, dw=dw: loop(dc, x, dw) for dc, x, dw in sets])]
    if hasattr(torch, "_grouped_mm"):
        grouped = [lambda dc=dc, x=x: torch._grouped_mm(dc.t(), x, offs=offs) for dc, x, _ in sets]
        impls.append(("torch._grouped_mm", grouped))
    for name, host in hosts:
        calls = [B.cutec_call(host, (dc.t(), x.t(), dw, offs), out_index=2) for dc, x, dw in sets]
        impls.append((f"cutec {name}", calls))
    dc, x, c0 = sets[0]
    ref = torch.empty(E, N, K, dtype=torch.float64, device="cuda")
    for e in range(E):
        ref[e] = dc[bounds[e] : bounds[e + 1]].double().t() @ x[bounds[e] : bounds[e + 1]].double()
    return impls, c0, ref


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cubins", nargs="+", help="gemm_sm90_grouped.cubin builds (the file name labels the row)")
    ap.add_argument("--experts", default="8,64")
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--layouts", default="tn", help="tn, tt, k_nt, fp8_tn, fp8_tn_fast_accum (comma-separated)")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    import torch
    import cutec

    torch.manual_seed(0)
    env = B.TorchEnv(torch)
    modules = [(os.path.basename(p).removesuffix(".cubin"), cutec.load(p)) for p in a.cubins]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    M, N, K, dt = a.tokens, a.n, a.k, torch.bfloat16
    for layout, E in itertools.product(a.layouts.split(","), map(int, a.experts.split(","))):
        hosts = [(name, m.host(f"gemm_grouped_{layout}")) for name, m in modules]
        sizes = group_sizes(torch, E, M)
        offs = torch.tensor(sizes, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
        bounds = [0, *offs.tolist()]
        if layout == "k_nt":
            impls, c0, ref = wgrad_case(torch, hosts, E, offs, bounds, M, N, K, dt, l2)
        elif layout.startswith("fp8_tn"):
            impls, c0, ref = fp8_case(torch, hosts, E, offs, bounds, M, N, K, dt, l2, layout.endswith("fast_accum"))
        else:
            impls, c0, ref = forward_case(torch, hosts, layout, E, offs, bounds, M, N, K, dt, l2)
        errs = {}
        for label, calls in impls:
            c0.fill_(float("nan"))
            out = calls[0]()
            if out is not None and out.data_ptr() != c0.data_ptr():
                c0.copy_(out)
            torch.cuda.synchronize()
            errs[label] = B.relerr(c0, ref)
        del ref
        rates = B.round_robin_tflops(env, impls, 2.0 * M * N * K, a.rounds, min_reps=5, max_reps=30)
        kind = "e4m3 -> bf16" if layout.startswith("fp8") else "bf16"
        print(f"== {layout.upper()} E{E} tokens {M} N {N} K {K} {kind}, rows per expert {min(sizes)}..{max(sizes)}")
        B.print_tflops(impls, rates, errs, 24)
        del impls, c0
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
