"""Ablation of the memetic islands at equal time: what each ingredient contributes.

One factor at a time off the default (GA + local search, the default crossover, ring migration of
the best over the worst every epoch; no migration on uniformly random QAP instances), on
cpu-islands with --islands islands (default max(4, cores): with 2 islands ring, complete and
random migration are the same exchange), the same wall time for every variant, several seeds:

  hybridisation  GA+LS (default) / LS-only multistart (crossover "none": what `metaheur solve
                 --crossover none` runs, population 1, one child per generation) / GA-only
                 (ls_budget = 0: no local search)
  crossover      QAP ux / cx / pmx; TSP ox / eax (the default: Nagata's GA, no local search of
                 children, so for the TSP "GA-only" is the default itself)
  topology       ring / complete / random (every epoch where the default does not migrate)
  interval       migration every 1 / 3 / 10 epochs, or no migration
  restart        a GA island rebuilds its population, keeping its best, after 30 (the default) or
                 100 generations without a new best, or never

Instances: QAP tai50a, tai100a, sko100a; TSP pr2392, pcb3038 (those present under
METAHEUR_INSTANCES; generated gen: instances work too). Per variant: mean, best and standard
deviation of the gap to the best-known value (generated instances: to the best cost found here),
local-search iterations per second, generations, time to the run's best. A configuration that
appears in several groups (the default) is run once. Writes ablation.csv/.md and
ablation_runs.csv/.md.

    python experiments/ablation.py --quick                      # seconds, generated instances
    METAHEUR_INSTANCES=../shared/instances python experiments/ablation.py [--seconds 30] [--seeds 3]
        [--islands 4] [--groups hybridisation,crossover,topology,interval,restart] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.ablation import ABLATION_COLUMNS, ABLATION_GROUPS, run_ablation
from lib.instances import names_arg, present, split_names
from lib.report import RESULTS, out_folder, run_header, write_table
from lib.runs import RUN_COLUMNS, run_rows

from metaheur.devices import cpu_count

QAP = ["tai50a", "tai100a", "sko100a"]
TSP = ["pr2392", "pcb3038"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="two generated instances, 1 s runs (smoke test)")
    ap.add_argument("--qap", default=None, help=f"QAP instances (default {','.join(QAP)})")
    ap.add_argument("--tsp", default=None, help=f"TSP instances (default {','.join(TSP)})")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per variant (default 3; quick 1)")
    ap.add_argument("--seconds", type=float, default=None, help="wall time of every run (default 30; quick 1)")
    ap.add_argument("--islands", type=int, default=max(4, cpu_count()))
    ap.add_argument("--epoch-seconds", type=float, default=None, help="epoch length (default 1; quick 0.25)")
    ap.add_argument("--groups", default=",".join(ABLATION_GROUPS))
    ap.add_argument("--out", type=Path, default=None,
                    help=f"output folder (default {RESULTS}; --quick: a temporary folder)")
    args = ap.parse_args(argv)
    args.out = out_folder(args.out, args.quick)
    seconds = args.seconds or (1.0 if args.quick else 30.0)
    seeds = args.seeds or (1 if args.quick else 3)
    epoch = args.epoch_seconds or (0.25 if args.quick else 1.0)
    groups = split_names(args.groups)
    bad = [g for g in groups if g not in ABLATION_GROUPS]
    if bad:
        sys.exit(f"ablation: unknown group(s) {', '.join(bad)}: use {', '.join(ABLATION_GROUPS)}")
    names, missing = present(names_arg(args.qap, QAP, ["gen:qap:20"], args.quick)
                             + names_arg(args.tsp, TSP, ["gen:tsp:200"], args.quick))
    if not names:
        sys.exit("ablation: no instance present (set METAHEUR_INSTANCES)")
    head = run_header(f"settings: cpu-islands, {args.islands} islands, {seconds} s per run, {seeds} seed(s), "
                             f"epochs of {epoch} s; groups: {', '.join(groups)}")
    if missing:
        head.append(f"not present (skipped): {', '.join(missing)}")
    rows, runs = run_ablation(names, seeds, lambda prob: seconds, args.islands, groups, epoch)
    suffix = "_quick" if args.quick else ""
    write_table(rows, ABLATION_COLUMNS, "ablation" + suffix, head, args.out,
                "Ablation at equal time (one factor at a time off the default)")
    write_table(run_rows(runs), RUN_COLUMNS, "ablation_runs" + suffix, head, args.out,
                "Ablation: every run")


if __name__ == "__main__":
    main()
