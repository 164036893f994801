"""Passes and time of the parallel 2-opt + Or-opt descent (metaheur.problems.tsp.descent) to a local
optimum, on the CPU build of its kernels (the same source a GPU runs), by start tours and move rule:

* start ``random``: a uniformly random tour; ``curve``: a Hilbert-curve tour of a randomly turned
  and shifted plane (metaheur.problems.tsp.starts.curve_tours, what a GPU EAX island starts from);
* moves ``one``: the best move of each tour a pass (``several=False``, the rule before issue 33);
  ``several``: the best move and every other disjoint one (tsp_best_at + tsp_apply_disjoint);
  ``dlb``: the don't-look-bit pass, moves selected by all threads (``several_kernel="dlb"``:
  tsp_dlb_best_at + tsp_dlb_apply, issue 62), from the same tours as ``several``.

``--tours`` tours (default one) of a generated uniform EUC_2D instance (seed 1) per row, candidate
lists of 10 nearest neighbours, on ``--device`` (default ``cpu``: the CPU build on one thread a
block); the kernel build is done before the clock starts. A row stops when every tour is at its
local optimum, or after ``--limit`` seconds (stop ``time``: ``passes`` and ``length`` are then
those reached so far). ``moves_made``, ``start_length`` and ``length``: means over the tours.
``passes/s`` is the pass rate.

    python experiments/bench_descent.py [--sizes 2000 20000] [--limit 60] [--moves one several dlb]
        [--device cuda:0] [--tours 264] [--label gpu] [--quick] [--out DIR]

Writes ``bench_descent.csv`` and ``.md`` (``bench_descent_quick`` with --quick: n = 300 and 1000,
5 s; ``_LABEL`` added with --label) under --out (default experiments/results; a temporary folder
with --quick).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib.report import out_folder, run_header, write_table

from metaheur.problems import uniform_tsp
from metaheur.problems.tsp.descent import TSPDescentBatch
from metaheur.problems.tsp.starts import curve_tours

MOVES = {"one": {"several": False}, "several": {"several": True}, "dlb": {"several": True, "several_kernel": "dlb"}}
COLUMNS = ["n", "tours", "device", "start", "moves", "passes", "moves_made", "seconds", "passes/s", "start_length",
           "length", "stop"]


def rows_for(n: int, limit: float, moves: list[str], device: str = "cpu", tours: int = 1) -> list[dict]:
    tsp = uniform_tsp(n, seed=1)
    rng = np.random.default_rng(1)
    starts = {"random": np.array([rng.permutation(n) for _ in range(tours)]),
              "curve": curve_tours(tsp.coords, tours, np.random.default_rng(1))}
    rows = []
    for name, start in starts.items():
        start_length = round(float(np.mean([tsp.tour_length(t) for t in start])))
        for rule in moves:
            descent = TSPDescentBatch(tsp, device, k=10, **MOVES[rule])
            descent.run(start, max_passes=1)  # the kernel build, off the clock
            out = descent.run(start, time_limit=limit)
            passes = out.extra["passes"]
            rows.append({"n": n, "tours": tours, "device": device, "start": name, "moves": rule, "passes": passes,
                         "moves_made": round(float(out.iterations.mean())), "seconds": round(out.seconds, 3),
                         "passes/s": round(passes / out.seconds, 1), "start_length": start_length,
                         "length": round(float(out.best_costs.mean())), "stop": out.stop_reason})
            print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--limit", type=float, default=None, help="seconds a row may take (default 60; 5 quick)")
    parser.add_argument("--moves", nargs="+", choices=list(MOVES), default=list(MOVES))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--tours", type=int, default=1, help="tours a row descends at once")
    parser.add_argument("--label", default=None, help="added to the table's name")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    sizes = args.sizes or ([300, 1000] if args.quick else [2000, 20000])
    limit = args.limit or (5.0 if args.quick else 60.0)
    rows = [row for n in sizes for row in rows_for(n, limit, args.moves, args.device, args.tours)]
    head = run_header(f"settings: sizes {sizes}, limit {limit:g} s a row, k = 10, {args.tours} tours a row, "
                      f"{args.device} device")
    name = "bench_descent_quick" if args.quick else "bench_descent"
    write_table(rows, COLUMNS, name + (f"_{args.label}" if args.label else ""), head,
                out_folder(args.out, args.quick), title="Parallel TSP descent: passes to a local optimum")
    return 0


if __name__ == "__main__":
    sys.exit(main())
