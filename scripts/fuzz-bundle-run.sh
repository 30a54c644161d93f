#!/usr/bin/env bash
# The long fuzz run of a bundle made by `scripts/fuzz.sh bundle DIR`, on a machine with many cores
# and no Rust: every target at once, each in libFuzzer's fork mode with JOBS processes, for SECONDS,
# under the same bounds as scripts/fuzz.sh (10 s and 2 GiB per input). Prints, per target, the
# last status line (runs, coverage, oom/timeout/crash counts) and any crashing input's first lines.
#   bash run.sh SECONDS JOBS
set -uo pipefail
cd "$(dirname "$0")"
seconds=${1:-600} jobs=${2:-4}
for t in pipeline layout manifest lsp; do
    [ -x "bin/$t" ] || xz -dkf "bin/$t.xz"
    mkdir -p "out/corpus/$t" "out/artifacts/$t"
    ("bin/$t" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        "out/corpus/$t" "corpus/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -malloc_limit_mb=2048 -max_len=102400 -dict="dict/$t.dict" \
        -artifact_prefix="out/artifacts/$t/" >"out/$t.log" 2>&1) &
done
wait
for t in pipeline layout manifest lsp; do
    echo "== $t ($jobs processes, $seconds s)"
    grep -E "^#[0-9]+: cov" "out/$t.log" | tail -1
    grep -E "INFO: fuzzed for|panicked|ERROR: libFuzzer" "out/$t.log" | sort | uniq -c | head -10
    for f in "out/artifacts/$t"/*; do
        [ -f "$f" ] && { echo "-- $f"; head -c 600 "$f"; echo; }
    done
done
