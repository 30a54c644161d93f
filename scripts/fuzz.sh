#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of fuzz/ (docs/pipeline.md, "Fuzzing") on stable Rust, as cargo-fuzz
# would: libfuzzer-sys builds libFuzzer with `cc`, and the rustc flags below are the coverage
# instrumentation `cargo fuzz build` passes. What stable cannot give is a sanitizer (`-Zsanitizer`
# is nightly-only), so there is no AddressSanitizer: the targets find panics (overflow checks and
# debug assertions are on), aborts, stack overflows, hangs and memory blow-ups.
#
#   scripts/fuzz.sh build                       build every target (once; cargo rebuilds what changed)
#   scripts/fuzz.sh run TARGET [SECONDS]        fuzz TARGET for SECONDS (default $FUZZ_SECONDS or 60)
#   scripts/fuzz.sh check [SECONDS]             build, then run every target for SECONDS each; ends
#                                               with `fuzz: N passed, N failed` (scripts/test.sh)
#   scripts/fuzz.sh long [SECONDS]              every target in turn for SECONDS (default 3600),
#                                               the corpus growing in fuzz/out/corpus/TARGET
#   scripts/fuzz.sh repro TARGET FILE...        run the target once on each FILE (a crash's input)
#   scripts/fuzz.sh min TARGET FILE             minimise a crashing FILE (libFuzzer -minimize_crash)
#   scripts/fuzz.sh bundle DIR                  the built targets (stripped, xz), corpus and
#                                               dictionaries in DIR with a run.sh, for a long run on a
#                                               machine with more cores and no Rust (its header says how)
#
# A run fails on any crash, timeout (one input over 10 s) or out-of-memory (over 2 GiB): the issue's
# bound for an input of at most 100 KB. libFuzzer writes the input to fuzz/out/artifacts/TARGET/;
# docs/pipeline.md ("Fuzzing") says how to turn it into a regression test.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
TARGETS=(pipeline layout manifest lsp)
# Its own target directory (FUZZ_TARGET_DIR, else fuzz/ under the cargo one): the instrumented
# crates never mix with the workspace's builds.
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-${CARGO_TARGET_DIR:-$root/target}/fuzz}
triple=$(rustc -vV | sed -n 's/^host: //p')
bin_dir=$CARGO_TARGET_DIR/$triple/release
out=$root/fuzz/out

# cargo-fuzz's flags (its `rustflags`); `--target` keeps them off build scripts and proc macros,
# which run inside cargo and rustc without libFuzzer's coverage symbols.
flags="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing"

build() {
    echo "fuzz: building ${TARGETS[*]} in $CARGO_TARGET_DIR"
    (cd fuzz && RUSTFLAGS="$flags" cargo build --release --target "$triple" --bins) || return 1
}

# run TARGET SECONDS [libFuzzer options...]: fuzzes from the checked-in corpus; new inputs go to
# a scratch directory (or fuzz/out/corpus/TARGET in the long runs), never into fuzz/corpus.
run() {
    local target=$1 seconds=$2 scratch
    shift 2
    scratch=${FUZZ_CORPUS_OUT:-$(mktemp -d)}
    mkdir -p "$scratch" "$out/artifacts/$target"
    ("$bin_dir/$target" "$scratch" "$root/fuzz/corpus/$target" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
        -max_len=102400 -dict="$root/fuzz/dict/$target.dict" \
        -artifact_prefix="$out/artifacts/$target/" -print_final_stats=1 "$@")
    local rc=$?
    [ -z "${FUZZ_CORPUS_OUT:-}" ] && rm -rf "$scratch"
    return $rc
}

# Runs every target for $1 seconds; one line per target and the count line.
run_all() {
    local seconds=$1 passed=0 failed=0 log
    log=$(mktemp -d)
    for t in "${TARGETS[@]}"; do
        if FUZZ_CORPUS_OUT=${2:+$2/$t} run "$t" "$seconds" >"$log/$t.txt" 2>&1; then
            passed=$((passed + 1))
            echo "fuzz $t: ok ($(stats "$log/$t.txt"))"
        else
            failed=$((failed + 1))
            grep -E "^(==[0-9]+== ERROR|SUMMARY|thread .* panicked|artifact_prefix|Test unit written)" "$log/$t.txt" | head -8
            echo "fuzz $t: FAILED ($(stats "$log/$t.txt")); the input is in $out/artifacts/$t/"
        fi
    done
    rm -rf "$log"
    echo "fuzz: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

# `N runs, N exec/s, cov N` from libFuzzer's final statistics.
stats() {
    local runs rate cov
    runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$1" | tail -1)
    rate=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$1" | tail -1)
    cov=$(grep -oE "cov: [0-9]+" "$1" | tail -1)
    echo "${runs:-0} runs, ${rate:-0} exec/s, ${cov:-cov: 0}"
}

cmd=${1:-check}
shift || true
case $cmd in
    build) build ;;
    run)
        [ $# -ge 1 ] || { echo "usage: scripts/fuzz.sh run TARGET [SECONDS]" >&2; exit 2; }
        target=$1
        shift
        run "$target" "${1:-${FUZZ_SECONDS:-60}}" "${@:2}"
        ;;
    check)
        if ! build; then
            echo "fuzz: 0 passed, ${#TARGETS[@]} failed (the targets did not build)"
            exit 1
        fi
        run_all "${1:-${FUZZ_SECONDS:-60}}"
        ;;
    long) build && run_all "${1:-3600}" "$out/corpus" ;;
    repro)
        [ $# -ge 2 ] || { echo "usage: scripts/fuzz.sh repro TARGET FILE..." >&2; exit 2; }
        target=$1
        shift
        "$bin_dir/$target" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 "$@"
        ;;
    min)
        [ $# -eq 2 ] || { echo "usage: scripts/fuzz.sh min TARGET FILE" >&2; exit 2; }
        "$bin_dir/$1" -minimize_crash=1 -max_total_time=120 -timeout=10 -rss_limit_mb=2048 \
            -exact_artifact_path="$2.min" "$2"
        echo "fuzz: the minimised input is $2.min"
        ;;
    bundle)
        [ $# -eq 1 ] || { echo "usage: scripts/fuzz.sh bundle DIR" >&2; exit 2; }
        build || exit 1
        mkdir -p "$1/bin"
        for t in "${TARGETS[@]}"; do
            strip -o "$1/bin/$t" "$bin_dir/$t" && xz -f -T0 -6 "$1/bin/$t"
        done
        cp -r fuzz/corpus fuzz/dict "$1/"
        cp scripts/fuzz-bundle-run.sh "$1/run.sh"
        du -sh "$1"
        ;;
    *) echo "usage: scripts/fuzz.sh [build | run TARGET [SECONDS] | check [SECONDS] | long [SECONDS] | repro TARGET FILE... | min TARGET FILE | bundle DIR]" >&2; exit 2 ;;
esac
