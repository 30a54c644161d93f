#!/usr/bin/env bash
# ncu of samples/gemm_sm90_splitk.cute's skinny calls beside cuBLAS's (torch's `a @ b.t()`), one TN
# bf16 call each at 4096x16x4096, 16x4096x4096 and 4096x96x4096: duration, DRAM bytes and
# throughput (a skinny GEMM is memory-bound: what is left is the distance to the DRAM's peak),
# grid, block and cluster, warps active, the long-scoreboard and barrier stalls. On the GPU
# machine, from the repository root, with the suite built here (bash scripts/gpu-suite/build.sh):
#   bash scripts/gpu-suite/ncu_splitk.sh [CUBIN]      (default .device/suite/cubin/gemm_sm90_splitk.cubin)
# Session 25's reading of it is in docs/tutorial.md §17.10 ("Reducing in a cluster").
set -uo pipefail
cd "$(dirname "$0")/../.."
CUBIN=${1:-.device/suite/cubin/gemm_sm90_splitk.cubin}
SITE=/tmp/cutec-site
[ -d "$SITE/cutec" ] || python3 -m pip -q --disable-pip-version-check install --no-index --no-deps --target "$SITE" .device/suite/python/*.whl
export PYTHONPATH="$SITE"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__cluster_dim_y
M=$M,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
# `python3 -P`: the repository root has a `cutec/` folder (the CLI crate), which Python would
# otherwise import in place of the installed package.
timeout 250 ncu --kernel-name regex:'gemm|nvjet|sm90|cutlass|gemv|splitK' --launch-count 12 --metrics "$M" \
    python3 -P - "$CUBIN" <<'PY' 2>&1 | grep -vE "^==PROF==|^\s*-+\s*$|Section:|^\s*$"
import sys, torch, cutec
m = cutec.load(sys.argv[1])
w = torch.empty(132 * 128 * 128, device="cuda", dtype=torch.float32)  # the sample's workspace
for M, N, K in ((4096, 16, 4096), (16, 4096, 4096), (4096, 96, 4096)):
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    m.host("gemm_tn_bf16")(a, b, c, w)
    ref = a @ b.t()
    torch.cuda.synchronize()
    print(f"{M}x{N}x{K}: max |cutec - torch| {(c.float() - ref.float()).abs().max().item():.3g}", flush=True)
PY
