#!/usr/bin/env bash
# The full benchmark runs behind experiments/results/ (2-core machine, about 5-6 hours, one after
# another: each uses every core). Peers (fast-tsp, elkai, OR-Tools) come from the Pythons given in
# PEER_PYTHONS (space-separated), e.g. venvs made with `pip install fast-tsp elkai ortools`.
set -u
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
export METAHEUR_INSTANCES=${METAHEUR_INSTANCES:-$(cd .. && pwd)/shared/instances}
peers=()
for p in ${PEER_PYTHONS:-}; do peers+=(--peer-python "$p"); done
run() { echo "== $(date -Is) $*"; "$PY" "$@"; echo "== exit $?"; }
run experiments/bench_kernels.py --label cpu2
run experiments/bench_search.py --seeds 2 --seconds 60 "${peers[@]}"
run experiments/bench_hybrid.py --seeds 2 --seconds 30
run experiments/ablation.py --seeds 2 --seconds 30
run experiments/strategies.py --seeds 1 --base-seconds 10
run experiments/quality.py --seeds 2 --base-seconds 5
run experiments/soak.py --seconds 600 --processes 3
run experiments/fuzz.py --examples 3000
