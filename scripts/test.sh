#!/usr/bin/env bash
# Runs every test: cargo tests (unit, integration, snapshots), the lit suite against `cutec`, the
# pycute differential sample for the layout algebra, and a mutation-fuzz sample of `cutec opt`.
# Installs what it needs first (scripts/setup.sh).
# Ends with one line: `summary: N passed, N failed, N skipped`.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || { echo "summary: 0 passed, 1 failed, 0 skipped"; exit 1; }
export PYTHONPATH="$PWD/.tools/python${PYTHONPATH:+:$PYTHONPATH}"
# The binaries under test are where cargo puts them: $CARGO_TARGET_DIR when set (lit reads CUTEC_BIN_DIR).
bin="${CARGO_TARGET_DIR:-target}/debug"
export CUTEC_BIN_DIR="${CUTEC_BIN_DIR:-$bin}"
log=$(mktemp -d)
passed=0; failed=0; skipped=0
add() { passed=$((passed + $1)); failed=$((failed + $2)); skipped=$((skipped + $3)); }

echo "== cargo build"
# The libraries too: the C tests link libcute_runtime.a and .so.
if ! cargo build --workspace 2>&1 | tail -3; then add 0 1 0; fi

echo "== cargo test"
cargo test --workspace --no-fail-fast 2>&1 | tee "$log/cargo.txt" | grep -E "^(test result|error|failures:|    [a-z_:]+$)|panicked" 
cargo_rc=${PIPESTATUS[0]}
read -r p f i < <(awk '/^test result:/ {for (k = 1; k <= NF; k++) { if ($k ~ /^passed/) p += $(k-1); if ($k ~ /^failed/) f += $(k-1); if ($k ~ /^ignored/) i += $(k-1) } } END { print p+0, f+0, i+0 }' "$log/cargo.txt")
if [ "$cargo_rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "cargo test failed to build or run (exit $cargo_rc)"; fi
add "$p" "$f" "$i"

echo "== lit (tests/lit)"
python3 .tools/python/bin/lit tests/lit -sv 2>&1 | tee "$log/lit.txt" | grep -vE "^(PASS|UNSUPPORTED):" | tail -30
lit_count() { sed -nE "s/^  $1 *: *([0-9]+).*/\1/p" "$log/lit.txt" | head -1; }
p=$(lit_count Passed); f=$(lit_count Failed); u=$(lit_count Unsupported)
[ -n "$u" ] && [ "$u" -gt 0 ] && echo "lit: $u test(s) skipped: they REQUIRE a GPU and none was found (CI has none; run them on the device machine)"
if [ -z "$p$f" ]; then f=1; fi
add "${p:-0}" "${f:-0}" "${u:-0}"

if [ -f scripts/pycute_diff.py ]; then
    echo "== pycute differential sample"
    python3 scripts/pycute_diff.py --cases "${PYCUTE_CASES:-12000}" --seed "${PYCUTE_SEED:-1}" --bin "$bin/cute-layout" 2>&1 | tee "$log/diff.txt" | tail -5
    line=$(grep -E "^pycute-diff: [0-9]+ passed, [0-9]+ failed" "$log/diff.txt" | tail -1)
    if [ -n "$line" ]; then
        dp=$(echo "$line" | sed -E 's/^pycute-diff: ([0-9]+) passed.*/\1/'); df=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
        # One differential run counts as one test: it passes only with zero mismatches.
        if [ "$df" -eq 0 ] && [ "$dp" -gt 0 ]; then add 1 0 0; else add 0 1 0; fi
    else
        add 0 1 0
    fi
fi

echo "== cute IR fuzz sample (cutec opt must reject bad IR, never crash)"
python3 scripts/fuzz_ir.py --cases "${FUZZ_IR_CASES:-200}" --seed "${FUZZ_IR_SEED:-1}" --bin "$bin/cutec" 2>&1 | tee "$log/fuzz.txt" | tail -3
# One fuzz run counts as one test: it passes only with zero crashes.
if grep -qE "^fuzz-ir: [0-9]+ cases, 0 crashes" "$log/fuzz.txt"; then add 1 0 0; else add 0 1 0; fi

rm -rf "$log"
echo "summary: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
