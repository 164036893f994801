"""The parallelization strategies of Van Luong, Taillard, Melab and Talbi (2012, "Parallelization
Strategies for Hybrid Metaheuristics Using a Single GPU and Multi-core Resources", PPSN XII),
compared on this machine with metaheur.solver.solve:

  cpu-serial      one island on one core;
  cpu-islands xk  k islands on k cores (worker processes), k = 1 .. all cores (--max-cores caps
                  it), or the k of --cpu-islands K1,K2,...;
  gpu             one island per GPU, driven by one host core;
  hybrid          GPU islands plus CPU islands on the remaining cores, load-balanced.

GPU rows read "absent: no GPU" when CuPy finds no device (nothing is invented). Instances of
increasing size: QAP tai30a, tai50a, tai100a, tai256c and a generated gen:qap:500; TSP pr2392,
rl5915, rl11849, pla33810, pla85900 (those present under METAHEUR_INSTANCES; the others are
skipped and named in the header); PFSP and LOP instances only when named (--pfsp, --lop, e.g.
gen:pfsp:100:20, gen:lop:300). The linear ordering problem is a maximisation: its costs are
values to maximise, and gaps and targets follow the problem's sense (lib/runs.py). Per instance
and strategy, over --seeds seeds:

  ls_per_s         local-search iterations (QAP tabu iterations, TSP kicks) of all islands per
                   second of search time (result.search_iterations / result.time_s);
  busy_ls_per_s    the same over the seconds the islands spent inside their epochs;
  speedup          ls_per_s / ls_per_s of cpu-serial on the same instance;
  mean_gap_%       mean gap at equal time (the run's budget) to the reference, >= 0 when worse;
  time_to_target_s first end-of-epoch time at which the best was within the target gap
                   (default 1 % QAP, 2 % TSP, 1 % PFSP, 0.5 % LOP) of the best-known value
                   (generated instances: of the best value any run here found); median over
                   seeds, "not reached" otherwise;
  device_split     share of the iterations per device; for hybrid with the load balancer's
                   utilisation per device (result.device_loads).

Time per run: --seconds S for every instance, else scaled by size from --base-seconds B (QAP
B * n / 50, TSP B * n / 1000, PFSP B * n / 50, LOP B * n / 100, clipped to [B / 2, 10 B]).
Kernel compilation is not counted; worker start-up is (see lib/backends.py). Writes
strategies.csv/.md (one row per instance and strategy), strategies_runs.csv/.md (one row per run)
and strategies_speedup.png (speedup against cores).

    python experiments/strategies.py --quick                    # seconds, generated instances
    METAHEUR_INSTANCES=../shared/instances python experiments/strategies.py [--seeds 3]
        [--base-seconds 10] [--qap tai30a,...] [--tsp pr2392,...] [--out DIR]

A GPU machine's comparison of the four problems on generated instances (a few minutes on 16
cores: 4 instances x 4 configurations x 8 s, plus start-up):

    python experiments/strategies.py --qap gen:qap:100 --tsp gen:tsp:10000 --pfsp gen:pfsp:100:20 \
        --lop gen:lop:300 --cpu-islands 16 --seconds 8 --seeds 1 --out DIR
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.instances import SIZE_UNIT, budget_seconds, names_arg, present, split_names
from lib.report import RESULTS, out_folder, run_header, write_table
from lib.runs import RUN_COLUMNS, TARGET_GAP, run_rows
from lib.strategies import STRATEGY_COLUMNS, compare_strategies, plot_speedup, strategy_configs

QAP = ["tai30a", "tai50a", "tai100a", "tai256c", "gen:qap:500"]
TSP = ["pr2392", "rl5915", "rl11849", "pla33810", "pla85900"]
#: Per problem kind: (default instances, those of --quick); PFSP and LOP only when named.
INSTANCES = {"qap": (QAP, ["gen:qap:20"]), "tsp": (TSP, ["gen:tsp:200"]), "pfsp": ([], []), "lop": ([], [])}
EXAMPLES = {"pfsp": "gen:pfsp:100:20", "lop": "gen:lop:300"}


def core_counts(text: str) -> list[int]:
    """The k of --cpu-islands: comma-separated positive integers."""
    try:
        ks = [int(x) for x in split_names(text)]
    except ValueError:
        ks = []
    if not ks or min(ks) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers K1,K2,..., got {text!r}")
    return ks


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="two generated instances, 1 s runs (smoke test)")
    for kind, (full, _) in INSTANCES.items():
        default = ",".join(full) or f"none, e.g. {EXAMPLES[kind]}"
        ap.add_argument(f"--{kind}", default=None, help=f"{kind.upper()} instances (default {default})")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per run (default 3; quick 1)")
    ap.add_argument("--base-seconds", type=float, default=10.0, help="B of the size-scaled time budget")
    ap.add_argument("--seconds", type=float, default=None, help="the same budget for every instance instead")
    ap.add_argument("--epoch-seconds", type=float, default=None, help="epoch length (default 1; quick 0.5)")
    for kind in INSTANCES:
        ap.add_argument(f"--target-gap-{kind}", type=float, default=TARGET_GAP[kind],
                        help=f"target gap (%%) of {kind.upper()} for the time to target (default %(default)s)")
    ap.add_argument("--max-cores", type=int, default=None, help="cpu-islands up to this many cores (default all)")
    ap.add_argument("--cpu-islands", type=core_counts, default=None, metavar="K1,K2,...",
                    help="the cpu-islands configurations to run, k islands on k cores (default 1 .. all cores, "
                         "capped by --max-cores)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"output folder (default {RESULTS}; --quick: a temporary folder)")
    return ap.parse_args(argv)


def instance_names(args: argparse.Namespace) -> list[str]:
    """The instances of every problem kind, in INSTANCES' order."""
    return [name for kind, (full, quick) in INSTANCES.items()
            for name in names_arg(getattr(args, kind), full, quick, args.quick)]


def settings_line(args: argparse.Namespace, seeds: int, epoch: float, gaps: dict[str, float]) -> str:
    """The header's settings: budget, seeds, epochs, target gaps."""
    scaled = ", ".join(f"{kind.upper()} B*n/{unit}" for kind, unit in SIZE_UNIT.items())
    budget = f"{args.seconds} s per run" if args.seconds else (
        f"size-scaled budget, B = {args.base_seconds} s ({scaled}, clipped to [B/2, 10B])")
    targets = ", ".join(f"{gap} % {kind.upper()}" for kind, gap in gaps.items())
    return f"{budget}; {seeds} seed(s); epochs of {epoch} s; target gap {targets}"


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    args.out = out_folder(args.out, args.quick)
    if args.quick:
        args.seconds = args.seconds or 1.0
    seeds = args.seeds or (1 if args.quick else 3)
    epoch = args.epoch_seconds or (0.5 if args.quick else 1.0)
    names, missing = present(instance_names(args))
    if not names:
        sys.exit("strategies: no instance present (set METAHEUR_INSTANCES)")

    def seconds_for(prob) -> float:
        return args.seconds or budget_seconds(prob.kind, prob.n, args.base_seconds)

    gaps = {kind: getattr(args, f"target_gap_{kind}") for kind in INSTANCES}
    head = run_header(f"settings: {settings_line(args, seeds, epoch, gaps)}")
    if missing:
        head.append(f"not present (skipped): {', '.join(missing)}")
    configs = strategy_configs(max_cores=args.max_cores, islands=args.cpu_islands)
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
