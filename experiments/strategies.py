"""The parallelization strategies of Van Luong, Taillard, Melab and Talbi (2012, "Parallelization
Strategies for Hybrid Metaheuristics Using a Single GPU and Multi-core Resources", PPSN XII),
compared on this machine with metaheur.solver.solve:

  cpu-serial      one island on one core;
  cpu-islands xk  k islands on k cores (worker processes), k = 1 .. all cores;
  gpu             one island per GPU, driven by one host core;
  hybrid          GPU islands plus CPU islands on the remaining cores, load-balanced.

GPU rows read "absent: no GPU" when CuPy finds no device (nothing is invented). Instances of
increasing size: QAP tai30a, tai50a, tai100a, tai256c and a generated gen:qap:500; TSP pr2392,
rl5915, rl11849, pla33810, pla85900 (those present under METAHEUR_INSTANCES; the others are
skipped and named in the header). Per instance and strategy, over --seeds seeds:

  ls_per_s         local-search iterations (QAP tabu iterations, TSP kicks) of all islands per
                   second of search time (result.search_iterations / result.time_s);
  busy_ls_per_s    the same over the seconds the islands spent inside their epochs;
  speedup          ls_per_s / ls_per_s of cpu-serial on the same instance;
  time_to_target_s first end-of-epoch time at which the best was within the target gap
                   (default 1 % QAP, 2 % TSP) of the best-known value (generated instances: of the
                   best cost any run here found); median over seeds, "not reached" otherwise;
  device_split     share of the iterations per device; for hybrid with the load balancer's
                   utilisation per device (result.device_loads).

Time per run: --seconds S for every instance, else scaled by size from --base-seconds B (QAP
B * n / 50, TSP B * n / 1000, clipped to [B / 2, 10 B]). Kernel compilation is not counted;
worker start-up is (see lib/backends.py). Writes strategies.csv/.md (one row per instance and strategy),
strategies_runs.csv/.md (one row per run) and strategies_speedup.png (speedup against cores).

    python experiments/strategies.py --quick                    # seconds, generated instances
    METAHEUR_INSTANCES=../shared/instances python experiments/strategies.py [--seeds 3]
        [--base-seconds 10] [--qap tai30a,...] [--tsp pr2392,...] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.instances import budget_seconds, names_arg, present
from lib.report import RESULTS, out_folder, run_header, write_table
from lib.runs import RUN_COLUMNS, TARGET_GAP, run_rows
from lib.strategies import STRATEGY_COLUMNS, compare_strategies, plot_speedup, strategy_configs

QAP = ["tai30a", "tai50a", "tai100a", "tai256c", "gen:qap:500"]
TSP = ["pr2392", "rl5915", "rl11849", "pla33810", "pla85900"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="two generated instances, 1 s runs (smoke test)")
    ap.add_argument("--qap", default=None, help=f"QAP instances (default {','.join(QAP)})")
    ap.add_argument("--tsp", default=None, help=f"TSP instances (default {','.join(TSP)})")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per run (default 3; quick 1)")
    ap.add_argument("--base-seconds", type=float, default=10.0, help="B of the size-scaled time budget")
    ap.add_argument("--seconds", type=float, default=None, help="the same budget for every instance instead")
    ap.add_argument("--epoch-seconds", type=float, default=None, help="epoch length (default 1; quick 0.5)")
    ap.add_argument("--target-gap-qap", type=float, default=TARGET_GAP["qap"])
    ap.add_argument("--target-gap-tsp", type=float, default=TARGET_GAP["tsp"])
    ap.add_argument("--max-cores", type=int, default=None, help="cpu-islands up to this many cores (default all)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"output folder (default {RESULTS}; --quick: a temporary folder)")
    args = ap.parse_args(argv)
    args.out = out_folder(args.out, args.quick)
    if args.quick:
        args.seconds = args.seconds or 1.0
    seeds = args.seeds or (1 if args.quick else 3)
    epoch = args.epoch_seconds or (0.5 if args.quick else 1.0)
    names, missing = present(names_arg(args.qap, QAP, ["gen:qap:20"], args.quick)
                             + names_arg(args.tsp, TSP, ["gen:tsp:200"], args.quick))
    if not names:
        sys.exit("strategies: no instance present (set METAHEUR_INSTANCES)")

    def seconds_for(prob) -> float:
        return args.seconds or budget_seconds(prob.kind, prob.n, args.base_seconds)

    gaps = {"qap": args.target_gap_qap, "tsp": args.target_gap_tsp}
    budget = f"{args.seconds} s per run" if args.seconds else (
        f"size-scaled budget, B = {args.base_seconds} s (QAP B*n/50, TSP B*n/1000, clipped to [B/2, 10B])")
    head = run_header(f"settings: {budget}; {seeds} seed(s); epochs of {epoch} s; target gap "
                             f"{gaps['qap']} % QAP, {gaps['tsp']} % TSP")
    if missing:
        head.append(f"not present (skipped): {', '.join(missing)}")
    configs = strategy_configs(max_cores=args.max_cores)
    rows, runs = compare_strategies(names, seeds, seconds_for, gaps, epoch, configs)
    suffix = "_quick" if args.quick else ""
    write_table(rows, STRATEGY_COLUMNS, "strategies" + suffix, head, args.out,
                "Parallelization strategies (Van Luong, Taillard, Melab, Talbi 2012)")
    cols = [c for c in RUN_COLUMNS if c != "group"]
    write_table(run_rows(runs, gaps), cols, "strategies_runs" + suffix, head, args.out,
                "Parallelization strategies: every run")
    plot_speedup(rows, args.out / f"strategies_speedup{suffix}.png",
                        "cpu-islands speedup (ls iterations/s) vs cpu-serial")


if __name__ == "__main__":
    main()
