#!/usr/bin/env bash
# The Python GPU run (issue 12), on the GPU machine, from the repository root:
#   bash scripts/gpu-suite/python.sh
# after `bash scripts/gpu-suite/build-python.sh` here (it fills .device/python). Installs the cutec
# wheel with pip --no-index (into a folder on PYTHONPATH, so the machine's Python stays as it is),
# runs the Python tests (every sample against torch, the API on the GPU, the offline checks), then
# bench/overhead.py and bench/bench.py (cutec beside torch, Triton and, when .device/python/cute-dsl
# holds its wheels, CuTe DSL). Writes to $OUT (default .device/python/out): pytest.txt, pytest.xml,
# overhead.txt, bench.txt, bench.json. The last lines say PASS/FAIL of the tests and where the
# tables are. BENCH_BUDGET (seconds, default 300) bounds the benchmark.
set -uo pipefail
cd "$(dirname "$0")/../.."
P=.device/python
OUT=${OUT:-$P/out}
mkdir -p "$OUT"
PIP="python3 -m pip -q --disable-pip-version-check"
SITE=/tmp/cutec-site
rm -rf "$SITE"
if ! $PIP install --no-index --no-deps --target "$SITE" "$P"/wheel/*.whl; then
    echo "python.sh: FAIL: cannot install $P/wheel/*.whl (run scripts/gpu-suite/build-python.sh first)"
    exit 1
fi
export PYTHONPATH="$SITE"
if ls "$P"/cute-dsl/*.whl >/dev/null 2>&1; then
    rm -rf /tmp/cute-dsl-site
    $PIP install --no-index --no-deps --no-compile --target /tmp/cute-dsl-site "$P"/cute-dsl/*.whl \
        && export PYTHONPATH="$SITE:/tmp/cute-dsl-site"
fi
export CUTEC_CUBINS="$PWD/$P/cubin"
python3 -c 'import cutec, torch; print(f"cutec {cutec.__version__} ({cutec.__file__}), torch {torch.__version__}, driver: {cutec.driver_available()}, devices: {cutec.device_count()}")' 2>&1 | tee "$OUT/versions.txt"

echo "=== pytest python/tests"
python3 -m pytest python/tests -v -rs -p no:cacheprovider --junitxml "$OUT/pytest.xml" 2>&1 | tee "$OUT/pytest.txt"
tests_rc=${PIPESTATUS[0]}

echo "=== bench/overhead.py"
python3 bench/overhead.py "$CUTEC_CUBINS" 2>&1 | tee "$OUT/overhead.txt"

echo "=== bench/bench.py"
PYTHONUNBUFFERED=1 python3 bench/bench.py --cubins "$CUTEC_CUBINS" --out "$OUT/bench.json" \
    --time-budget "${BENCH_BUDGET:-300}" 2>&1 | tee "$OUT/bench.txt"
bench_rc=${PIPESTATUS[0]}

echo
echo "================ python.sh summary ================"
tail -1 "$OUT/pytest.txt"
echo "tests: $([ "$tests_rc" = 0 ] && echo PASS || echo "FAIL (pytest exit $tests_rc)")"
echo "benchmark: $([ "$bench_rc" = 0 ] && echo "done" || echo "exit $bench_rc (2: a result did not match torch)"); tables in $OUT/bench.txt, JSON in $OUT/bench.json"
[ "$tests_rc" = 0 ] && [ "$bench_rc" = 0 ]
