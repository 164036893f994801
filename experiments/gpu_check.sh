#!/usr/bin/env bash
# The GPU acceptance check: one script for the minutes a GPU machine is lent (docs/gpu.md).
#
#   bash experiments/gpu_check.sh OUTDIR                      # on a machine with a CUDA GPU
#   bash experiments/gpu_check.sh --simulated [--tiny] OUTDIR  # on simulated GPUs (any machine)
#
# Needs python3 with numpy, CuPy (e.g. cupy-cuda13x 14, not with --simulated), click, joblib,
# matplotlib, pytest and hypothesis, and a C compiler for the CPU build; no network, nothing
# installed: the project runs from this source tree through a temporary import tree
# ($TMP/src/metaheur = symlinks to metaheur/*, plus problems/ and kernels/ as the setuptools
# package-dir mapping would install them) on PYTHONPATH. Instances are generated (gen:...).
#
# Steps, each timed: (0) the system: devices, the GPU's compute mode, and a one-line kernel
# compiled through CuPy (a CuPy without the CUDA headers fails there, in words; CUDA_PATH is set
# to a toolkit that has them when unset); (1) every kernel variant the later steps load, GPU and
# CPU builds, compiled in parallel, the slowest first, one GPU compile at a time under the
# EXCLUSIVE_PROCESS compute mode (NVRTC through CuPy, gcc; their disk caches serve the rest);
# (2) the tests marked gpu (GPU build =
# CPU build, bit for bit); (3) kernel throughput: QAP delta entries/s for 1,024 solutions of
# n = 100 and 2-opt moves/s at n = 10,000 (experiments/bench_kernels.py --gpu-check); (4) tabu
# search rows: 1, 64 and 1,024 searches at n = 100 against the CPU build on 2 cores
# (experiments/bench_search.py --gpu-only); (5) short gpu and hybrid solves of a QAP, a TSP, a
# linear ordering problem and a flow shop (the generic engine's kernels on the LOP's and the flow
# shop's device code).
# About 6-7 minutes on one H200, compilation included.
#
# --simulated runs the same steps on METAHEUR_SIMULATED_GPUS (default 1) simulated devices: it
# checks the script and the GPU host paths, its timings mean nothing. --tiny shrinks every size
# (the test suite runs `--simulated --tiny`).
#
# Writes at most 7 files to OUTDIR: summary.md (the steps, their status and seconds, the three
# targets against their measurements), system.txt, gpu_tests.log, bench_kernels.md,
# bench_search_gpu.md, solves.md, gpu_check.log (everything printed, complete when the script
# returns). Exits non-zero when a step fails.
set -uo pipefail
SCRIPT=gpu_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/gpu_shell.sh"
gpu_args "$@"
gpu_setup

if [ "$TINY" -eq 1 ]; then
    QAP_N=12; TSP_N=200; BATCH=8; COUNTS=1,4; ITERATIONS=60; SECONDS_SOLVE=1
    QAP_SOLVE=gen:qap:12; TSP_SOLVE=gen:tsp:60; LOP_SOLVE=gen:lop:30; PFSP_SOLVE=gen:pfsp:20:5; TESTS=(tests/engine/test_gpu.py -k "rng_and_block or arrays_are_checked")
else
    QAP_N=100; TSP_N=10000; BATCH=1024; COUNTS=1,64,1024; ITERATIONS=2000; SECONDS_SOLVE=15
    QAP_SOLVE=gen:qap:100; TSP_SOLVE=gen:tsp:2000; LOP_SOLVE=gen:lop:300; PFSP_SOLVE=gen:pfsp:100:20; TESTS=(tests/engine tests/gpu tests/problems/lop/test_lop_device.py)
fi
gpu_log "$OUT/gpu_check.log"

# Every (kernel source, defines) the later steps load on cuda:0, compiled by parallel processes,
# the slowest first (NVRTC takes over a minute for tsp_ils.cu); one GPU compile at a time when
# the GPU's compute mode is EXCLUSIVE_PROCESS (one context per GPU).
precompile() {
    "$PY" - "$TINY" "$COMPUTE_MODE" <<'EOF'
import sys, time
from concurrent.futures import ProcessPoolExecutor, as_completed
from metaheur.engine.catalogue import kernel_tables

COMPILE_VARIANTS = kernel_tables().variants
EUC_2D = {"MH_TSP_WEIGHT": 1}  # the generated TSP instances' distance
tiny = sys.argv[1] == "1"  # the tiny run's tests compare no TSP distance but EUC_2D
needed = [(s, d) for s in ("qap/qap_tabu.cu", "engine/perm_ga.cu", "engine/order_ga.cu", "tsp/tsp_knn.cu")
          for d in COMPILE_VARIANTS[s]]
# the QAP's separate move kernels (no kernel of the package: loaded by path, from the repository's root)
needed += [("experiments/kernels/qap/qap_moves.cu", d) for d in ({}, {"MH_QAP_SYMMETRIC": 1})]
needed += [("tsp/tsp_moves.cu", d) for d in ([EUC_2D] if tiny else COMPILE_VARIANTS["tsp/tsp_moves.cu"])]
needed += [(s, EUC_2D) for s in ("tsp/tsp_ils.cu", "tsp/tsp_construct.cu", "tsp/tsp_eax.cu")]

def build(source, defines, device):
    from metaheur.engine import load_module
    t0 = time.perf_counter()
    load_module(source, device, defines)
    return source, defines, device, time.perf_counter() - t0

SLOWEST = ("tsp/tsp_ils.cu", "tsp/tsp_eax.cu", "tsp/tsp_construct.cu", "qap/qap_tabu.cu")  # the longest compiles, longest first
exclusive = sys.argv[2].strip().upper() == "EXCLUSIVE_PROCESS"
t0 = time.perf_counter()
jobs = [(s, d, device) for s, d in needed for device in ("cuda:0", "cpu")]  # the tests compare both builds
jobs.sort(key=lambda j: (SLOWEST.index(j[0]) if j[0] in SLOWEST else len(SLOWEST), j[2] != "cuda:0"))
groups = [[j for j in jobs if j[2] == "cuda:0"], [j for j in jobs if j[2] != "cuda:0"]] if exclusive else [jobs]
print(f"compute mode {sys.argv[2]}: " + ("one GPU compile at a time" if exclusive else "every compile in parallel"))
print("order: " + ", ".join(dict.fromkeys(s for s, _, _ in jobs)))
pools = [ProcessPoolExecutor(max_workers=1 if exclusive and g[0][2] == "cuda:0" else min(16, len(g))) for g in groups]
futures = [pool.submit(build, *j) for pool, group in zip(pools, groups) for j in group]
for job in as_completed(futures):
    source, defines, device, seconds = job.result()
    print(f"  {device} {source} {defines or ''}: {seconds:.1f} s")
for pool in pools:
    pool.shutdown()
print(f"{len(needed)} variants for cuda:0 and the CPU in {time.perf_counter() - t0:.1f} s")
EOF
}

gpu_tests() {
    # simulated: every thread of a block runs (the fiber build), as the tests compare block shapes
    METAHEUR_SIMULATED_THREADS=$SIMULATED "$PY" -m pytest -m gpu -q -p no:cacheprovider -rs "${TESTS[@]}" 2>&1 | tee "$OUT/gpu_tests.log"
    local rc=${PIPESTATUS[0]}
    [ "$rc" -eq 0 ] || [ "$rc" -eq 5 ]  # 5: no test selected
}

bench_kernels() {
    "$PY" experiments/bench_kernels.py --gpu-check "$QAP_N" "$TSP_N" "$BATCH" --only qap tsp --label gpu \
        --out "$TMP/bench" --repeat 2 --min-time "$([ "$TINY" -eq 1 ] && echo 0.01 || echo 0.1)" --numpy-budget 1 &&
        cp "$TMP/bench/bench_kernels_gpu.md" "$OUT/bench_kernels.md"
}

bench_search() {
    "$PY" experiments/bench_search.py --gpu-only --gpu-rows "gen:qap:$QAP_N" "$COUNTS" "$ITERATIONS" \
        --out "$TMP/bench" && cp "$TMP/bench/bench_search_gpu.md" "$OUT/bench_search_gpu.md"
}

solve() {  # solve INSTANCE STRATEGY
    "$PY" -m metaheur.cli solve "$1" --strategy "$2" -t "$SECONDS_SOLVE" -v --json "$TMP/solve_${1//:/_}_$2.json"
}

summary() {
    "$PY" experiments/gpu_targets.py "$TMP/bench" --kernels-only --qap-n "$QAP_N" --tsp-n "$TSP_N" --batch "$BATCH" \
        --out "$TMP/targets.md"
    "$PY" - "$TMP" "$OUT" "$SIMULATED" <<'EOF'
import json, sys
from pathlib import Path

tmp, out, simulated = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "1"
lines = ["| instance | strategy | devices | cost | time s | generations | ls iterations | device loads |",
         "|---|---|---|---|---|---|---|---|"]
for path in sorted(tmp.glob("solve_*.json")):
    r = json.loads(path.read_text())
    loads = ", ".join(f"{d['device']} {d['utilisation']:.0%}" for d in r["device_loads"])
    lines.append(f"| {r['instance']} | {r['strategy']} | {', '.join(r['devices'])} | {r['cost']} | {r['time_s']} "
                 f"| {r['generations']} | {r['search_iterations']:,} | {loads} |")
(out / "solves.md").write_text("# Short solves\n\n" + "\n".join(lines) + "\n")

steps = (tmp / "steps.md").read_text()
head = "Simulated GPUs: the timings below are those of the CPU build and mean nothing.\n\n" if simulated else ""
(out / "summary.md").write_text(f"# GPU acceptance check\n\n{head}## Steps\n\n{steps}\n## Targets\n\n"
                                + (tmp / "targets.md").read_text())
print((out / "summary.md").read_text())
EOF
}

step "system" system_lines > "$OUT/system.txt" 2>&1
cat "$OUT/system.txt"
if [ "$status" -ne 0 ]; then
    cp "$TMP/steps.md" "$OUT/summary.md"
    echo "gpu_check.sh: no usable device; nothing else run" >&2
    exit 2
fi
step "compile kernel variants" precompile
step "tests marked gpu" gpu_tests
step "kernel throughput" bench_kernels
step "tabu search batches" bench_search
for instance in "$QAP_SOLVE" "$TSP_SOLVE" "$LOP_SOLVE" "$PFSP_SOLVE"; do
    for strategy in gpu hybrid; do
        step "solve $instance --strategy $strategy" solve "$instance" "$strategy"
    done
done
summary
echo "== gpu_check.sh done: status $status; results in $OUT"
exit $status
