"""Passes and time of the parallel 2-opt + Or-opt descent (metaheur.problems.tsp.descent) to a local
optimum, on the CPU build of its kernels (the same source a GPU runs), by start tours and move rule:

* start ``random``: a uniformly random tour; ``curve``: a Hilbert-curve tour of a randomly turned
  and shifted plane (metaheur.problems.tsp.starts.curve_tours, what a GPU EAX island starts from);
* moves ``one``: the best move of each tour a pass (``several=False``, the rule before issue 33);
  ``several``: the best move and every other disjoint one (tsp_best_at + tsp_apply_disjoint).

One tour of a generated uniform EUC_2D instance (seed 1) per row, candidate lists of 10 nearest
neighbours, the CPU build on one thread a block (``cpu`` device); the kernel build is done before
the clock starts. A row stops at the local optimum, or after ``--limit`` seconds (stop ``time``:
``passes`` and ``length`` are then those reached so far). ``passes/s`` is the pass rate.

    python experiments/bench_descent.py [--sizes 2000 20000] [--limit 60] [--quick] [--out DIR]

Writes ``bench_descent.csv`` and ``.md`` (``bench_descent_quick`` with --quick: n = 300 and 1000,
5 s) under --out (default experiments/results; a temporary folder with --quick).
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

COLUMNS = ["n", "start", "moves", "passes", "moves_made", "seconds", "passes/s", "start_length", "length", "stop"]


def rows_for(n: int, limit: float) -> list[dict]:
    tsp = uniform_tsp(n, seed=1)
    starts = {"random": np.random.default_rng(1).permutation(n)[None, :],
              "curve": curve_tours(tsp.coords, 1, np.random.default_rng(1))}
    rows = []
    for name, tour in starts.items():
        for several in (False, True):
            descent = TSPDescentBatch(tsp, k=10, several=several)
            descent.run(tour, max_passes=1)  # the kernel build, off the clock
            out = descent.run(tour, time_limit=limit)
            passes = out.extra["passes"]
            rows.append({"n": n, "start": name, "moves": "several" if several else "one", "passes": passes,
                         "moves_made": int(out.iterations[0]), "seconds": round(out.seconds, 3),
                         "passes/s": round(passes / out.seconds, 1), "start_length": tsp.tour_length(tour[0]),
                         "length": int(out.best_costs[0]), "stop": out.stop_reason})
            print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--limit", type=float, default=None, help="seconds a row may take (default 60; 5 quick)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    sizes = args.sizes or ([300, 1000] if args.quick else [2000, 20000])
    limit = args.limit or (5.0 if args.quick else 60.0)
    rows = [row for n in sizes for row in rows_for(n, limit)]
    head = run_header(f"settings: sizes {sizes}, limit {limit:g} s a row, k = 10, one tour, cpu device")
    write_table(rows, COLUMNS, "bench_descent_quick" if args.quick else "bench_descent", head,
                out_folder(args.out, args.quick), title="Parallel TSP descent: passes to a local optimum")
    return 0


if __name__ == "__main__":
    sys.exit(main())
