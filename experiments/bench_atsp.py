"""The asymmetric TSP: quality on TSPLIB's ATSP instances and `metaheur solve` against LKH-3 (elkai)
at equal wall time on generated instances.

Two tables:

* ``bench_atsp_quality``: every ATSP instance of ``$METAHEUR_INSTANCES/atsp/bks.csv``, solved by
  ``metaheur.solve(instance, time_limit=--seconds, target=optimum, seed)`` (the default strategy:
  one EAX island per core on the Jonker-Volgenant transformation) for ``--seeds`` seeds; the
  median length, how many seeds reached the optimum, the median time to the last improvement.
* ``bench_atsp_elkai``: for each size of ``--sizes``, ``gen:atsp:N:1`` solved first by elkai
  (LKH-3 with its defaults, ``runs=1``: its smallest run, timed by the wall clock, subgradient
  ascent included, one core), then by ``metaheur.solve`` within that wall time, its setup included
  (:func:`lib.runs.solve_in_wall_time`). Both lengths are recomputed from the matrix.

    python experiments/bench_atsp.py [--quick] [--seeds 3] [--seconds 10] [--sizes 1000 3000]
        [--instances br17,ftv64] [--parts quality,elkai] [--out experiments/results]

elkai is a benchmark-only extra: ``pip install -e '.[bench]'``; without it the second table
says so.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib.report import header, out_folder, write_table
from lib.runs import solve_in_wall_time

import metaheur
from metaheur.problems import asymmetric_tsp, load_instance


def quality_rows(names: list[str], bks: dict[str, int], seeds: int, seconds: float) -> list[dict]:
    rows = []
    for name in names:
        atsp = load_instance(name)
        runs = []
        for seed in range(seeds):
            r = metaheur.solve(atsp, time_limit=seconds, target=bks[name], seed=seed)
            last = max((t.time_s for t in r.trace), default=r.time_s)
            runs.append((r.cost, last))
            print(f"  {name} seed {seed}: {r.cost} in {last:.2f} s", flush=True)
        costs = [c for c, _ in runs]
        rows.append({"instance": name, "n": atsp.n, "optimum": bks[name], "median_length": statistics.median(costs),
                     "worst_length": max(costs), "optimal_runs": f"{sum(c == bks[name] for c in costs)}/{seeds}",
                     "median_time_s": round(statistics.median(t for _, t in runs), 2)})
    return rows


def elkai_rows(sizes: list[int], seed: int) -> list[dict]:
    try:
        import elkai
    except ImportError:
        note = "absent: elkai not installed (pip install -e '.[bench]')"
        return [{"instance": f"gen:atsp:{n}:1", "n": n, "note": note} for n in sizes]
    rows = []
    for n in sizes:
        atsp = asymmetric_tsp(n, 1)
        start = time.perf_counter()
        tour = elkai.DistanceMatrix(atsp.matrix.tolist()).solve_tsp(runs=1)
        budget = time.perf_counter() - start
        elkai_length = atsp.tour_length(tour[:-1] if len(tour) == n + 1 else tour)
        print(f"  gen:atsp:{n}:1 elkai {elkai_length} in {budget:.1f} s", flush=True)
        r, wall = solve_in_wall_time(atsp, budget, seed)
        print(f"  gen:atsp:{n}:1 metaheur {r.cost} in {r.time_s:.1f} s ({wall:.1f} s with setup)", flush=True)
        ratio = round(100.0 * (r.cost - elkai_length) / elkai_length, 3)
        rows.append({"instance": f"gen:atsp:{n}:1", "n": n, "seconds": round(budget, 1), "elkai": elkai_length,
                     "metaheur": r.cost, "metaheur_vs_elkai_%": ratio, "metaheur_wall_s": round(wall, 1),
                     "note": ""})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="two small instances, 1 seed, 2 s, one 200-city elkai row")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--sizes", type=int, nargs="*", default=[1000, 3000])
    ap.add_argument("--instances", default="", help="comma-separated names (default: every row of atsp/bks.csv)")
    ap.add_argument("--parts", default="quality,elkai", help="which tables: quality, elkai or both")
    ap.add_argument("--out", default=None, help="folder for the tables (default: results/; --quick: a new temporary "
                    "folder)")
    args = ap.parse_args()
    root = os.environ.get("METAHEUR_INSTANCES")
    if not root:
        sys.exit("set METAHEUR_INSTANCES to the folder with atsp/bks.csv")
    with open(Path(root) / "atsp" / "bks.csv") as handle:
        bks = {row["name"]: int(row["best_known"]) for row in csv.DictReader(handle)}
    names = [s for s in args.instances.split(",") if s] or sorted(bks, key=lambda k: (len(k), k))
    seeds, seconds, sizes, suffix = args.seeds, args.seconds, args.sizes, ""
    if args.quick:
        names, seeds, seconds, sizes, suffix = ["br17", "ftv33"], 1, 2.0, [200], "_quick"
    load = os.getloadavg()[0]
    head = header(f"settings: {seeds} seed(s), {seconds:g} s per instance, elkai sizes {sizes}; load "
                           f"average at the start {load:.1f} on {os.cpu_count()} cores (shared with other jobs)")
    out = out_folder(args.out, args.quick)
    parts = set(args.parts.split(","))
    if "quality" in parts:
        write_quality(quality_rows(names, bks, seeds, seconds), head, seeds, seconds, suffix, out)
    if "elkai" in parts:
        write_versus(elkai_rows(sizes, 0), head, suffix, out)


def write_quality(quality: list[dict], head: list[str], seeds: int, seconds: float, suffix: str, out) -> None:
    write_table(quality, ["instance", "n", "optimum", "median_length", "worst_length", "optimal_runs",
                                   "median_time_s"], f"bench_atsp{suffix}",
                         [*head, f"quality: {seeds} seed(s), {seconds:g} s each, target the optimum; median_time_s: "
                                 "median time of the last improvement"], out, "ATSP: TSPLIB instances")


def write_versus(versus: list[dict], head: list[str], suffix: str, out) -> None:
    write_table(versus, ["instance", "n", "seconds", "elkai", "metaheur", "metaheur_vs_elkai_%",
                                  "metaheur_wall_s", "note"],
                         f"bench_atsp_elkai{suffix}",
                         [*head, "elkai (LKH-3, runs=1, one core) timed first; metaheur solve (default strategy) "
                                 "then gets that wall time, setup included (worker start, the transformation, "
                                 "candidate lists: measured on a 1 s run first and taken off its time limit); "
                                 "metaheur_wall_s: the whole call; one seed each"], out,
                         "ATSP: metaheur vs elkai at equal time")


if __name__ == "__main__":
    main()
