"""Local-search engines against their yardsticks, side by side in one run.

QAP (robust tabu search, CPU build, one core, one search) against the independent C
implementation shared/yardsticks/rots.c (gcc -O3 -march=native):
  speed    same instance, same start, same random stream, same iteration budget, runs
           interleaved; our kernel follows rots.c's trajectory exactly, so both report the same
           best cost and the ratio of iterations per second is a pure implementation comparison;
  quality  equal wall time on 2 cores: `metaheur.solver.solve` (the default memetic islands)
           against rots.c run once per core with different seeds (best of the two), the
           iteration budget of rots.c set from its measured speed; gaps to best known.
TSP: gap to optimum at equal wall time (`--tsp-seconds`, default 10 and 30 s) of `metaheur solve`
(the default: EAX islands on all cores) against fast-tsp, elkai (LKH-3) and OR-Tools on TSPLIB
instances of about 1k, 2-3k, 5k and 10k+ cities, through peers.py's runner (benchmark-only
dependencies: `pip install fast-tsp elkai ortools` in this or another Python given with
--peer-python). experiments/bench_tsp_ils.py compares the local search alone with fast-tsp.
GPU rows (when CuPy finds a device): tabu-search iterations per second for batches of 1, 64, 1024.

    python experiments/bench_search.py [--quick] [--qap-speed tai50a,...] [--qap-quality ...]
        [--seconds 60] [--seeds 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.instances import present
from lib.report import header, out_folder, write_table
from lib.yardstick import build_rots, rots_start, run_rots

from metaheur.devices import gpu_devices
from metaheur.engine import set_cpu_threads
from metaheur.problems import best_known, load_instance
from metaheur.problems.qap.params import KERNELS, TabuParams
from metaheur.problems.qap.tabu import QAPTabuBatch

SPEED = ["tai50a", "tai100a", "tai256c", "tai60b", "sko100a"]
QUALITY = ["tai50a", "tai60b", "tai80a", "tai100a", "sko100a"]
TSP = ["fl1577", "d2103", "pr2392", "pcb3038", "rl5915", "rl11849", "brd14051"]


def run_ours(qap, iterations: int, seed: int) -> dict:
    p0, counter = rots_start(qap.n, seed)
    batch = QAPTabuBatch(qap, "cpu", starts=p0[None], keys=[seed], counters=[counter])
    t0 = time.perf_counter()
    res = batch.run(iterations)
    seconds = time.perf_counter() - t0
    return {"best": int(res.best_costs[0]), "iters": int(res.iterations[0]), "seconds": seconds}


def qap_speed(exe: Path, names: list[str], reps: int, budget_seconds: float) -> list[dict]:
    set_cpu_threads(1)
    rows = []
    for name in names:
        qap = load_instance(name)
        probe = run_rots(exe, qap.source, 2000, 1)
        iterations = max(2000, int(budget_seconds * probe["iters"] / max(probe["seconds"], 1e-6)))
        ours_t, rots_t, same = [], [], True
        for r in range(reps):  # interleaved, alternating who goes first
            order = [("ours", r), ("rots", r)] if r % 2 == 0 else [("rots", r), ("ours", r)]
            res = {}
            for who, seed in order:
                res[who] = run_ours(qap, iterations, seed + 1) if who == "ours" else run_rots(exe, qap.source,
                                                                                             iterations, seed + 1)
            same &= res["ours"]["best"] == res["rots"]["best"]
            ours_t.append(res["ours"]["seconds"])
            rots_t.append(res["rots"]["seconds"])
        o, y = iterations / float(np.median(ours_t)), iterations / float(np.median(rots_t))
        rows.append({"instance": name, "n": qap.n, "iterations": iterations, "reps": reps,
                     "ours_iters_per_s": round(o), "rots_iters_per_s": round(y), "ratio": round(o / y, 3),
                     "same_best": same})
    return rows


def qap_quality(exe: Path, names: list[str], seconds: float, seeds: int) -> list[dict]:
    from concurrent.futures import ThreadPoolExecutor

    from metaheur.solver import solve

    rows = []
    for name in names:
        qap = load_instance(name)
        bks = best_known(qap.name, qap.n).value
        probe = run_rots(exe, qap.source, 5000, 1)
        rots_iters = int(seconds * probe["iters"] / max(probe["seconds"], 1e-6))
        for seed in range(seeds):
            result = solve(qap, time_limit=seconds, seed=seed)
            with ThreadPoolExecutor(2) as pool:  # one rots per core, best of the two
                runs = list(pool.map(lambda s, q=qap, k=rots_iters: run_rots(exe, q.source, k, s),
                                     [2 * seed + 1, 2 * seed + 2]))
            rots_best = min(r["best"] for r in runs)
            rows.append({"instance": name, "n": qap.n, "seed": seed, "seconds": seconds, "best_known": bks,
                         "ours": result.cost, "ours_gap_%": round(100 * (result.cost - bks) / bks, 4),
                         "rots_best_of_2": rots_best, "rots_gap_%": round(100 * (rots_best - bks) / bks, 4)})
    return rows


def _batch_rate(qap, device, count: int, iterations: int, kernel: str = "classic") -> float:
    """Tabu iterations per second of ``count`` searches together (after a warm-up launch), with
    the tabu ``kernel`` (TabuParams.kernel)."""
    batch = QAPTabuBatch(qap, device, count=count, seed=1, params=TabuParams(kernel=kernel))
    batch.run(50)
    t0 = time.perf_counter()
    res = batch.run(iterations)
    return float(res.iterations.sum() - 50 * count) / (time.perf_counter() - t0)


def gpu_rows(names: list[str], counts: tuple[int, ...] = (1, 64, 1024), iterations: int = 2000) -> list[dict]:
    """Batches of 1, 64 and 1,024 searches (``counts``) of ``iterations`` each on each GPU with
    every tabu kernel (``variant``: the same search, side by side until a GPU decides), and the
    CPU build on 2 cores (two OpenMP threads over the same 64-search batch, the classic kernel)
    for the ratio (target: 1,024 on a GPU >= 100x)."""
    devices = gpu_devices()
    if not devices:
        return []
    rows = []
    for name in names:
        qap = load_instance(name)
        set_cpu_threads(2)
        cpu2 = _batch_rate(qap, "cpu", 64, max(100, iterations // 4))
        set_cpu_threads(0)
        rows.append({"device": "cpu (2 cores)", "variant": "classic", "instance": name, "n": qap.n, "searches": 64,
                     "iters_per_s": round(cpu2), "vs_cpu_2_cores": 1.0})
        for dev in devices:
            for count in counts:
                for kernel in KERNELS:
                    rate = _batch_rate(qap, dev, count, iterations, kernel)
                    rows.append({"device": dev.name, "variant": kernel, "instance": name, "n": qap.n, "searches": count,
                                 "iters_per_s": round(rate), "vs_cpu_2_cores": round(rate / cpu2, 1)})
    return rows


def tsp_comparison(args) -> None:
    import peers

    names, missing = present(args.tsp.split(","))
    runner = peers.Peers([sys.executable, *args.peer_python])
    for seconds in (float(s) for s in args.tsp_seconds.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            rows = peers.tsp_rows(names, args.seeds, lambda prob, s=seconds: s, runner, Path(tmp), 8000)
        head = header(f"TSP at {seconds:g} s per run, {args.seeds} seed(s): metaheur solve (default) on all cores; "
                      "fast-tsp on all cores, elkai and OR-Tools on one; peers' Pythons: "
                      + ", ".join(runner.pythons) + (f"; not present: {', '.join(missing)}" if missing else ""))
        write_table(rows, peers.COLUMNS, f"bench_search_tsp_{seconds:g}s" + ("_quick" if args.quick else ""), head,
                    args.out, f"TSP: metaheur vs fast-tsp, LKH-3 and OR-Tools at {seconds:g} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small instances, seconds (smoke test)")
    ap.add_argument("--qap-speed", default=",".join(SPEED))
    ap.add_argument("--qap-quality", default=",".join(QUALITY))
    ap.add_argument("--seconds", type=float, default=60.0, help="wall time per quality run")
    ap.add_argument("--speed-seconds", type=float, default=2.0, help="approximate length of one speed run")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--skip-quality", action="store_true")
    ap.add_argument("--tsp", default=",".join(TSP), help="TSP instances ('' to skip)")
    ap.add_argument("--tsp-seconds", default="10,30", help="equal wall times of the TSP comparison")
    ap.add_argument("--peer-python", action="append", default=[], help="another Python to look for peers in")
    ap.add_argument("--gpu-only", action="store_true", help="only the GPU rows (experiments/gpu_check.sh)")
    ap.add_argument("--gpu-rows", nargs=3, default=None, metavar=("INSTANCE", "COUNTS", "ITERATIONS"),
                    help="the GPU rows' instance, batch sizes (1,64,1024) and iterations per search (2000)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    args.out = out_folder(args.out, args.quick)
    if args.quick:
        args.qap_speed, args.qap_quality, args.seconds, args.reps, args.seeds = "tai12a,tai30a", "tai20a", 2.0, 2, 1
        args.speed_seconds, args.tsp, args.tsp_seconds = 0.2, "berlin52", "1"
    if args.gpu_only:  # generated instances: a GPU machine may not have the benchmark libraries
        name, counts, iterations = args.gpu_rows or ("gen:qap:100" if not args.quick else "gen:qap:30", "1,64,1024",
                                                     "2000")
        gpu = gpu_rows([name], tuple(int(c) for c in counts.split(",")), int(iterations))
        if gpu:
            write_table(gpu, list(gpu[0]), "bench_search_gpu", header(), args.out, "QAP tabu search on GPUs")
        else:
            print("no GPU: GPU rows absent")
        return
    if not os.environ.get("METAHEUR_INSTANCES"):
        sys.exit("bench_search: set METAHEUR_INSTANCES to the folder of the benchmark libraries")
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_rots(Path(tmp))
        head = header("ours: QAPTabuBatch, CPU build, 1 search, 1 core; rots: shared/yardsticks/rots.c, "
                      "gcc -O3 -march=native; same start, stream and iterations; interleaved")
        speed = qap_speed(exe, args.qap_speed.split(","), args.reps, args.speed_seconds)
        write_table(speed, list(speed[0]), "bench_search_qap_speed" + ("_quick" if args.quick else ""), head,
                    args.out, "QAP tabu search: iterations per second vs rots.c")
        if not args.skip_quality:
            quality = qap_quality(exe, args.qap_quality.split(","), args.seconds, args.seeds)
            qhead = header(f"ours: metaheur solve (default strategy, all cores) for {args.seconds} s; rots: best "
                           "of two runs (one per core) with the iterations it does in the same time")
            write_table(quality, list(quality[0]), "bench_search_qap_quality" + ("_quick" if args.quick else ""),
                        qhead, args.out, "QAP: gap to best known at equal wall time on 2 cores")
            for name in dict.fromkeys(r["instance"] for r in quality):
                mine = [r for r in quality if r["instance"] == name]
                print(f"{name}: mean gap ours {np.mean([r['ours_gap_%'] for r in mine]):.3f}% "
                      f"rots {np.mean([r['rots_gap_%'] for r in mine]):.3f}%")
    if args.tsp:
        tsp_comparison(args)
    gpu = gpu_rows(args.qap_speed.split(",")[:2])
    if gpu:
        write_table(gpu, list(gpu[0]), "bench_search_gpu", header(), args.out, "QAP tabu search on GPUs")
    else:
        print("no GPU: GPU rows absent")


if __name__ == "__main__":
    main()
