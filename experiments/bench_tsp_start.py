"""How the EAX islands start on large TSP instances (docs/decisions/tsp-start.md): the start tours
of the population's members and the share of the time budget that builds the population.

Two tables:

1. ``bench_tsp_start_members``: one member built the way an EAX island builds it (its operators'
   ``random_tours`` or Hilbert-curve tours, then the island's descent: 2-opt, Or-opt, LK, no
   kicks) on one core: seconds per member and the members' mean gap, random against curve
   starts, by instance size (``--members``, ``--count`` members each);
2. ``bench_tsp_start``: ``metaheur.solve`` with the default strategy (cpu-islands) at equal wall
   time (``--seconds``) for each configuration of ``--configs``: ``random-0.3`` (random starts,
   30 % of the budget builds the population: the start before this decision), ``curve-0.3``,
   ``curve-0.1`` and ``curve-0.05`` (curve starts, that share), ``auto`` (the defaults),
   ``rebuild`` and ``ils`` (the defaults with a converged island rebuilding its population, or
   going on as an ILS of its best: docs/decisions/tsp-ils-continuation.md); the
   time to the first GA generation (when the last island has built its population: its first
   trace point), the population, restarts, generations and the gap at half the budget and at the
   end (to the best-known value, else to the best cost of the instance's runs).

    python experiments/bench_tsp_start.py [--quick] [--instances brd14051,pla85900] [--seconds 120]
        [--configs random-0.3,auto] [--members pr2392,rl5915,brd14051,pla85900] [--count 4]
        [--seed 1] [--lock FILE] [--name bench_tsp_start] [--out experiments/results]

``--lock FILE``: hold an exclusive lock on FILE (flock) during each timed run and each member
measurement, so that runs on a shared machine do not overlap other benchmarks taking the same
lock. ``--quick``: gen:tsp:2000 at 6 s, ``random-0.3`` and ``auto``, members of gen:tsp:2000.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np
from lib.instances import names_arg, need_instances, present, problem, split_names
from lib.parts import held
from lib.report import log, out_folder, run_header, write_table
from lib.runs import solve_run

from metaheur.devices import parse_device
from metaheur.engine import set_cpu_threads
from metaheur.engine.rng import stream_key
from metaheur.problems.tsp.eax_island import EAX_QUADRANT
from metaheur.problems.tsp.params import EAXParams

CONFIGS = {  # name: (GAParams.starts, GAParams.init_share, GAParams.restart; None: the default)
    "random-0.3": ("random", 0.3, None), "curve-0.3": ("curve", 0.3, None), "curve-0.1": ("curve", 0.1, None),
    "curve-0.05": ("curve", 0.05, None), "auto": ("auto", None, None), "rebuild": ("auto", None, "best"),
    "ils": ("auto", None, "ils")}
RUN_COLUMNS = ["instance", "n", "config", "seconds", "first_generation_s", "population", "restarts",
               "generations", "cost", "gap_half_%", "gap_end_%", "status"]
MEMBER_COLUMNS = ["instance", "n", "starts", "members", "seconds_per_member", "mean_gap_%", "best_gap_%"]


def first_generation(result) -> float | None:
    """Run time at which every island has built its first population (and starts its first GA
    generation): the latest of the islands' first trace points, which their builds report."""
    first: dict[int, float] = {}
    for p in result.trace:
        first.setdefault(p.island, p.time_s)
    return round(max(first.values()), 1) if first else None


def best_by(result, seconds: float) -> int | None:
    """The run's best cost ``seconds`` into it (None: no tour yet)."""
    costs = [p.cost for p in result.trace if p.time_s <= seconds]
    return min(costs) if costs else None


def with_gaps(rows: list[dict], best_known: int | None) -> list[dict]:
    """The gaps of an instance's rows to its best-known value, else to the best cost of its runs."""
    ref = best_known or min((r["cost"] for r in rows if "cost" in r), default=None)
    for r in rows:
        for key, cost in (("gap_half_%", r.get("cost_half")), ("gap_end_%", r.get("cost"))):
            r[key] = None if ref is None or cost is None else round(100 * (cost / ref - 1), 3)
    return rows


def run_row(name: str, config: str, seconds: float, seed: int, lock: str | None) -> dict:
    tsp = problem(name)
    starts, share, restart = CONFIGS[config]
    ga = tsp.default_params().ga
    ga = replace(ga, restart=restart or ga.restart)
    eax = EAXParams(starts=starts, init_share=share)
    with held(lock):
        run = solve_run(name, config=config, seconds=seconds, seed=seed, ga=ga, searches=(eax,))
    row = {"instance": name, "n": tsp.n, "config": config, "seconds": seconds, "status": run.status}
    if run.ok:
        r = run.result
        row.update(first_generation_s=first_generation(r), population="/".join(str(i.population) for i in r.islands),
                   restarts="/".join(str(i.restarts) for i in r.islands), generations=r.generations,
                   cost=r.cost, cost_half=best_by(r, seconds / 2))
    return row


def member_rows(name: str, count: int, seed: int, lock: str | None) -> list[dict]:
    """Members built as an EAX island builds them, random against curve starts, on one core."""
    tsp = problem(name)
    dev = parse_device("cpu")
    base = tsp.default_params()
    known = tsp.best_known()
    ref = known.value if known else None
    rows = []
    with held(lock):
        set_cpu_threads(1)
        for starts in ("random", "curve"):
            params = base.with_search(EAXParams(starts=starts))
            ops = tsp.operators(dev, params, 0, quadrant=EAX_QUADRANT)
            ops.improve(ops.random_tours(1, np.random.default_rng(seed)),  # kernels loaded before the clock
                        stream_key(np.uint64(seed), np.arange(1, dtype=np.uint64)))
            tours = ops.random_tours(count, np.random.default_rng(seed))
            t0 = time.perf_counter()
            _, costs, _ = ops.improve(tours, stream_key(np.uint64(seed), np.arange(count, dtype=np.uint64)))
            per = (time.perf_counter() - t0) / count
            ref_cost = ref or int(costs.min())
            rows.append({"instance": name, "n": tsp.n, "starts": starts, "members": count,
                         "seconds_per_member": round(per, 3),
                         "mean_gap_%": round(100 * (float(np.mean(costs)) / ref_cost - 1), 3),
                         "best_gap_%": round(100 * (int(costs.min()) / ref_cost - 1), 3)})
            log(f"  {name} {starts}: {per:.3f} s a member, mean gap {rows[-1]['mean_gap_%']} %")
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--instances", help="comma-separated instances of the runs table ('' for none)")
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--configs", default=None, help=f"comma-separated, of {', '.join(CONFIGS)}")
    ap.add_argument("--members", help="comma-separated instances of the members table ('' for none)")
    ap.add_argument("--count", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lock", default=None)
    ap.add_argument("--name", default="bench_tsp_start")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    need_instances("bench_tsp_start.py")
    out = out_folder(args.out, args.quick)
    suffix = "_quick" if args.quick else ""
    instances, _ = present(names_arg(args.instances, ["brd14051", "pla85900"], ["gen:tsp:2000"], args.quick))
    members, _ = present(names_arg(args.members, ["pr2392", "rl5915", "brd14051", "pla33810", "pla85900"],
                                   ["gen:tsp:2000"], args.quick))
    seconds = args.seconds or (6.0 if args.quick else 120.0)
    configs = split_names(args.configs) if args.configs else ["random-0.3", "auto"]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        ap.error(f"unknown configs {', '.join(unknown)}: use {', '.join(CONFIGS)}")
    head = run_header(f"settings: cpu-islands (default), seed {args.seed}, configs {', '.join(configs)}, "
                      f"{seconds:g} s a run; members: {args.count} a start kind, one core")
    if members:
        rows = [row for name in members for row in member_rows(name, args.count, args.seed, args.lock)]
        write_table(rows, MEMBER_COLUMNS, f"{args.name}_members{suffix}", head, out,
                    "EAX population members: seconds and gap by start tour")
    if instances:
        rows = []
        for name in instances:
            runs = []
            for config in configs:
                log(f"{name} {config}")
                runs.append(run_row(name, config, seconds, args.seed, args.lock))
            known = problem(name).best_known()
            rows += with_gaps(runs, known.value if known else None)
        write_table(rows, RUN_COLUMNS, f"{args.name}{suffix}", head, out,
                    "EAX islands' start: time to the first generation and gap at equal wall time")


if __name__ == "__main__":
    main()
