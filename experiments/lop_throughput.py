"""Where a LOP island's time goes on one core: the engine's iterated local search over insertions
(kicks a second), lop_ils.c's iterations a second at the same size, the memetic island's children
improved a second and the time to build its first population.

Per instance (``--names``, xLOLIB/xLOLIB2 of ``$METAHEUR_INSTANCES/lop``), on the CPU build, one
search at a time:

* ``engine_kicks_per_s``: ``PermSearchBatch`` (the LOP's default ILS: kicks of 3 random
  insertions, each followed by a first-improvement insertion descent) from a local optimum,
  ``--kicks`` kicks timed;
* ``lop_ils_k3_per_s`` and ``lop_ils_k7_per_s``: lop_ils.c's iterations (a kick of k random
  insertions and its local search) a second over ``--seconds`` seconds, k = 3 and its default 7;
* ``children_per_s``: the memetic island's operators with the LOP's defaults (its crossover, each
  child brought to a local optimum: docs/decisions/lop-method.md) on 5 children of improved
  random members, three generations timed;
* ``population_s``: 10 random members improved (the island's start).

    python experiments/lop_throughput.py [--quick] [--names be75eec_150,be75eec_250,be75np_300] [--out DIR]

``--quick``: be75eec_150 only, 100 kicks, 0.5 s of lop_ils.c (a smoke test; a temporary folder).
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lop import build_lop_ils
from lib.report import header, out_folder, write_table

from metaheur.devices import parse_device
from metaheur.islands.perm_operators import PermOperators
from metaheur.problems.lop.files import read_lolib
from metaheur.search.perm_search import PermSearchBatch


def engine_kicks_per_s(lop, kicks: int) -> float:
    batch = PermSearchBatch(lop, "cpu", 1, lop.default_params().perm)
    start = np.random.default_rng(0).permutation(lop.n)[None]
    local = batch.run(start, np.array([1], np.uint64), 1).best
    t0 = time.perf_counter()
    batch.run(local, np.array([2], np.uint64), kicks)
    return kicks / (time.perf_counter() - t0)


def lop_ils_per_s(exe: Path, path: Path, seconds: float, k: int) -> float:
    out = subprocess.run([str(exe), str(path), str(int(seconds * 1000)), "1", str(k)], capture_output=True,
                         text=True, check=True).stdout
    values = dict(re.findall(r"(\w+)=([\d.]+)", out))
    return int(values["iterations"]) / float(values["seconds"])


def island_rates(lop) -> tuple[float, float]:
    ops = PermOperators(lop, parse_device("cpu"), lop.default_params())
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    members, _, _ = ops.improve(ops.random_solutions(10, rng), np.arange(10, dtype=np.uint64))
    population_s = time.perf_counter() - t0
    pairs = np.array([[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]])
    t0 = time.perf_counter()
    for g in range(3):
        keys = np.arange(5, dtype=np.uint64) + 100 * (g + 1)
        ops.improve(ops.crossover(members, pairs, keys), keys)
    return 15 / (time.perf_counter() - t0), population_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="be75eec_150 only, 100 kicks, 0.5 s of lop_ils.c")
    ap.add_argument("--names", default="be75eec_150,be75eec_250,be75np_300")
    ap.add_argument("--kicks", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--yardsticks", default=None, help="folder with lop_ils.c (default $METAHEUR_YARDSTICKS)")
    ap.add_argument("--out", default=None, help="folder for the table (default results/; --quick: a new temporary "
                    "folder)")
    args = ap.parse_args()
    if args.quick:
        args.names, args.kicks, args.seconds = "be75eec_150", 100, 0.5
    root = os.environ.get("METAHEUR_INSTANCES")
    if not root or not (Path(root) / "lop" / "bks.csv").is_file():
        sys.exit("set METAHEUR_INSTANCES to the folder with lop/bks.csv")
    root = Path(root) / "lop"
    with open(root / "bks.csv", newline="") as handle:
        sets = {r["name"]: r["set"] for r in csv.DictReader(handle)}
    head = header(f"settings: one search at a time on one core; load average at the start {os.getloadavg()[0]:.1f} on "
                  f"{os.cpu_count()} cores")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_lop_ils(args.yardsticks, Path(tmp))
        for name in [s for s in args.names.split(",") if s]:
            path = root / sets[name] / name
            lop = read_lolib(path)
            children, population = island_rates(lop)
            rows.append({"instance": name, "n": lop.n, "engine_kicks_per_s": round(engine_kicks_per_s(lop, args.kicks)),
                         "lop_ils_k3_per_s": round(lop_ils_per_s(exe, path, args.seconds, 3)),
                         "lop_ils_k7_per_s": round(lop_ils_per_s(exe, path, args.seconds, 7)),
                         "children_per_s": round(children, 1), "population_s": round(population, 2)})
            print(f"  {rows[-1]}", flush=True)
    write_table(rows, ["instance", "n", "engine_kicks_per_s", "lop_ils_k3_per_s", "lop_ils_k7_per_s",
                       "children_per_s", "population_s"], f"lop_throughput{'_quick' if args.quick else ''}", head,
                out_folder(args.out, args.quick), "LOP: where an island's time goes (one core)")


if __name__ == "__main__":
    main()
