#!/usr/bin/env bash
# ncu of a GEMM sample's kernels at 4096^3 (one launch each: TN, NT and NN, bf16): tensor-pipe
# use, issue use, stall reasons (per issued instruction) and shared-memory bank conflicts. On the
# GPU machine, from the repository root, after `bash scripts/gpu-suite/build-python.sh --no-cute-dsl`
# here:
#   bash scripts/gpu-suite/ncu_gemm.sh [CUBIN]                      (samples/gemm_sm80.cute)
#   LAYOUTS=tn PIPE=gmma bash scripts/gpu-suite/ncu_gemm.sh .device/python/cubin/gemm_sm90.cubin
# PIPE names the tensor pipe the kernel uses: hmma (mma.sync, default) or gmma (wgmma).
set -uo pipefail
cd "$(dirname "$0")/../.."
P=.device/python
CUBIN=${1:-$P/cubin/gemm_sm80.cubin}
SITE=/tmp/cutec-site
[ -d "$SITE/cutec" ] || python3 -m pip -q --disable-pip-version-check install --no-index --no-deps --target "$SITE" "$P"/wheel/*.whl
export PYTHONPATH="$SITE"
PIPE=${PIPE:-hmma}
. scripts/gpu-suite/ncu_metrics.sh
M=$(ncu_metrics "$PIPE" smsp__sass_inst_executed_op_ldgsts.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum,lts__t_sector_hit_rate.pct)
# `python3 -P`: the repository root (the working directory) has a `cutec/` folder (the CLI crate),
# which Python would otherwise import in place of the installed package.
for layout in ${LAYOUTS:-tn nt nn}; do
    echo "=== gemm_${layout}_bf16 4096^3"
    timeout 200 ncu --kernel-name regex:'^gemm_bf16' --launch-count 1 --metrics "$M" python3 -P - "$CUBIN" "$layout" <<'PY' 2>&1 | grep -E "^\s+(sm|smsp|l1tex|gpu|launch|lts)__|Error|error"
import sys, torch, cutec
cubin, layout = sys.argv[1], sys.argv[2]
m = cutec.load(cubin)
M = N = K = 4096
def mk(rows, cols, contiguous_rows):
    x = torch.randn(cols, rows, device="cuda", dtype=torch.bfloat16)
    return x.t() if contiguous_rows else x.t().contiguous()
A = mk(M, K, layout[0] == "n")
B = mk(N, K, layout == "nt")
C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
m.host(f"gemm_{layout}_bf16")(A, B, C)
torch.cuda.synchronize()
PY
done
