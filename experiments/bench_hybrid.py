"""Issue 5: the hybrid (islands) solver's throughput, quality and scaling, and its targets.

A thin driver over lib/ (the same code as strategies.py and ablation.py):

  strategies  every strategy (cpu-serial, cpu-islands with 1 .. all cores, gpu, hybrid; GPU rows
              "absent: no GPU" without one): local-search iterations per second of all islands,
              speedup against cpu-serial, gap, time to the target gap (1 % QAP, 2 % TSP), the
              CPU/GPU split of hybrid; PNG of the speedup against cores; TSP islands with a
              fixed population of 100 and no restarts (steady_workload), since the rate
              of EAX children of the default depends on when each run converged and rebuilt its
              population (one core, two seeds: 3.8e4 and 4.5e4 per second on pr2392);
  ablation    GA + local search against the local-search-only multistart (and GA-only) at equal
              time on cpu-islands with all cores;
  dask        cpu-islands on all cores through joblib's loky pool against a local Dask cluster
              (SolveParams(dask_local=cores), a new cluster per run) and against one started local
              cluster (SolveParams(scheduler=ADDRESS)), epochs of 1 s; TSP islands with a fixed
              population of 100 and no restarts, so that all three do the same kind of work.

Targets (bench_hybrid.csv/.md, "met" / "not met"; on a busy machine the ratios are noisy):
  cpu-islands on all cores >= 0.9 x cores (1.8x on 2 cores) the ls-iterations/s of cpu-serial;
  Dask (dask_local) >= 0.9x the ls-iterations/s of loky.
Default instances: QAP tai50a, tai100a; TSP pr2392 (generated gen: instances in --quick).
Writes bench_hybrid.csv/.md (targets), bench_hybrid_strategies.*, bench_hybrid_runs.*,
bench_hybrid_ablation.*, bench_hybrid_dask.* and bench_hybrid_speedup.png.

    python experiments/bench_hybrid.py --quick
    METAHEUR_INSTANCES=../shared/instances python experiments/bench_hybrid.py [--seconds 30] [--seeds 3]
        [--parts strategies,ablation,dask] [--qap tai50a,tai100a] [--tsp pr2392] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.ablation import ABLATION_COLUMNS, run_ablation
from lib.backends import BACKEND_COLUMNS, DASK_LOCAL, DASK_WARM, compare_backends, steady_workload
from lib.instances import names_arg, present, split_names
from lib.report import RESULTS, out_folder, run_header, write_table
from lib.runs import RUN_COLUMNS, run_rows
from lib.strategies import STRATEGY_COLUMNS, compare_strategies, plot_speedup

from metaheur.devices import cpu_count

QAP = ["tai50a", "tai100a"]
TSP = ["pr2392"]
PARTS = ("strategies", "ablation", "dask")
TARGET_COLUMNS = ["target", "instance", "n", "measured", "busy_measured", "threshold", "verdict", "note"]


def islands_target(rows: list[dict], cores: int) -> list[dict]:
    need = 1.8 if cores == 2 else round(0.9 * cores, 2)
    out = []
    for name in dict.fromkeys(r["instance"] for r in rows):
        mine = {r["config"]: r for r in rows if r["instance"] == name}
        serial, top = mine.get("cpu-serial"), mine.get(f"cpu-islands x{cores}")
        row = {"target": f"cpu-islands x{cores} / cpu-serial ls/s", "instance": name, "threshold": need}
        if serial and top and serial.get("ls_per_s") and top.get("ls_per_s"):
            busy = (top["busy_ls_per_s"] / serial["busy_ls_per_s"]
                    if top.get("busy_ls_per_s") and serial.get("busy_ls_per_s") else None)
            row.update({"n": top["n"], "measured": round(top["ls_per_s"] / serial["ls_per_s"], 3),
                        "busy_measured": None if busy is None else round(busy, 3)})
            row["verdict"] = "met" if row["measured"] >= need else "not met"
        else:
            row.update({"verdict": "not measured", "note": "a run failed"})
        out.append(row)
    return out


def dask_target(rows: list[dict]) -> list[dict]:
    out = []
    for name in dict.fromkeys(r["instance"] for r in rows):
        mine = {r["config"]: r for r in rows if r["instance"] == name}
        loky = mine.get("loky", {})
        for label in (DASK_LOCAL, DASK_WARM):
            dask = mine.get(label)
            if dask is None:
                continue
            row = {"target": f"{label} / loky ls/s", "instance": name, "n": dask.get("n"), "threshold": 0.9,
                   "note": "" if label == DASK_LOCAL else "for information (the target is on dask_local)"}
            if dask.get("ratio_to_loky") is not None:
                busy = (dask["busy_ls_per_s"] / loky["busy_ls_per_s"]
                        if dask.get("busy_ls_per_s") and loky.get("busy_ls_per_s") else None)
                row.update({"measured": dask["ratio_to_loky"], "verdict": "met" if dask["ratio_to_loky"] >= 0.9
                            else "not met", "busy_measured": None if busy is None else round(busy, 3)})
            else:
                row.update({"verdict": "not measured", "note": dask.get("status", "")})
            out.append(row)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="generated instances, 1 s runs (smoke test)")
    ap.add_argument("--qap", default=None, help=f"QAP instances (default {','.join(QAP)})")
    ap.add_argument("--tsp", default=None, help=f"TSP instances (default {','.join(TSP)})")
    ap.add_argument("--dask-instances", default=None, help="instances of the Dask part (default: all; quick: QAP)")
    ap.add_argument("--seconds", type=float, default=None, help="wall time of every run (default 30; quick 1)")
    ap.add_argument("--seeds", type=int, default=None, help="seeds (default 3; quick 1)")
    ap.add_argument("--epoch-seconds", type=float, default=1.0, help="epoch length (the Dask comparison: 1 s)")
    ap.add_argument("--parts", default=",".join(PARTS))
    ap.add_argument("--out", type=Path, default=None,
                    help=f"output folder (default {RESULTS}; --quick: a temporary folder)")
    args = ap.parse_args(argv)
    args.out = out_folder(args.out, args.quick)
    seconds = args.seconds or (1.0 if args.quick else 30.0)
    seeds = args.seeds or (1 if args.quick else 3)
    parts = split_names(args.parts)
    if any(p not in PARTS for p in parts):
        sys.exit(f"bench_hybrid: --parts takes {', '.join(PARTS)}")
    qap = names_arg(args.qap, QAP, ["gen:qap:20"], args.quick)
    tsp = names_arg(args.tsp, TSP, ["gen:tsp:200"], args.quick)
    names, missing = present(qap + tsp)
    if not names:
        sys.exit("bench_hybrid: no instance present (set METAHEUR_INSTANCES)")
    dask_names = [n for n in names_arg(args.dask_instances, names, [n for n in names if n in qap], args.quick)
                  if n in names]
    cores = cpu_count()
    suffix = "_quick" if args.quick else ""
    settings = f"settings: {seconds} s per run, {seeds} seed(s), epochs of {args.epoch_seconds} s"
    head = run_header(settings)
    if missing:
        head.append(f"not present (skipped): {', '.join(missing)}")
    targets = []
    if "strategies" in parts:
        rows, runs = compare_strategies(names, seeds, lambda prob: seconds, None, args.epoch_seconds,
                                        ga_for=steady_workload)
        workload = [*head, "TSP islands: population 100, no restarts (a steady workload for the throughput)"]
        write_table(rows, STRATEGY_COLUMNS, "bench_hybrid_strategies" + suffix, workload, args.out,
                    "Throughput and quality of each strategy")
        write_table(run_rows(runs), [c for c in RUN_COLUMNS if c != "group"],
                    "bench_hybrid_runs" + suffix, workload, args.out, "Every run of the strategy comparison")
        plot_speedup(rows, args.out / f"bench_hybrid_speedup{suffix}.png",
                            "Scaling of local-search iterations/s with cores")
        targets += islands_target(rows, cores)
    if "ablation" in parts:
        rows, _ = run_ablation(names, seeds, lambda prob: seconds, cores, ("hybridisation",),
                                      args.epoch_seconds)
        write_table(rows, ABLATION_COLUMNS, "bench_hybrid_ablation" + suffix,
                    [*head, f"cpu-islands on {cores} islands"], args.out,
                    "GA + local search vs local-search-only multistart at equal time")
    if "dask" in parts and dask_names:
        rows, _ = compare_backends(dask_names, seeds, lambda prob: seconds, cores, args.epoch_seconds)
        write_table(rows, BACKEND_COLUMNS, "bench_hybrid_dask" + suffix, head, args.out,
                    "cpu-islands through loky and through Dask")
        targets += dask_target(rows)
    if targets:
        write_table(targets, TARGET_COLUMNS, "bench_hybrid" + suffix,
                    [*head, "measured = ratio of ls_per_s (search_iterations / time_s); busy_measured = the same "
                     "over the seconds spent inside epochs; TSP islands: population 100, no restarts"],
                    args.out, "Issue 5 targets")


if __name__ == "__main__":
    main()
