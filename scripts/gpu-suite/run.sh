#!/usr/bin/env bash
# GPU suite (issue 6 + host functions + issue 5: every sample checked on the GPU, predicated_add and
# tensors included; the tensor-core GEMM checked and timed from Python where python3 imports torch).
# Run on the GPU machine:  bash .device/suite/run.sh
# Needs no Rust/MLIR: bin/ has stripped release binaries (glibc >= 2.34), cubin/ the cubins built
# with cutec (sm_90). Prints each check's output, then a PASS/FAIL table and the bandwidth table.
cd "$(dirname "$0")"
mkdir -p log
rm -f log/*.txt
declare -a rows
check() {  # name, command...
    local name=$1; shift
    echo "=== $name: $*"
    local t0=$SECONDS
    timeout 300 "$@" > "log/$name.txt" 2>&1; local rc=$?
    cat "log/$name.txt"
    case $rc in 0) s=PASS;; 77) s=SKIP;; 124) s="FAIL(timeout)";; *) s="FAIL(rc=$rc)";; esac
    rows+=("$(printf '%-34s %-14s %4ss' "$name" "$s" "$((SECONDS - t0))")")
}
CR=bin/cute-run
# A check that ended in SKIP (no driver/GPU) makes its grep rows SKIP too.
skipped() { tail -1 "log/$1.txt" 2>/dev/null | grep -q '^SKIP'; }
skiprow() { rows+=("$(printf '%-34s %-14s %4s' "grep:$1" SKIP "-")"); }
# expect NAME LOG 'line'...: each line must occur verbatim (a whole line) in log/LOG.txt.
expect() {
    local name=$1 log=log/$2.txt; skipped "$2" && { skiprow "$name"; return; }; shift 2
    local miss=()
    for l in "$@"; do grep -Fxq -- "$l" "$log" 2>/dev/null || miss+=("$l"); done
    if [ ${#miss[@]} -eq 0 ]; then s=PASS; else s=FAIL; printf '=== %s: missing in %s: %s\n' "$name" "$log" "${miss[*]}"; fi
    rows+=("$(printf '%-34s %-14s %4s' "grep:$name" "$s" "-")")
}
# expect_count NAME LOG N 'line': the line occurs exactly N times.
expect_count() {
    local name=$1 log=log/$2.txt n=$3 l=$4; skipped "$2" && { skiprow "$name"; return; }
    local got; got=$(grep -Fxc -- "$l" "$log" 2>/dev/null); got=${got:-0}
    if [ "$got" = "$n" ]; then s=PASS; else s=FAIL; printf '=== %s: %s printed %s times (want %s)\n' "$name" "$l" "$got" "$n"; fi
    rows+=("$(printf '%-34s %-14s %4s' "grep:$name" "$s" "-")")
}
# expect_order NAME LOG 'first' 'second': the first occurrence of 'first' comes before a 'second'.
expect_order() {
    local name=$1 log=log/$2.txt; skipped "$2" && { skiprow "$name"; return; }
    local a b; a=$(grep -Fxn -- "$3" "$log" 2>/dev/null | head -1 | cut -d: -f1); b=$(grep -Fxn -- "$4" "$log" 2>/dev/null | tail -1 | cut -d: -f1)
    if [ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ]; then s=PASS; else s=FAIL; printf '=== %s: want %s before %s\n' "$name" "$3" "$4"; fi
    rows+=("$(printf '%-34s %-14s %4s' "grep:$name" "$s" "-")")
}
EW=cubin/elementwise_add.cubin
EW32=cubin/elementwise_add_f32.cubin

# --- issue 6 checks (manifest, checked launches, graphs, C ABI) ---
check info                 $CR info
check kernels              $CR kernels cubin/vector_add.cubin
check manifest             $CR manifest cubin/vector_add.cubin
check vector-add-2^24      $CR vector-add cubin/vector_add.cubin --n 16777216
check vector-add-1000003   $CR vector-add cubin/vector_add.cubin --n 1000003
check checked-rust         $CR checked cubin/vector_add.cubin --static cubin/scale.cubin
check graph-rust           $CR graph cubin/vector_add.cubin --replays 20
check c-example            bin/vector_add_c cubin/vector_add.cubin
check c-typed-header       bin/typed_launch_c cubin/vector_add.cubin

# --- host functions ---
check plan-offline         $CR plan $EW elementwise_add --shape 2048x2048
check host-f16-2048        $CR host-add $EW --m 2048 --n 2048 --iters 20
check host-f16-16384       $CR host-add $EW --m 16384 --n 16384 --iters 20
if [ -f "$EW32" ]; then
    check host-f32-2048    $CR host-add $EW32 --m 2048 --n 2048 --iters 20
    check host-f32-16384   $CR host-add $EW32 --m 16384 --n 16384 --iters 20
    check host-f32-16384x8192 $CR host-add $EW32 --m 16384 --n 8192 --iters 20
else
    echo "=== f32: cubin/elementwise_add_f32.cubin absent (samples/elementwise_add_f32.cute not built): skipped"
fi
check host-refuse-M1000    $CR host-refuse $EW elementwise_add --m 1000 --n 2048
check host-c-example       bin/host_add_c $EW 2048 2048
check host-rust-example    bin/host_add_rust $EW 2048 2048
check rust-build-example   bin/rust_build_example
check host-c-reduce        bin/host_reduce_c cubin/reduce_sum.cubin cubin/reduce_sum_tiled_copy.cubin 4096
check bench-launch         bin/cute-bench-launch cubin/vector_add.cubin --launches 10000 --rounds 5 --host $EW
# --- issue 5: every sample on fresh random inputs against a CPU reference ---
check ew-apply              $CR elementwise-apply cubin/elementwise_apply.cubin
check reduce-sum            $CR reduce cubin/reduce_sum.cubin --bench 16384x1024 --bench 16384x8192 --iters 20
check reduce-rows           $CR reduce cubin/reduce_sum_tiled_copy.cubin --bench 16384x1024 --iters 20
check reduce-compositional  $CR reduce cubin/reduce_sum_compositional.cubin --bench 16384x1024 --iters 20
check reduce-nd             $CR reduce cubin/reduce_sum_nd.cubin
check copy4                 $CR copy4 cubin/four_ways_copy.cubin
check hello-world           $CR sample cubin/hello_world.cubin hello_world
check cuda-graph            $CR sample cubin/cuda_graph.cubin cuda_graph
check printing              $CR sample cubin/printing.cubin printing
check layout-algebra        $CR sample cubin/layout_algebra.cubin layout_algebra
check numeric-types         $CR sample cubin/numeric_types.cubin numeric_types
check tensor-ssa            $CR sample cubin/tensor_ssa.cubin tensor_ssa
# samples/predicated_add.cute: any MxN (no partial-tile refusal), every element bit-exact, guard
# regions around C untouched; GB/s at 8192x8192 in the elementwise-add table below.
check predicated-add        $CR predicated-add cubin/predicated_add.cubin --bench 8192x8192 --iters 20
check tensors               $CR sample cubin/tensors.cubin tensors
# The printed output itself (device printf reaches the child's stdout at synchronization).
# print_tensor output is normalized by cute-run into `tensor-values CASE #K: v v ...` lines.
expect copy4-values         copy4 'tensor-values four_ways_copy/cute_copy_1 #0: 8.000000 9.000000 10.000000 11.000000 12.000000 13.000000 14.000000 15.000000' \
                            'tensor-values four_ways_copy/cute_copy_2 #0: 8.000000 9.000000 10.000000 11.000000 12.000000 13.000000 14.000000 15.000000' \
                            'tensor-values four_ways_copy/cute_copy_3 #0: 8.000000 9.000000 10.000000 11.000000 12.000000 13.000000 14.000000 15.000000' \
                            'tensor-values four_ways_copy/cute_copy_4 #0: 8.000000 9.000000 10.000000 11.000000 12.000000 13.000000 14.000000 15.000000'
expect_count hello-kernel   hello-world 1 'Hello world'
expect_order hello-order    hello-world 'hello world' 'Hello world'
expect_count graph-replay   cuda-graph 2 'Hello world'
expect printing-lines       printing '>?? 8' '>?? 2' '>?? (8,2):(1,8)' 'block 0 of 1: x = (4,8):(8,1), x[1,2] = 10.000000'
expect layout-lines         layout-algebra '>?? Original: (2,(1,6)):(1,(6,2))' '>?? Coalesced: 12:1' \
                            '>?? Layout A: (6,2):(8,2)' '>?? Composition R: ((2,2),3):((24,2),8)' \
                            '>?? Layout A: (12,(4,8)):(59,(13,1))' '>?? By-mode Composition Result: (3,(4,2)):(59,(13,1))'
expect numeric-lines        numeric-types 'a(dynamic) = 3.140000' 'b(dynamic) = 5' 'Int32(42) => Float32(42.000000)' \
                            'Float32(3.140000) => Int32(3)' 'Int32(127) => Int8(127)' \
                            'Int32(300) => Int8(44) (truncated due to range limitation)' 'a + b = 13' 'x * 2 = 11.000000' \
                            'a + x = 15.500000 (Int32 + Float32 promotes to Float32)' 'a / b = 3' 'x / 2.0 = 2.750000' \
                            'a > b = 1' 'a & b = 2' '-a = -10' '~a = -11' \
                            '-7 / 2 = -4, -7 % 2 = 1' '7 / -2 = -3, 7 % -2 = 1'
expect tensor-ssa-lines     tensor-ssa 'tensor-values tensor_ssa/binary_op_1 #0: 3.000000 3.000000 3.000000' \
                            'tensor-values tensor_ssa/run_binary_op_2 #3: 0.500000 0.500000 0.500000' \
                            'tensor-values tensor_ssa/unary_op_1 #1: -0.756802 -0.756802 -0.756802' \
                            'tensor-values tensor_ssa/unary_op_1 #2: 16.000000 16.000000 16.000000' '21.000000' \
                            'tensor-values tensor_ssa/reduction_op #0: 6.000000 15.000000' \
                            'tensor-values tensor_ssa/reduction_op #1: 6.000000 8.000000 10.000000' \
                            '  (stderr) PASS readback binary_op_4: got [3, 0, 7]' '  (stderr) PASS readback binary_op_3: got [0, 1, 0]'
expect predicated-lines     predicated-add 'PASS predicated_add f32 1x1 (plan, offline): accepted: predicated_add_kernel grid (1, 1, 1) block (32, 4, 1) (4x32 tiles cover the tensor)' \
                            'PASS predicated_add f32 4096x4097 (plan, offline): accepted: predicated_add_kernel grid (1024, 129, 1) block (32, 4, 1) (4x32 tiles cover the tensor)' \
                            'PASS predicated_add f32 1x1: 1 elements: mismatches=0 (bit-exact; unwritten=0) guard_written=0 of 2048' \
                            'PASS predicated_add f32 3x5: 15 elements: mismatches=0 (bit-exact; unwritten=0) guard_written=0 of 2048' \
                            'PASS predicated_add f32 1000x1000: 1000000 elements: mismatches=0 (bit-exact; unwritten=0) guard_written=0 of 2048' \
                            'PASS predicated_add f32 1023x33: 33759 elements: mismatches=0 (bit-exact; unwritten=0) guard_written=0 of 2048' \
                            'PASS predicated_add f32 4x32: 128 elements: mismatches=0 (bit-exact; unwritten=0) guard_written=0 of 2048' \
                            'PASS predicated_add f32 4096x4097: 16781312 elements: mismatches=0 (bit-exact; unwritten=0) guard_written=0 of 2048' \
                            'PASS predicated_add f32 8192x8192: 67108864 elements: mismatches=0 (bit-exact; unwritten=0) guard_written=0 of 2048'
# tensors.cute: x = arange(24) as (4,3,2):(6,2,1) prints in CuTe's order (last mode outermost, rows of
# mode 0 holding mode 1: first row 0, 2, 4); the verbose form prints `\t(i,j)= 3i+j`; the slices
# (_,0) and (1,_) print column 0 and row 1.
expect tensors-basic        tensors 'Basic output:' '       [[[ 0.000000,  2.000000,  4.000000, ],' \
                            'tensor-values tensors/tensor_print_example1 #0: 0.000000 2.000000 4.000000 6.000000 8.000000 10.000000 12.000000 14.000000 16.000000 18.000000 20.000000 22.000000 1.000000 3.000000 5.000000 7.000000 9.000000 11.000000 13.000000 15.000000 17.000000 19.000000 21.000000 23.000000'
TV=(); for i in 0 1 2 3; do for j in 0 1 2; do TV+=("$(printf '\t(%d,%d)= %d.000000' "$i" "$j" "$((3 * i + j))")"); done; done
expect tensors-verbose      tensors 'Verbose output:' "${TV[@]}"
expect_count tensors-slices tensors 2 'Slice output:'
expect tensors-slice-values tensors 'tensor-values tensors/tensor_print_example3 #0: 0.000000 3.000000 6.000000 9.000000' \
                            'tensor-values tensors/tensor_print_example3 #1: 3.000000 4.000000 5.000000'

# --- tensor-core GEMM (samples/gemm_sm80.cute): every gemm_* host function the cubin has, called from
# Python through the C ABI on torch tensors, checked against a float64 reference (tile-multiple shapes
# must be accepted, others may be refused), then timed beside torch.matmul (py/gemm_check.py --help).
GEMM=cubin/gemm_sm80.cubin
gemm_skip=
if ! python3 -c 'import torch' >/dev/null 2>&1; then
    gemm_skip="python3 cannot import torch"
elif [ ! -f "$GEMM" ]; then
    gemm_skip="$GEMM absent (samples/gemm_sm80.cute not built)"
elif [ ! -f lib/libcute_runtime.so ] || [ ! -f py/gemm_check.py ]; then
    gemm_skip="lib/libcute_runtime.so or py/gemm_check.py absent (suite built by an older build.sh?)"
fi
if [ -z "$gemm_skip" ]; then
    check mma-atom          python3 py/mma_atom_check.py --lib lib/libcute_runtime.so --cubin cubin/mma_atom.cubin
    check gemm-sm80         python3 py/gemm_check.py --lib lib/libcute_runtime.so --cubin "$GEMM" --tile 128x256x64 --bench --json log/gemm-sm80.json
else
    echo "=== gemm-sm80: SKIP: $gemm_skip"
    rows+=("$(printf '%-34s %-14s %4s' gemm-sm80 SKIP -)")
fi

if command -v compute-sanitizer >/dev/null; then
    check sanitizer-checked compute-sanitizer --report-api-errors no $CR checked cubin/vector_add.cubin --static cubin/scale.cubin --n 4099
    check sanitizer-host    compute-sanitizer --report-api-errors no $CR host-add $EW --m 256 --n 512 --iters 1
    check sanitizer-reduce  compute-sanitizer --report-api-errors no $CR reduce cubin/reduce_sum_nd.cubin --shape 5x256x3 --shape 7x256x33
    check sanitizer-apply   compute-sanitizer --report-api-errors no $CR elementwise-apply cubin/elementwise_apply.cubin --shape 256x512 --refuse 256x500
    # Out-of-bounds reads of A and B (which have no guard regions) would show here.
    check sanitizer-predicated compute-sanitizer --report-api-errors no $CR predicated-add cubin/predicated_add.cubin --shape 1x1 --shape 3x5 --shape 1023x33 --shape 37x4097
    # The tensor-core kernels: mma.sync, cp.async, ldmatrix, dynamic shared memory (small shapes, and
    # one the host refuses: nothing may be touched then).
    if [ -z "$gemm_skip" ]; then
        check sanitizer-mma     compute-sanitizer --error-exitcode 9 --report-api-errors no python3 py/mma_atom_check.py --lib lib/libcute_runtime.so --cubin cubin/mma_atom.cubin
        check sanitizer-gemm    compute-sanitizer --error-exitcode 9 --report-api-errors no python3 py/gemm_check.py --lib lib/libcute_runtime.so --cubin "$GEMM" --tile 128x256x64 --sizes 128x256x64 256x512x192 384x256x1000 100x200x72 200x264x136
    fi
fi

echo
echo "================ suite summary ================"
printf '%s\n' "${rows[@]}"
echo
echo "---- elementwise add: GB/s = 3*M*N*elem / median kernel time (20 runs, CUDA events); memcpy = DtoD of the same bytes, 2*bytes/time ----"
printf '%-28s %-5s %-12s %-10s %10s %10s %12s %7s\n' host dtype MxN mismatches us GB/s memcpy_GB/s ratio
cat log/host-*.txt log/predicated-add.txt 2>/dev/null | awk '/^RESULT host=/ {
    for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    printf "%-28s %-5s %-12s %-10s %10s %10s %12s %7s\n", v["host"], v["dtype"], v["m"] "x" v["n"], v["mismatches"], v["us"], v["gbps"], v["memcpy_gbps"], v["ratio"] }'
echo
echo "---- row reductions: GB/s = M*N*4 / median kernel time (20 calls after a warm-up, CUDA events); memcpy = DtoD of the same bytes, 2*bytes/time ----"
printf '%-24s %-12s %-10s %10s %10s %12s %7s\n' host MxN bad us GB/s memcpy_GB/s ratio
cat log/reduce-*.txt 2>/dev/null | awk '/^RESULT reduce / {
    for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    printf "%-24s %-12s %-10s %10s %10s %12s %7s\n", v["host"], v["shape"], v["mismatches"], v["us"], v["gbps"], v["memcpy_gbps"], v["ratio"] }'
echo
echo "---- sample cases: FAIL / REFUSED lines (refusals are expected: shapes the requires exclude) ----"
grep -hE "^(FAIL|REFUSED) " log/ew-apply.txt log/reduce-*.txt log/copy4.txt log/hello-world.txt log/cuda-graph.txt \
    log/printing.txt log/layout-algebra.txt log/numeric-types.txt log/tensor-ssa.txt log/predicated-add.txt log/tensors.txt 2>/dev/null || echo "(none)"
echo
echo "---- partial tile (must be refused) ----"
grep -h "^REFUSED" log/host-refuse-M1000.txt 2>/dev/null || echo "(no refusal printed: see log/host-refuse-M1000.txt)"
echo
echo "---- launch overhead (host us per call; median of 5 rounds of 10000) ----"
grep -hE "^(launch|check only|graph replay|host call|host check)" log/bench-launch.txt 2>/dev/null
grep -h "goal <= 3 us" log/bench-launch.txt 2>/dev/null
grep -h "^RESULT" log/bench-launch.txt 2>/dev/null
echo
echo "---- tensor-core GEMM (log/gemm-sm80.txt): cases not PASS, then TFLOP/s = 2*M*N*K / median time beside torch.matmul ----"
if [ -n "$gemm_skip" ]; then
    echo "(skipped: $gemm_skip)"
else
    grep -hE '^(gemm .*: (FAIL|REFUSED)|gemm_check: ERROR)' log/gemm-sm80.txt 2>/dev/null || echo "(every case PASS)"
    grep -h '^|' log/gemm-sm80.txt 2>/dev/null || echo "(no benchmark table: see log/gemm-sm80.txt)"
fi
