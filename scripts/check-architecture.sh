#!/usr/bin/env bash
# Checks the architecture invariants of docs/architecture.md, each by a command whose output must be
# empty (or equal what is stated). Prints one line per invariant and, last,
# `check-architecture: N passed, N failed`. Exit status 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0; failed=0
check() { # check NAME OUTPUT: passes when OUTPUT is empty
    if [ -z "$2" ]; then
        passed=$((passed + 1)); echo "ok    $1"
    else
        failed=$((failed + 1)); echo "FAIL  $1"; echo "$2" | head -20 | sed 's/^/      /'
    fi
}
# The normal (non-dev) dependency closure of a package, one name a line.
deps() { cargo tree -q -p "$1" -e normal --prefix none --format '{p}' 2>&1 | awk '{print $1}' | sort -u; }
# The workspace's own crates and the MLIR bindings, as they may appear in a closure.
mlir='^(melior|mlir-sys|melior-macro|cute-dialect)$'

check "cute-abi is std only (no dependency at all)" "$(deps cute-abi | grep -vx cute-abi)"
check "cute-layout depends on cute-abi alone" "$(deps cute-layout | grep -vxE 'cute-layout|cute-abi')"
check "cute-lang links no MLIR" "$(deps cute-lang | grep -E "$mlir")"
check "cute-lsp links no MLIR" "$(deps cute-lsp | grep -E "$mlir")"
check "cute-runtime links neither MLIR nor the front end nor the algebra" \
    "$(deps cute-runtime | grep -E "$mlir|^(cute-lang|cute-layout|cute-compiler)$")"
check "the Python extension links neither MLIR nor the front end" \
    "$(cd python && cargo tree -q -e normal --prefix none --format '{p}' 2>&1 | awk '{print $1}' | grep -E "$mlir|^(cute-lang|cute-layout|cute-compiler)$")"
check "the passes import nothing from the front end (cute_lang)" "$(git grep -n 'cute_lang' -- compiler/src/passes)"
check "elaboration never imports the IDE layer" "$(git grep -nE 'crate::ide|super::ide' -- lang/src/elab)"
check "one writer and one parser of the manifest (only cute-abi writes or reads its header line)" \
    "$(git grep -nE 'strip_prefix\("cutec-manifest|"cutec-manifest \{' -- '*.rs' | grep -v '^abi/')"
check "the target is a type: no arch name compared as a string outside cute-abi" \
    "$(git grep -nE '== *"sm_[0-9]+a?"|"sm_[0-9]+a?" *==' -- '*.rs' | grep -v '^abi/')"
check "only compiler/src/pipeline.rs orders the passes" \
    "$(git grep -ln 'fn cute_passes' -- '*.rs' | grep -vx compiler/src/pipeline.rs)"
sizes=$(python3 scripts/check_sizes.py | grep -v '^check-sizes:')
check "no file over 1,500 lines in compiler/, lang/, runtime/; no function over 200 lines" "$sizes"
echo "check-architecture: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
