#!/usr/bin/env bash
# ncu of the FlashAttention samples' kernels, one call at B4 H16 S4096 per head dim (bf16, full and
# causal): the forward (samples/flash_attention_sm90.cute, one kernel) or the backward
# (samples/flash_attention_bwd_sm90.cute: the D pre-pass, the main kernel, the dQ conversion).
# Durations, tensor-pipe and issue use, stall reasons per issued instruction, shared-memory bank
# conflicts, registers, local memory (spills), DRAM bytes and L2 atomic sectors. On the GPU machine,
# from the repository root, with the suite built here (bash scripts/gpu-suite/build.sh; carry
# .device/suite):
#   bash scripts/gpu-suite/ncu_attention.sh fwd|bwd [DIMS]        (DIMS: default "64 128 256")
set -uo pipefail
cd "$(dirname "$0")/../.."
PASS=${1:?fwd or bwd}
S=.device/suite
SITE=/tmp/cutec-site
[ -d "$SITE/cutec" ] || python3 -m pip -q --disable-pip-version-check install --no-index --no-deps --target "$SITE" "$S"/python/cutec-*.whl
export PYTHONPATH="$SITE"
. scripts/gpu-suite/ncu_metrics.sh
M=$(ncu_metrics gmma dram__bytes.sum,lts__t_sectors_srcunit_tex_op_red.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size)
case $PASS in
    fwd) KERNELS='^flash_fwd'; COUNT=1;;
    bwd) KERNELS='^flash_bwd'; COUNT=3;;
    *) echo "ncu_attention.sh: fwd or bwd, not $PASS" >&2; exit 2;;
esac
for d in ${2:-64 128 256}; do
    for causal in 0 1; do
        echo "=== flash_attn_$PASS B4 H16 S4096 D$d causal=$causal"
        timeout 150 ncu --kernel-name regex:"$KERNELS" --launch-count $COUNT --metrics "$M" python3 -P - "$S/cubin" "$PASS" "$d" "$causal" <<'PY' 2>&1 | grep -E "^\s+(sm|smsp|l1tex|gpu|launch|lts|dram)__|^\s+flash_|Error|error"
import math, sys, torch, cutec
cub, pass_, d, causal = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
b, s, h = 4, 4096, 16
q, k, v, do = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
o, lse = torch.empty_like(q), torch.empty(b, h, s, device="cuda")
scale = 1 / math.sqrt(d)
cutec.load(f"{cub}/flash_attention_sm90.cubin").host("flash_attn_fwd")(q, k, v, o, lse, scale, causal)
if pass_ == "bwd":
    bwd = cutec.load(f"{cub}/flash_attention_bwd_sm90.cubin").host("flash_attn_bwd")
    dq, dk, dv = (torch.empty_like(t) for t in (q, k, v))
    ws = (torch.empty(b, h, s * d, device="cuda"), torch.empty(b, h, 2, s, device="cuda"))
    bwd(q, k, v, o, do, lse, dq, dk, dv, *ws, scale, causal)
torch.cuda.synchronize()
PY
    done
done
