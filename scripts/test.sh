#!/usr/bin/env bash
# Runs every test: cargo tests (unit, integration, snapshots), the lit suite against `cutec`, the
# pycute differential sample for the layout algebra, a mutation-fuzz sample of `cutec opt`, a minute
# of each libFuzzer target (scripts/fuzz.sh), the Python extension's tests (its wheel built and installed; the tests that need a GPU skip here),
# the compiler wheel installed into a clean virtualenv (python/wheel-install-test.sh), ruff
# over the repository's Python, rustfmt and clippy over the Rust, the architecture invariants
# (scripts/check-architecture.sh) and the VS Code extension's checks (when npm is present).
# Installs what it needs first (scripts/setup.sh).
# Ends with one line: `summary: N passed, N failed, N skipped`.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || { echo "summary: 0 passed, 1 failed, 0 skipped"; exit 1; }
export PYTHONPATH="$PWD/.tools/python${PYTHONPATH:+:$PYTHONPATH}"
# Where cargo puts the binaries (CARGO_TARGET_DIR is honoured).
TGT=${CARGO_TARGET_DIR:-$PWD/target}
export CUTEC_BIN_DIR="$TGT/debug"
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
    python3 scripts/pycute_diff.py --cases "${PYCUTE_CASES:-12000}" --seed "${PYCUTE_SEED:-1}" --bin "$TGT/debug/cute-layout" 2>&1 | tee "$log/diff.txt" | tail -5
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
python3 scripts/fuzz_ir.py --cases "${FUZZ_IR_CASES:-200}" --seed "${FUZZ_IR_SEED:-1}" --bin "$TGT/debug/cutec" 2>&1 | tee "$log/fuzz.txt" | tail -3
# One fuzz run counts as one test: it passes only with zero crashes.
if grep -qE "^fuzz-ir: [0-9]+ cases, 0 crashes" "$log/fuzz.txt"; then add 1 0 0; else add 0 1 0; fi

echo "== libFuzzer targets (scripts/fuzz.sh: .cute to PTX, layout expressions, manifests, the LSP protocol)"
# Each target runs FUZZ_SECONDS (default 60) from its checked-in corpus (fuzz/corpus); one test per
# target, passing only with no crash, timeout (10 s an input) or out-of-memory (2 GiB).
bash scripts/fuzz.sh check "${FUZZ_SECONDS:-60}" 2>&1 | tee "$log/libfuzzer.txt" | grep -E "^(fuzz|==|SUMMARY|thread)" | tail -20
line=$(grep -E "^fuzz: [0-9]+ passed, [0-9]+ failed" "$log/libfuzzer.txt" | tail -1)
if [ -n "$line" ]; then
    fp=$(echo "$line" | sed -E 's/^fuzz: ([0-9]+) passed.*/\1/'); ff=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    add "$fp" "$ff" 0
else
    tail -20 "$log/libfuzzer.txt"; add 0 1 0
fi

echo "== python: the cutec extension (python/build-wheel.sh, then pytest python/tests)"
if bash python/build-wheel.sh "$log/wheel" > "$log/wheel.txt" 2>&1 \
    && python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-index --no-deps --target "$log/site" "$log"/wheel/cutec-*.whl; then
    tail -1 "$log/wheel.txt"
    CUTEC="$TGT/debug/cutec" PYTHONPATH="$log/site:$PWD/.tools/pyext" python3 -m pytest python/tests -q -rs -p no:cacheprovider 2>&1 \
        | tee "$log/pytest.txt" | grep -vE "^SKIPPED" | tail -15
    line=$(tail -1 "$log/pytest.txt")
    # The skipped ones say why (`SKIPPED [N] FILE:LINE: reason`): the first reason, once.
    why=$(grep -m1 "^SKIPPED" "$log/pytest.txt" | sed -E 's/^SKIPPED \[[0-9]+\] [^:]+:[0-9]+: //')
    [ -n "$why" ] && echo "pytest: skipped tests say: $why (they run on the GPU machine: scripts/gpu-suite/python.sh)"
    count() { echo "$line" | grep -oE "[0-9]+ $1" | grep -oE "^[0-9]+" || echo 0; }
    pp=$(count passed); pf=$(( $(count failed) + $(count error) )); ps=$(count skipped)
    if [ "$pp" -eq 0 ] && [ "$pf" -eq 0 ]; then pf=1; echo "pytest ran no test: $line"; fi
    add "$pp" "$pf" "$ps"
else
    tail -20 "$log/wheel.txt"
    echo "python: the wheel could not be built or installed"
    add 0 1 0
fi

echo "== python: the compiler wheel in a clean virtualenv (python/build-compiler-wheel.sh, python/wheel-install-test.sh)"
# One test: the cutec-compiler wheel (a release build of cutec: minutes the first time) and the
# runtime wheel installed with pip --no-index into a new virtualenv, PATH without cargo or LLVM,
# then a sample compiled from Python (cold, cached, consts, an error), `python -m cutec`, and its
# manifest read. ptxas and libdevice: .tools/python's `nvidia` package, as if pip-installed there.
if [ -f "$log"/wheel/cutec-*.whl ] && bash python/build-compiler-wheel.sh "$log/wheel" > "$log/cwheel.txt" 2>&1; then
    CUTEC_TEST_NVIDIA=.tools/python bash python/wheel-install-test.sh "$log/wheel" > "$log/wheel-install.txt" 2>/dev/null
    wit_rc=$?
    grep -E "^(wheel|first build|cached build|walkthrough)" "$log/wheel-install.txt"
    if [ "$wit_rc" -eq 0 ] && [ "$(tail -1 "$log/wheel-install.txt")" = "walkthrough: PASS" ]; then add 1 0 0; else tail -20 "$log/wheel-install.txt"; add 0 1 0; fi
else
    tail -20 "$log/cwheel.txt" 2>/dev/null
    echo "python: the compiler wheel could not be built (or the runtime wheel is missing)"
    add 0 1 0
fi

echo "== python lint (ruff check, ruff format --check)"
# One check: the repository's Python (ruff.toml says which files and rules) lints clean and is formatted.
ruff_ok=1
.tools/ruff/bin/ruff check -q . >"$log/ruff.txt" 2>&1 || ruff_ok=0
.tools/ruff/bin/ruff format --check -q . >>"$log/ruff.txt" 2>&1 || ruff_ok=0
if [ "$ruff_ok" -eq 1 ]; then
    echo "ruff: ok"; add 1 0 0
else
    tail -40 "$log/ruff.txt"; echo "ruff: FAILED (.tools/ruff/bin/ruff check --fix . and ruff format . fix most)"; add 0 1 0
fi

echo "== rust format (cargo fmt --check, rustfmt.toml)"
# One check: every Rust file of the four cargo workspaces (the main one, python/, examples/rust-build,
# fuzz) is as rustfmt writes it.
fmt_ok=1
for ws in . python examples/rust-build fuzz; do
    (cd "$ws" && cargo fmt --all --check) >>"$log/fmt.txt" 2>&1 || fmt_ok=0
done
if ! cargo fmt --version >/dev/null 2>&1; then
    echo "rustfmt: skipped (this Rust toolchain has no rustfmt component: rustup component add rustfmt)"; add 0 0 1
elif [ "$fmt_ok" -eq 1 ]; then
    echo "rustfmt: ok"; add 1 0 0
else
    grep -E "^Diff in" "$log/fmt.txt" | head -20; echo "rustfmt: FAILED (run cargo fmt --all in each workspace)"; add 0 1 0
fi

echo "== rust lints (cargo clippy --workspace --all-targets -- -D warnings)"
if ! cargo clippy --version >/dev/null 2>&1; then
    echo "clippy: skipped (this Rust toolchain has no clippy component: rustup component add clippy)"; add 0 0 1
elif cargo clippy -q --workspace --all-targets -- -D warnings >"$log/clippy.txt" 2>&1; then
    echo "clippy: ok"; add 1 0 0
else
    grep -E "^(error|warning)" -A5 "$log/clippy.txt" | head -60; echo "clippy: FAILED"; add 0 1 0
fi

echo "== architecture invariants (scripts/check-architecture.sh, docs/architecture.md)"
# One test per invariant: the script prints `check-architecture: N passed, N failed`.
bash scripts/check-architecture.sh 2>&1 | tee "$log/arch.txt" | grep -v "^ok "
line=$(grep -E "^check-architecture: [0-9]+ passed, [0-9]+ failed" "$log/arch.txt" | tail -1)
if [ -n "$line" ]; then
    ap=$(echo "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/'); af=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    add "$ap" "$af" 0
else
    add 0 1 0
fi

echo "== VS Code extension (editors/vscode: npm ci, compile, lint, grammar test)"
# One check: the extension installs from its lock file, compiles (strict TypeScript), lints clean,
# and its grammar passes its test on VS Code's TextMate engine. Skipped where npm is missing.
if command -v npm >/dev/null 2>&1; then
    if (cd editors/vscode && npm ci --no-audit --no-fund && npm run compile && npm run lint && npm test) >"$log/vscode.txt" 2>&1; then
        echo "vscode extension: ok"; add 1 0 0
    else
        tail -30 "$log/vscode.txt"; echo "vscode extension: FAILED"; add 0 1 0
    fi
else
    echo "vscode extension: skipped (npm not found; install Node.js 20 and npm to check it)"; add 0 0 1
fi

rm -rf "$log"
echo "summary: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
