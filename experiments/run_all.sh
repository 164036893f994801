#!/usr/bin/env bash
# Regenerates every table of experiments/results/ (each script writes its own CSV, Markdown and
# figure there), one after another: each uses every core. Several hours on 2 cores.
#
#   experiments/run_all.sh            # the full runs, into experiments/results/
#   experiments/run_all.sh --quick    # every script's smoke test, into temporary folders
#
# Peers (fast-tsp, elkai, OR-Tools) come from the Pythons given in PEER_PYTHONS (space-separated),
# e.g. venvs made with `pip install fast-tsp elkai ortools numpy`.
set -u
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
export METAHEUR_INSTANCES=${METAHEUR_INSTANCES:-$(cd .. && pwd)/shared/instances}
peers=()
for p in ${PEER_PYTHONS:-}; do peers+=(--peer-python "$p"); done
failed=0
run() { echo "== $(date -Is) $*"; "$PY" "$@"; local rc=$?; echo "== exit $rc"; [ $rc -eq 0 ] || failed=1; }

if [ "${1:-}" = "--quick" ]; then
  for script in kernel_resources gpu_model bench_kernels bench_search bench_tsp_ils bench_eax bench_tsp_start bench_tsp_large bench_atsp bench_lop strategies \
      quality peers ablation bench_hybrid soak; do
    run "experiments/$script.py" --quick
  done
  run experiments/fuzz.py --examples 50
  exit $failed
fi

run experiments/bench_io.py
run experiments/bench_kernels.py --label cpu2
run experiments/kernel_resources.py
run experiments/gpu_model.py
run experiments/bench_search.py --seeds 3 --seconds 60 --qap-speed tai50a,tai100a,tai256c,tai60b,sko100a \
  --qap-quality tai50a,tai80a,tai100a,sko100a,tai150b --tsp fl1577,pr2392,rl5915,rl11849 "${peers[@]}"
run experiments/bench_tsp_ils.py --seconds 10 30 --seeds 2 --elkai --elkai-max-n 2400
run experiments/bench_eax.py
run experiments/bench_eax.py --instances brd14051 d18512 --name bench_eax_large
run experiments/bench_tsp_start.py --instances pla85900 --members '' --configs random-0.3,curve-0.3,auto --seconds 120
run experiments/bench_tsp_start.py --instances brd14051,d18512 --members brd14051,pla85900 --count 2 \
  --configs random-0.3,auto --seconds 60 --name bench_tsp_start_check
run experiments/bench_tsp_start.py --instances gen:tsp:20000 --members '' --configs random-0.3,auto --seconds 60 \
  --name bench_tsp_start_uniform
run experiments/bench_tsp_large.py --resume
run experiments/bench_atsp.py
run experiments/bench_lop.py
run experiments/strategies.py --seeds 1 --base-seconds 3
run experiments/quality.py --library qaplib --max-n 40 --seeds 1
run experiments/quality.py --library tsplib --max-n 20000 --seeds 1 --base-seconds 2
run experiments/peers.py --seeds 1 --base-seconds 3 "${peers[@]}"
run experiments/ablation.py --seeds 1 --seconds 10
run experiments/bench_hybrid.py --seeds 2 --seconds 20
run experiments/soak.py --seconds 180 --processes 3
run experiments/fuzz.py --examples 1500
exit $failed
