#!/usr/bin/env bash
# The prepared GPU session: what a lent GPU machine measures first, whatever issue the session
# works on (docs/gpu.md). One call, under seven minutes of an H100 or H200 after the machine has
# started; experiments/gpu_check.sh stays the correctness check.
#
#   bash experiments/gpu_session.sh OUTDIR                      # on a machine with a CUDA GPU
#   bash experiments/gpu_session.sh --simulated [--tiny] OUTDIR  # on simulated GPUs (any machine)
#
# Parts, in order of value; each writes its table to OUTDIR as soon as it ends, so a call that
# runs out of time still returns every table before it. Seconds on an H100 (the budget; a part
# is ended at 1.5 times its budget, the next one then runs):
#   1 system and clocks: nvidia-smi, SM and memory clocks, whether ncu exists     10 s  system.md
#   2 compile what the later parts load (solves: Problem.precompile on cuda:0 and
#     the CPU, and the generic engine's warp kernels and scans by warps of part 4;
#     the kernel benches' modules), CuPy's and metaheur's caches in
#     .gpu_cache/ of the working tree ($GPU_SESSION_CACHE), so a rerun on the same
#     machine is warm                                                             70 s  (log)
#   3 kernels side by side: the QAP tabu search at 1, 64, 1,024 and 2,112
#     searches of n = 100 against the CPU build on 2 cores; the QAP delta update
#     of 1,024 solutions; 2-opt over all pairs at n = 10,000 with 264, 660 and
#     1,320 tours, tsp_2opt_full and its cached variant (several blocks a tour
#     where the tours leave block slots idle); EAX generations of a GPU island at
#     n = 10,000 (300 members, 10 generations) with eax_kernel classic, fused and
#     block, from the same population (bench_eax_gpu.py: ms a generation, the
#     same populations); a GPU island's kick rounds at n = 2,000 (264 children,
#     10 rounds) queued and waited for (bench_kick_rounds.py: ms a round, host
#     waits a round, the same tours); the TSP descent at n = 10,000 with 264
#     tours, the several-move pass classic and dlb (don't-look bits, moves
#     selected by all threads), from random and curve tours, 4 s a row
#     (bench_descent.py); every variant the benches know                       145 s  kernels.md
#   4 the generic engine's chains: flow shop 100 x 20, linear ordering n = 300
#     (over insertions, and over swaps), the tutorial's weighted tardiness
#     n = 100: the GPU against one core of the same machine, the classic and warp
#     kernels side by side, and the classic kernels' scans by warps where the
#     scans take pair deltas (the LOP over swaps) (1 chain, the island's, one
#     wave: the layout's chains an SM)                                           55 s  chains.md
#   5 the paper's comparison (Van Luong, Taillard, Melab, Talbi 2012): cpu-serial,
#     cpu-islands on all 16 cores, gpu, hybrid at equal time (4 s a run) on
#     generated gen:qap:100, gen:tsp:10000, gen:pfsp:100:20, gen:lop:300: gap at
#     equal time and time to a target gap                                        90 s  strategies.md
#   6 ncu profiles of one tabu and two 2-opt launches (classic, cached; a line
#     where ncu is absent)                                                         30 s  ncu.txt
#   7 the round's GPU targets, | target | measured | goal | met |                 2 s  targets.md
# and parts.md (each part's status and seconds), session.log (everything printed, complete when
# the script returns): 8 files. Run it in one device call with a timeout that leaves room for a
# second call (e.g. 420 s of a 15-minute lease), then give the machine back and commit the tables
# under experiments/results/gpu_session/ (docs/gpu.md).
#
# Needs what gpu_check.sh needs (python3 with numpy, CuPy, click, joblib, matplotlib; a C
# compiler; no installation: the import tree of lib/gpu_shell.sh). --simulated runs every part
# on METAHEUR_SIMULATED_GPUS (default 1) simulated devices: it rehearses the script and the GPU
# host paths, its timings mean nothing; --tiny shrinks every size (the test suite runs
# `--simulated --tiny`). Exits non-zero when a part fails.
set -uo pipefail
SCRIPT=gpu_session.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/gpu_shell.sh"
gpu_args "$@"
gpu_setup

if [ "$TINY" -eq 1 ]; then
    QAP_N=12; TSP_N=200; BATCH=8; COUNTS=1,8,64; ITERATIONS=60; TOURS=4,8
    CHAINS=(--quick); RUN_SECONDS=1; CORES=2
    QAP=gen:qap:12; TSP=gen:tsp:200; PFSP=gen:pfsp:20:5; LOP=gen:lop:30
    EAX_POP=8; EAX_GENERATIONS=4; KICK_N=200; KICK_CHILDREN=8; KICK_ROUNDS=4
else
    QAP_N=100; TSP_N=10000; BATCH=1024; COUNTS=1,64,1024,2112; ITERATIONS=1000; TOURS=264,660,1320
    CHAINS=(--seconds 1.0); RUN_SECONDS=4; CORES=$(nproc)
    QAP=gen:qap:100; TSP=gen:tsp:10000; PFSP=gen:pfsp:100:20; LOP=gen:lop:300
    EAX_POP=300; EAX_GENERATIONS=10; KICK_N=2000; KICK_CHILDREN=264; KICK_ROUNDS=10
fi
CACHE=${GPU_SESSION_CACHE:-$REPO/.gpu_cache}
mkdir -p "$CACHE"
export CUPY_CACHE_DIR="$CACHE/cupy" METAHEUR_CACHE_DIR="$CACHE/metaheur"
mkdir -p "$TMP/tables"
gpu_log "$OUT/session.log"

# limit SECONDS COMMAND...: the command, ended at 1.5 times a part's budget on a GPU (a
# simulated run takes what it takes)
limit() {
    local budget=$1
    shift
    if [ "$SIMULATED" -eq 1 ]; then
        "$@"
    else
        timeout -k 10 $((budget * 3 / 2)) "$@"
    fi
}

# publish NAME.md: a table into OUTDIR at once (the parts after it may not finish)
publish() {
    cp "$TMP/tables/$1" "$OUT/$1"
}

system_and_clocks() {
    system_lines || return
    echo
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,temperature.gpu \
        --format=csv 2>&1 || echo "(no clocks: nvidia-smi not available)"
    if command -v ncu > /dev/null; then
        echo "ncu: $(command -v ncu) $(ncu --version 2>&1 | tail -1)"
    else
        echo "ncu: not found (part 6 is skipped)"
    fi
    echo "cores: $CORES; caches: $CACHE"
}

# Every module the later parts load, built by parallel processes before they run: the solves'
# (Problem.precompile on cuda:0 and the CPU, as solve() does before its clock), the QAP delta
# update's and 2-opt's modules; the GPU compiles one at a time under EXCLUSIVE_PROCESS.
compile_measured() {
    limit 70 "$PY" - "$COMPUTE_MODE" "$QAP" "$TSP" "$PFSP" "$LOP" "$QAP_N" "$TSP_N" <<'EOF'
import sys, time
from concurrent.futures import ProcessPoolExecutor, as_completed

mode, *names, qap_n, tsp_n = sys.argv[1:]

def build(name, device):
    from metaheur.devices import parse_device
    from metaheur.engine.catalogue import PERM_ROWS, PERM_WARP
    from metaheur.problems import load_instance
    t0 = time.perf_counter()
    problem = load_instance(name).search_form().problem
    problem.precompile(parse_device(device))
    if getattr(problem, "device_code", None):  # the generic engine's warp kernels, beside the classic (part 4)
        for kernel_file in ("engine/perm_eval.cu", "engine/perm_search.cu"):
            problem.user_code().module(kernel_file, parse_device(device), PERM_WARP)
        problem.user_code().module("engine/perm_search.cu", parse_device(device), PERM_ROWS)  # scan="warps"
    return name, device, time.perf_counter() - t0

def bench_modules(device):
    from metaheur.engine import load_module
    t0 = time.perf_counter()
    load_module("experiments/kernels/qap/qap_moves.cu", device)  # by path: no kernel of the package
    load_module("tsp/tsp_moves.cu", device, {"MH_TSP_WEIGHT": 1})  # the generated instances' EUC_2D
    return "kernel benches", device, time.perf_counter() - t0

exclusive = mode.strip().upper() == "EXCLUSIVE_PROCESS"
t0 = time.perf_counter()
jobs = [(build, name, device) for name in names for device in ("cuda:0", "cpu")]
jobs += [(bench_modules, device) for device in ("cuda:0", "cpu")]
gpu_jobs = [j for j in jobs if j[-1] == "cuda:0"]
cpu_jobs = [j for j in jobs if j[-1] != "cuda:0"]
print(f"compute mode {mode}: " + ("one GPU compile at a time" if exclusive else "every compile in parallel"))
pools = [ProcessPoolExecutor(max_workers=1 if exclusive else len(gpu_jobs)), ProcessPoolExecutor(len(cpu_jobs))]
futures = [pools[0].submit(*j) for j in gpu_jobs] + [pools[1].submit(*j) for j in cpu_jobs]
for job in as_completed(futures):
    what, device, seconds = job.result()
    print(f"  {device} {what}: {seconds:.1f} s")
for pool in pools:
    pool.shutdown()
print(f"compiled in {time.perf_counter() - t0:.1f} s")
EOF
}

kernels_side_by_side() {
    limit 25 "$PY" experiments/bench_search.py --gpu-only --gpu-rows "gen:qap:$QAP_N" "$COUNTS" "$ITERATIONS" \
        --out "$TMP/tables" || return
    limit 35 "$PY" experiments/bench_kernels.py --gpu-check "$QAP_N" "$TSP_N" "$BATCH" --gpu-tours "$TOURS" \
        --only qap tsp --label gpu --out "$TMP/tables" --repeat 2 \
        --min-time "$([ "$TINY" -eq 1 ] && echo 0.01 || echo 0.1)" --numpy-budget 1 || return
    cat "$TMP/tables/bench_search_gpu.md" <(echo) "$TMP/tables/bench_kernels_gpu.md" > "$TMP/tables/kernels.md"
    publish kernels.md
    # the EAX generations last, added to the same table (published again)
    limit 40 "$PY" experiments/bench_eax_gpu.py --device cuda:0 --n "$TSP_N" --pop "$EAX_POP" \
        --generations "$EAX_GENERATIONS" --out "$TMP/tables" || return
    cat <(echo) "$TMP/tables/bench_eax_gpu.md" >> "$TMP/tables/kernels.md"
    publish kernels.md
    # a GPU island's kick rounds, queued and waited for (docs/gpu-model.md, "Kick rounds")
    limit 20 "$PY" experiments/bench_kick_rounds.py --device cuda:0 --n "$KICK_N" --children "$KICK_CHILDREN" \
        --rounds "$KICK_ROUNDS" --out "$TMP/tables" || return
    cat <(echo) "$TMP/tables/bench_kick_rounds.md" >> "$TMP/tables/kernels.md"
    # the TSP descent's several-move pass, classic and don't-look bits (dlb), from the same tours
    # (tiny: 300 cities, as candidate lists start past 200)
    limit 25 "$PY" experiments/bench_descent.py --device cuda:0 --sizes "$([ "$TINY" -eq 1 ] && echo 300 || echo "$TSP_N")" \
        --tours "${TOURS%%,*}" --moves several dlb --limit "$([ "$TINY" -eq 1 ] && echo 1 || echo 4)" --label gpu \
        --out "$TMP/tables" || return
    cat <(echo) "$TMP/tables/bench_descent_gpu.md" >> "$TMP/tables/kernels.md"
    publish kernels.md
}

engine_chains() {
    limit 55 "$PY" experiments/engine_chains.py "${CHAINS[@]}" --out "$TMP/tables" || return
    cp "$TMP/tables/engine_chains.md" "$TMP/tables/chains.md"
    publish chains.md
}

strategies() {
    limit 90 "$PY" experiments/strategies.py --qap "$QAP" --tsp "$TSP" --pfsp "$PFSP" --lop "$LOP" \
        --cpu-islands "$CORES" --seconds "$RUN_SECONDS" --seeds 1 --out "$TMP/tables" || return
    publish strategies.md
}

# ncu_profile FILE KERNEL COMMAND...: one launch of KERNEL (a regex) profiled, its report in FILE
ncu_profile() {
    local file=$1 kernel=$2
    shift 2
    limit 10 ncu --target-processes all --launch-count 1 --kernel-name "regex:$kernel" \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
        "$@" > "$file" 2>&1
}

ncu_profiles() {
    if ! command -v ncu > /dev/null; then
        echo "ncu: not found on this machine; no profiles" | tee "$OUT/ncu.txt"
        return 0
    fi
    local rc=0 kernel
    ncu_profile "$TMP/ncu_tabu.txt" qap_tabu "$PY" experiments/bench_search.py --gpu-only \
        --gpu-rows "gen:qap:$QAP_N" "$BATCH" 50 --out "$TMP/ncu_bench" || rc=$?
    for kernel in tsp_2opt_full tsp_2opt_cached; do  # the first launch of each: the first tour count's
        [ "$rc" -eq 0 ] || break
        ncu_profile "$TMP/ncu_$kernel.txt" "$kernel" "$PY" experiments/bench_kernels.py --gpu-check "$QAP_N" \
            "$TSP_N" "$BATCH" --gpu-tours "${TOURS%%,*}" --only tsp --label ncu --out "$TMP/ncu_bench" --repeat 1 \
            --min-time 0.01 --numpy-budget 1 || rc=$?
    done
    cat "$TMP/ncu_tabu.txt" <(echo) "$TMP/ncu_tsp_2opt_full.txt" <(echo) "$TMP/ncu_tsp_2opt_cached.txt" \
        > "$OUT/ncu.txt" 2>/dev/null
    return $rc
}

targets() {
    "$PY" experiments/gpu_targets.py "$TMP/tables" --qap-n "$QAP_N" --tsp-n "$TSP_N" --batch "$BATCH" \
        --out "$OUT/targets.md" && cat "$OUT/targets.md"
}

parts() {
    local head=""
    [ "$SIMULATED" -eq 1 ] && head="Simulated GPUs: the timings are those of the CPU build and mean nothing."
    printf '# GPU session\n\n%s\n\n' "$head" | cat - "$TMP/steps.md" > "$OUT/parts.md"
}

step "1 system and clocks" system_and_clocks > "$TMP/tables/system.md" 2>&1
cp "$TMP/tables/system.md" "$OUT/system.md"
cat "$OUT/system.md"
if [ "$status" -ne 0 ]; then
    parts
    echo "$SCRIPT: no usable device; nothing else run" >&2
    exit 2
fi
step "2 compile what is measured" compile_measured
parts
step "3 kernels side by side" kernels_side_by_side
parts
step "4 engine chains vs one core" engine_chains
parts
step "5 strategies at equal time" strategies
parts
step "6 ncu profiles" ncu_profiles
step "7 targets" targets
parts
echo "== $SCRIPT done: status $status; results in $OUT"
exit $status
