#!/usr/bin/env bash
# GPU check of the kernels, for a machine with a CUDA GPU and no network.
#
#   bash experiments/gpu_check.sh OUTDIR
#
# Needs python3 with numpy, CuPy (e.g. cupy-cuda13x 14), click, joblib, matplotlib, pytest and
# hypothesis, and a C compiler for the CPU build (the GPU tests compare the two builds bit for bit).
# Nothing is installed: the project runs from this source tree through a temporary import tree
# ($TMP/src/metaheur = symlinks to metaheur/*, plus problems/ and kernels/ as the setuptools
# package-dir mapping would install them) on PYTHONPATH.
#
# Writes OUTDIR/system.txt (nvidia-smi, `metaheur info`), OUTDIR/gpu_tests.log (pytest -m gpu),
# OUTDIR/bench_kernels_gpu.{csv,md} (experiments/bench_kernels.py --label gpu),
# OUTDIR/bench_search_gpu.{csv,md} (tabu search batches of 1, 64, 1024 searches vs the CPU build on
# 2 cores) and the results of short gpu and hybrid solves (solve_*.json, .log). Exits non-zero when
# a test or a step fails or the import tree does not work. About 6-8 minutes on an H200; without a
# GPU the gpu tests skip and the GPU steps report their absence (a dry run of the script itself).
set -uo pipefail

if [ $# -ne 1 ]; then
    echo "usage: bash experiments/gpu_check.sh OUTDIR" >&2
    exit 2
fi
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
PY=${PYTHON:-python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/metaheur-gpu-check.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# ------------------------------------------------------------------ import tree, no installation
mkdir -p "$TMP/src/metaheur"
for entry in "$REPO"/metaheur/*; do
    ln -s "$entry" "$TMP/src/metaheur/$(basename "$entry")"
done
ln -s "$REPO/problems" "$TMP/src/metaheur/problems"
ln -s "$REPO/kernels" "$TMP/src/metaheur/kernels"
export PYTHONPATH="$TMP/src${PYTHONPATH:+:$PYTHONPATH}"
# The repository root holds a metaheur/ without problems/ and kernels/: never let the current
# directory (python -c, python -m) shadow the import tree (Python >= 3.11).
export PYTHONSAFEPATH=1
export METAHEUR_CACHE_DIR="$TMP/cache"
export MPLBACKEND=Agg
if [ -z "${METAHEUR_INSTANCES:-}" ] && [ -d "$REPO/../shared/instances" ]; then
    METAHEUR_INSTANCES=$(cd "$REPO/../shared/instances" && pwd)
    export METAHEUR_INSTANCES
fi
cd "$REPO" || exit 2

status=0
{
    echo "== $(date -Is) gpu_check.sh on $(hostname), repository $REPO"
    echo "== git: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
         "$(git -C "$REPO" status --porcelain 2>/dev/null | wc -l) changed files"
    echo "== python: $(command -v "$PY") $("$PY" --version 2>&1)"
    echo "== C compiler: $( (${CC:-gcc} --version 2>/dev/null || cc --version 2>/dev/null) | head -1 || true)"
    echo "== nvidia-smi"
    nvidia-smi 2>&1 || echo "(nvidia-smi not available)"
} | tee "$OUT/system.txt"

if ! "$PY" -c "
import sys, metaheur, metaheur.problems, metaheur.kernels, metaheur.engine
assert metaheur.__file__.startswith(sys.argv[1]), metaheur.__file__
print('== import tree:', metaheur.__file__)
" "$TMP/src" 2>&1 | tee -a "$OUT/system.txt"; then
    echo "gpu_check.sh: the import tree does not work (see above)" >&2
    exit 2
fi
echo "== python -m metaheur.cli info" | tee -a "$OUT/system.txt"
"$PY" -m metaheur.cli info 2>&1 | tee -a "$OUT/system.txt" || status=1

# ------------------------------------------------------------------ tests marked gpu
# tests/engine, plus any other test module that uses the gpu marker (only those are collected, so
# an unrelated module's missing optional dependency cannot break this check)
mapfile -t gpu_files < <(grep -rlE "mark\.gpu|pytestmark.*gpu" --include="test_*.py" tests | grep -v "^tests/engine/" | sort)
echo "== pytest -m gpu tests/engine ${gpu_files[*]}" | tee "$OUT/gpu_tests.log"
"$PY" -m pytest -m gpu -q -p no:cacheprovider -rs tests/engine "${gpu_files[@]}" 2>&1 | tee -a "$OUT/gpu_tests.log"
test_status=${PIPESTATUS[0]}
if [ "$test_status" -ne 0 ] && [ "$test_status" -ne 5 ]; then  # 5: no test selected
    echo "gpu_check.sh: gpu tests FAILED (pytest exit $test_status)" | tee -a "$OUT/gpu_tests.log" >&2
    status=1
fi

# ------------------------------------------------------------------ benchmark
echo "== python experiments/bench_kernels.py --label gpu --out $OUT"
"$PY" experiments/bench_kernels.py --label gpu --out "$OUT" --repeat 2 --min-time 0.1 --numpy-budget 1 \
    2>&1 | tee "$OUT/bench_kernels.log"
bench_status=${PIPESTATUS[0]}
if [ "$bench_status" -ne 0 ]; then
    echo "gpu_check.sh: benchmark failed (exit $bench_status)" >&2
    status=1
fi

# ------------------------------------------------------------------ searches and strategies
echo "== python experiments/bench_search.py --gpu-only --out $OUT"
"$PY" experiments/bench_search.py --gpu-only --out "$OUT" 2>&1 | tee "$OUT/bench_search_gpu.log" || status=1
if ! "$PY" -c "import sys; from metaheur.devices import gpu_devices; sys.exit(0 if gpu_devices() else 1)"; then
    echo "== no GPU: the gpu and hybrid solves are skipped"
    echo "== gpu_check.sh done: status $status; results in $OUT"
    exit $status
fi
for strategy in gpu hybrid; do
    echo "== metaheur solve gen:qap:100 --strategy $strategy -t 20 -v"
    "$PY" -m metaheur.cli solve gen:qap:100 --strategy "$strategy" -t 20 -v --json "$OUT/solve_qap_$strategy.json" \
        2>&1 | tail -20 | tee "$OUT/solve_qap_$strategy.log" || status=1
done
echo "== metaheur solve gen:tsp:2000 --strategy hybrid -t 20 -v"
"$PY" -m metaheur.cli solve gen:tsp:2000 --strategy hybrid -t 20 -v --json "$OUT/solve_tsp_hybrid.json" \
    2>&1 | tail -20 | tee "$OUT/solve_tsp_hybrid.log" || status=1

echo "== gpu_check.sh done: status $status; results in $OUT"
exit $status
