# Sourced by the ncu_*.sh scripts: `ncu_metrics PIPE [EXTRA,...]` prints the --metrics list they
# share: tensor-pipe cycles and instructions of PIPE (hmma: mma.sync, gmma: wgmma), issue use,
# registers, duration, shared-memory wavefronts and bank conflicts, the stall reasons per issued
# instruction, then EXTRA.
ncu_metrics() {
    local pipe=$1 m
    m="sm__pipe_tensor_op_${pipe}_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active"
    m="$m,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor_op_${pipe}.sum,launch__registers_per_thread,gpu__time_duration.sum"
    m="$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
    m="$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
    for r in barrier long_scoreboard short_scoreboard math_pipe_throttle mio_throttle wait not_selected selected dispatch_stall lg_throttle no_instruction branch_resolving membar sleeping; do
        m="$m,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
    done
    echo "$m${2:+,$2}"
}
