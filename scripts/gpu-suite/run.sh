#!/usr/bin/env bash
# GPU suite (issue 6 + host functions; every sample, the tensor-core GEMM included, checked from Python
# against torch by python/tests where python3 imports torch and pytest).
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
# The same cubin's f32 instances (the host functions are generic: the call picks by dtype).
check host-f32-2048        $CR host-add $EW --dtype f32 --m 2048 --n 2048 --iters 20
check host-f32-16384       $CR host-add $EW --dtype f32 --m 16384 --n 16384 --iters 20
check host-f32-16384x8192  $CR host-add $EW --dtype f32 --m 16384 --n 8192 --iters 20
check host-refuse-M1000    $CR host-refuse $EW elementwise_add --m 1000 --n 2048
check host-c-example       bin/host_add_c $EW 2048 2048
check host-rust-example    bin/host_add_rust $EW 2048 2048
check rust-build-example   bin/rust_build_example
check host-c-reduce        bin/host_reduce_c cubin/reduce_sum.cubin cubin/reduce_sum_tiled_copy.cubin 4096
check bench-launch         bin/cute-bench-launch cubin/vector_add.cubin --launches 10000 --rounds 5 --host $EW
# --- every sample (and the Python API) on the GPU, from Python against torch references ---
# python/tests of the checkout this suite was built in (../../python/tests), with the cutec wheel
# (python/cutec-*.whl, built by build.sh) installed into a temporary folder; the GPU machine has
# torch and pytest. Timings of the samples beside torch, Triton and CuTe DSL: scripts/gpu-suite/python.sh.
PYTESTS=../../python/tests
py_skip=
rm -rf /tmp/cutec-suite-site
if ! python3 -c 'import torch, pytest' >/dev/null 2>&1; then
    py_skip="python3 cannot import torch and pytest"
elif ! ls python/cutec-*.whl >/dev/null 2>&1; then
    py_skip="python/cutec-*.whl absent (suite built by an older build.sh?)"
elif [ ! -d "$PYTESTS" ]; then
    py_skip="$PYTESTS absent (run.sh runs from .device/suite of a checkout)"
elif ! python3 -m pip install -q --no-index --no-deps --target /tmp/cutec-suite-site python/cutec-*.whl; then
    py_skip="pip cannot install python/cutec-*.whl"
fi
# A test that hangs (a kernel waiting on a barrier nobody completes) must not hold a row for the
# row's 300 s and the next rows after it: with pytest-timeout (the GPU image has it) each test
# gets 120 s, then the run dumps every thread's stack and exits (`thread` method), so the row
# fails at once and its log names the test.
PYTEST=(python3 -m pytest)
if python3 -c 'import pytest_timeout' >/dev/null 2>&1; then
    PYTEST+=(--timeout 120 --timeout-method thread)
fi
if [ -z "$py_skip" ]; then
    export PYTHONPATH=/tmp/cutec-suite-site CUTEC_CUBINS="$PWD/cubin"
    check python-tests      "${PYTEST[@]}" "$PYTESTS" -v -rs -p no:cacheprovider
    # stmatrix epilogues (samples/stmatrix_epilogue.cute, sm_90a): mma.sync and wgmma accumulators
    # through stmatrix(.trans) to shared and global memory, bit-exact against the universal copy and torch.
    check stmatrix-epilogue "${PYTEST[@]}" "$PYTESTS/test_gpu_samples.py" -v -rs -p no:cacheprovider -k stmatrix
    # The Hopper GEMM (samples/gemm_sm90.cute, sm_90a) in its four operand layouts (TN, NT, NN, TT:
    # K-major and MN-major wgmma tiles, 64-row TMA boxes for M-/N-major operands) x bf16/f16 x
    # 16-bit/f32 C, tile multiples and tails against float64, and the refusals of shapes TMA cannot take.
    check gemm-sm90-layouts "${PYTEST[@]}" "$PYTESTS/test_gpu_samples.py" -v -rs -p no:cacheprovider -k "gemm_sm90 and not fp8 and not persistent and not epilogue and not addmm and not bmm and not splitk and not multicast and not pingpong"
    # The persistent Hopper GEMM (samples/gemm_sm90_persistent.cute): grid = min(tiles, 132), TMA-store
    # epilogue, the tile picked per call (128x256, 128x128, 64x128, 128x64); four layouts x bf16/f16,
    # tiles fewer and more than SMs, one-k-tile problems and tails against float64, and the refusals.
    check gemm-sm90-persistent "${PYTEST[@]}" "$PYTESTS/test_gpu_samples.py" -v -rs -p no:cacheprovider -k "gemm_sm90_persistent and not multicast"
    # The persistent GEMM with TMA multicast (samples/gemm_sm90_persistent_multicast.cute): clusters of 2
    # blocks walking pairs of tiles (M tiles 2i, 2i+1 of one N tile) in lockstep, each loading half of
    # the shared B k-tile into both rings, for 128x256/128x128 tiles with >= 132 pairs, else the plain
    # kernel; four layouts x bf16/f16, odd M-tile counts (padding tiles), tails, many waves, the
    # fallbacks. A hang is a barrier missing the peer's arrival or bytes: pytest-timeout names the shape.
    check gemm-sm90-persistent-multicast "${PYTEST[@]}" "$PYTESTS/test_gpu_samples.py" -v -rs -p no:cacheprovider -k gemm_sm90_persistent_multicast
    # The ping-pong persistent GEMM (samples/gemm_sm90_pingpong.cute): each consumer warpgroup computes
    # whole tiles, the two taking turns at the tensor cores through named barriers (one's epilogue over
    # the other's main loop); four layouts x bf16/f16, blocks with one, two and an odd count of tiles,
    # k-tile counts of one, the stages and twice the stages, tails against float64, the refusals. A
    # hang is a turn or a barrier never arriving: pytest-timeout names the shape.
    check gemm-sm90-pingpong "${PYTEST[@]}" "$PYTESTS/test_gpu_samples.py" -v -rs -p no:cacheprovider -k gemm_sm90_pingpong
    # Split-K (samples/gemm_sm90_splitk.cute): few output tiles and long K, a block per (tile, K slice)
    # into an f32 workspace, then a fixed-order reduction; four layouts x bf16/f16, skinny M/N, one tile
    # in 16 slices, uneven slices, unsplit shapes and refusals against float64, bit-identical reruns;
    # and the persistent kernel's full waves with the last wave's tiles split (5000x5000x1024, 8200x8200x1024, ...).
    check gemm-sm90-splitk  "${PYTEST[@]}" "$PYTESTS/test_gpu_samples.py" -v -rs -p no:cacheprovider -k gemm_sm90_splitk
    # The Hopper GEMM in 2x1 clusters sharing the B tile through TMA multicast (samples/gemm_sm90_multicast.cute):
    # TN bf16/f16, odd M-tile counts (a padding block in the last cluster of each N tile), one k-tile,
    # tails and many clusters against float64. A hang here is a barrier that misses a block's arrival
    # or bytes: pytest-timeout ends the row and names the shape.
    check gemm-sm90-multicast "${PYTEST[@]}" "$PYTESTS/test_gpu_samples.py" -v -rs -p no:cacheprovider -k gemm_sm90_multicast
    # Fused epilogues and the batched GEMM on the persistent kernel (samples/gemm_sm90_epilogue.cute,
    # gemm_sm90_addmm.cute, gemm_sm90_bmm.cute): linear + none/relu/gelu/gelu_tanh/silu with a bias
    # along N, addmm (alpha, beta, C full or broadcast, TN/TT, a bias along M) and torch.bmm (TN/TT,
    # strided and permuted batches), bf16/f16, every tile, tails and refusals against float64.
    check gemm-sm90-epilogue "${PYTEST[@]}" "$PYTESTS/test_gpu_samples.py" -v -rs -p no:cacheprovider -k "gemm_sm90_epilogue or gemm_sm90_addmm or gemm_sm90_bmm"
    # The FP8 GEMM (samples/gemm_sm90_fp8.cute, and gemm_sm90_fp8_persistent.cute and _fast.cute: the same host
    # functions on the persistent kernel, promoting and not): e4m3/e5m2 pairs x bf16/f16/f32 C with per-tensor and row-wise scales,
    # tails, fewer and more tiles than SMs, against the dequantized float64 product and torch._scaled_mm;
    # -s prints each measured error.
    check gemm-sm90-fp8     "${PYTEST[@]}" "$PYTESTS/test_gpu_samples.py" -v -s -rs -p no:cacheprovider -k gemm_sm90_fp8
    # FlashAttention forward (samples/flash_attention_sm90.cute, sm_90a): O and LSE against torch's
    # SDPA and logsumexp over seqlens 1..4096 (unequal too), causal or not, GQA 1/4, D 64/128/256, bf16/f16,
    # and up to 8192 (GQA 1/8, bf16).
    check flash-attention   "${PYTEST[@]}" "$PYTESTS/test_gpu_flash_attention.py" -q -rs -p no:cacheprovider
    # Its variable-length batches (samples/flash_attention_varlen_sm90.cute: packed sequences,
    # cu_seqlens): each sequence against the same reference, sequences without queries or keys,
    # many shorter than a tile, a short max_seqlen_q, bad offsets, bit-equality with the fixed-length
    # kernel on equal lengths.
    check flash-attention-varlen "${PYTEST[@]}" "$PYTESTS/test_gpu_flash_attention_varlen.py" -q -rs -p no:cacheprovider
    # Decoding (samples/flash_attention_decode_sm90.cute and _decode_paged_sm90.cute: split K/V merged
    # by each tile's last split, the query heads of a K/V head packed into its tiles, cache_seqlens,
    # paged caches, causal over the cache): few queries over caches up to 16k keys, GQA 1/4/8, D
    # 64/128/256, bf16/f16, workspaces of one to 200 splits, lengths of none to all.
    check flash-attention-decode "${PYTEST[@]}" "$PYTESTS/test_gpu_flash_attention_decode.py" -q -rs -p no:cacheprovider
    # And their backward (samples/flash_attention_varlen_bwd_sm90.cute), chained to that forward: dQ,
    # dK, dV of each sequence against autograd, a short max_seqlen_k (NaN dQ), bad offsets,
    # bit-equality of dK and dV with the fixed-length backward on equal lengths.
    check flash-attention-varlen-bwd timeout 240 "${PYTEST[@]}" "$PYTESTS/test_gpu_flash_attention_varlen_bwd.py" -q -rs -p no:cacheprovider
    # JAX (cutec.jax.register: host functions as XLA FFI custom calls): jax.jit programs calling
    # fast_add's, add_ilp's, elementwise_add's and reduce_sum's host functions among jnp ops, against
    # jnp; a tensor read and written; a run-time error through XLA. Skips when python3 has no JAX
    # with a CUDA jaxlib.
    check jax               "${PYTEST[@]}" "$PYTESTS/test_gpu_jax.py" -v -rs -p no:cacheprovider
    # Tuning (cutec.tune on samples/fast_add.cute's add_tuned; -s prints the report): needs the
    # compiler, which this suite does not carry, so it skips unless the cutec-compiler wheel is
    # installed (scripts/gpu-suite/build-wheels.sh, python/wheel-install-test.sh) or CUTEC is set.
    check tune              "${PYTEST[@]}" "$PYTESTS/test_gpu_tune.py" -v -s -rs -p no:cacheprovider
    # FlashAttention backward (samples/flash_attention_bwd_sm90.cute, sm_90a): dQ, dK, dV against torch
    # autograd of SDPA over seqlens 1..1000 (unequal too), causal or not, GQA 1/4, D 64/128/256, bf16/f16,
    # and up to 8192 (GQA 1/8, bf16).
    # Each test under pytest-timeout where the image has it; the row's `timeout 240` on top, so a
    # kernel that never returns costs this row only.
    check flash-attention-bwd timeout 240 "${PYTEST[@]}" "$PYTESTS/test_gpu_flash_attention_bwd.py" -x -q -rs -p no:cacheprovider
else
    echo "=== python-tests: SKIP: $py_skip"
    rows+=("$(printf '%-34s %-14s %4s' python-tests SKIP -)")
fi

if command -v compute-sanitizer >/dev/null; then
    check sanitizer-checked compute-sanitizer --report-api-errors no $CR checked cubin/vector_add.cubin --static cubin/scale.cubin --n 4099
    check sanitizer-host    compute-sanitizer --report-api-errors no $CR host-add $EW --m 256 --n 512 --iters 1
    # The samples' kernels from Python on small shapes (CUTEC_TEST_SHAPES=small): reductions,
    # apply, predicated add (out-of-bounds reads of A and B would show here), the tensor-core
    # kernels (mma.sync, cp.async, ldmatrix, stmatrix, dynamic shared memory) and refused calls.
    if [ -z "$py_skip" ]; then
        check sanitizer-python  env CUTEC_TEST_SHAPES=small compute-sanitizer --error-exitcode 9 --report-api-errors no \
            python3 -m pytest "$PYTESTS/test_gpu_samples.py" -q -p no:cacheprovider -k "reductions or apply or predicated or mma or gemm or stmatrix"
        # The attention forward on a tail tile (17 queries, 128 keys): TMA boxes past the ends, masks.
        check sanitizer-flash   compute-sanitizer --error-exitcode 9 --report-api-errors no \
            python3 -m pytest "$PYTESTS/test_gpu_flash_attention.py" -q -p no:cacheprovider -k "17x128 and mha"
        # Variable-length batches: tiles across sequences' ends, empty sequences, clamped bad offsets.
        check sanitizer-flash-varlen compute-sanitizer --error-exitcode 9 --report-api-errors no \
            python3 -m pytest "$PYTESTS/test_gpu_flash_attention_varlen.py" -q -p no:cacheprovider -k "(short or empty or one) and mha and bfloat16 or bad_offsets"
        check sanitizer-flash-varlen-bwd timeout 170 compute-sanitizer --error-exitcode 9 --report-api-errors no \
            python3 -m pytest "$PYTESTS/test_gpu_flash_attention_varlen_bwd.py" -q -p no:cacheprovider -k "(short or empty or one) and mha and bfloat16 and (full or causal) or bad_offsets or max_seqlen"
        # Decoding: the consumers' Q loads of packed rows, split shares past a short cache, the last
        # split's merge, one split's direct stores; a paged cache's 16-key boxes past its table and a
        # window's first tiles.
        check sanitizer-flash-decode compute-sanitizer --error-exitcode 9 --report-api-errors no \
            python3 -m pytest "$PYTESTS/test_gpu_flash_attention_decode.py" -q -p no:cacheprovider -k "(1x17 or 17x300 or 40x1000) and bfloat16 or cache_seqlens and mha or workspace or table_ends or paged_window"
        # The backward on the same tail shapes: TMA boxes past the ends, dQ atomics, predicated dK/dV stores.
        check sanitizer-flash-bwd timeout 120 compute-sanitizer --error-exitcode 9 --report-api-errors no \
            python3 -m pytest "$PYTESTS/test_gpu_flash_attention_bwd.py" -q -p no:cacheprovider -k "17x128 and mha"
    fi
fi

echo
echo "================ suite summary ================"
printf '%s\n' "${rows[@]}"
echo
echo "---- elementwise add: GB/s = 3*M*N*elem / median kernel time (20 runs, CUDA events); memcpy = DtoD of the same bytes, 2*bytes/time ----"
printf '%-28s %-5s %-12s %-10s %10s %10s %12s %7s\n' host dtype MxN mismatches us GB/s memcpy_GB/s ratio
cat log/host-*.txt 2>/dev/null | awk '/^RESULT host=/ {
    for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    printf "%-28s %-5s %-12s %-10s %10s %10s %12s %7s\n", v["host"], v["dtype"], v["m"] "x" v["n"], v["mismatches"], v["us"], v["gbps"], v["memcpy_gbps"], v["ratio"] }'
echo
echo "---- partial tile (must be refused) ----"
grep -h "^REFUSED" log/host-refuse-M1000.txt 2>/dev/null || echo "(no refusal printed: see log/host-refuse-M1000.txt)"
echo
echo "---- launch overhead (host us per call; median of 5 rounds of 10000) ----"
grep -hE "^(launch|check only|graph replay|host call|host check)" log/bench-launch.txt 2>/dev/null
grep -h "goal <= 3 us" log/bench-launch.txt 2>/dev/null
grep -h "^RESULT" log/bench-launch.txt 2>/dev/null
echo
echo "---- Python tests (log/python-tests.txt): the failures, else the summary ----"
if [ -n "$py_skip" ]; then
    echo "(skipped: $py_skip)"
else
    grep -hE '^(FAILED|ERROR) ' log/python-tests.txt 2>/dev/null || tail -1 log/python-tests.txt
fi
