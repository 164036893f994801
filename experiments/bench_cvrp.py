"""The capacitated VRP of docs/routing.md (the tutorial's ``CVRP``: a giant tour cut by Prins'
Split) against PyVRP at equal wall time on seeded generated instances.

Instances (:func:`generate`): ``N`` customers with integer coordinates drawn uniformly from
[0, 1000]^2, the depot at (500, 500), integer demands drawn uniformly from 1..10, capacity 60 (about
11 customers a route); seed ``1000 * N + SEED``. Each is written as a CVRPLIB file and read by the
tutorial's ``read_vrp``, whose rounded Euclidean integer matrix PyVRP gets too.

Per instance, PyVRP first (``pyvrp.solve`` with ``MaxRuntime(--seconds)``, its defaults, one core),
then ``metaheur.solve`` of the tutorial's class (its defaults, or ``--method``) with the same wall
time, its setup included (:func:`lib.runs.solve_in_wall_time`), on every core of the machine (one
island a core), and with ``--one-core`` on one island too. Both values are recomputed by the
tutorial's ``routes_cost`` (every customer once, loads within the capacity) from the routes each
returns: PyVRP's routes, Split's cut of metaheur's tour.

    python experiments/bench_cvrp.py [--quick] [--sizes 100 200 400] [--seconds 30] [--seed 1]
        [--one-core] [--method ils] [--out experiments/results]

The tutorial's module is the first Python block of docs/routing.md, written into a temporary
folder and imported from there, as a user's module. PyVRP is a benchmark-only extra: ``pip install
-e '.[bench]'``; without it the PyVRP column says so.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib.report import out_folder, run_header, write_table
from lib.runs import solve_in_wall_time

import metaheur

PAGE = Path(__file__).resolve().parents[1] / "docs" / "routing.md"
CAPACITY = 60


def tutorial_module(folder: Path):
    """The tutorial's module (the first Python block of docs/routing.md) saved in ``folder`` and
    imported as ``cvrp_tutorial``; worker processes find it through PYTHONPATH."""
    code = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)[0]
    (folder / "cvrp_tutorial.py").write_text(code)
    sys.path.insert(0, str(folder))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    return importlib.import_module("cvrp_tutorial")


def generate(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(coordinates of the depot and the ``n`` customers, their demands) of instance ``seed``."""
    rng = np.random.default_rng(1000 * n + seed)
    xy = np.vstack([[500, 500], rng.integers(0, 1001, size=(n, 2))])
    return xy, rng.integers(1, 11, size=n)


def write_vrp(path: Path, name: str, xy: np.ndarray, demand: np.ndarray, capacity: int) -> None:
    """A CVRPLIB file (EUC_2D, the depot as node 1)."""
    lines = [f"NAME : {name}", "TYPE : CVRP", f"DIMENSION : {len(xy)}", "EDGE_WEIGHT_TYPE : EUC_2D",
             f"CAPACITY : {capacity}", "NODE_COORD_SECTION"]
    lines += [f"{k + 1} {x} {y}" for k, (x, y) in enumerate(xy)]
    lines += ["DEMAND_SECTION", "1 0", *(f"{k + 2} {d}" for k, d in enumerate(demand)), "DEPOT_SECTION", "1", "-1",
              "EOF"]
    path.write_text("\n".join(lines) + "\n")


def pyvrp_routes(problem, seconds: float, seed: int) -> list[list[int]] | None:
    """PyVRP's best routes (0-based customers) after ``seconds`` on ``problem``'s matrix; None
    without PyVRP."""
    try:
        import pyvrp
        from pyvrp.stop import MaxRuntime
    except ImportError:
        return None
    n, dist = problem.n, problem.dist
    data = pyvrp.ProblemData(
        locations=[pyvrp.Location(x=int(x), y=int(y)) for x, y in problem.xy],
        clients=[pyvrp.Client(location=k + 1, delivery=[int(problem.demand[k])]) for k in range(n)],
        depots=[pyvrp.Depot(location=0)],
        vehicle_types=[pyvrp.VehicleType(num_available=n, capacity=[problem.capacity])],
        distance_matrices=[dist], duration_matrices=[np.zeros_like(dist)])
    result = pyvrp.solve(data, stop=MaxRuntime(seconds), seed=seed, display=False)
    if not result.is_feasible():
        return None
    # a client activity's idx is its index in ``clients``: the tutorial's 0-based customer
    return [[a.idx for a in route.schedule() if a.is_client()] for route in result.best.routes()]


def row(tutorial, folder: Path, n: int, args) -> dict:
    name = f"cvrp{n}-{args.seed}"
    path = folder / f"{name}.vrp"
    write_vrp(path, name, *generate(n, args.seed), CAPACITY)
    problem = tutorial.read_vrp(path)
    start = time.perf_counter()
    routes = pyvrp_routes(problem, args.seconds, args.seed)
    budget = time.perf_counter() - start
    theirs = None if routes is None else tutorial.routes_cost(problem, routes)
    print(f"  {name} PyVRP {theirs} in {budget:.1f} s", file=sys.stderr, flush=True)
    budget = budget if routes is not None else args.seconds
    out = {"instance": name, "n": n, "seconds": round(budget, 1), "pyvrp": theirs,
           "note": "" if routes is not None else "PyVRP absent (pip install -e '.[bench]')"}
    for suffix, islands in [("", None), *([("_1core", 1)] if args.one_core else [])]:
        perm = metaheur.PermSearchParams(method=args.method) if args.method else None
        params = metaheur.SolveParams(islands=islands, searches=[perm], stop_at_optimum=False)
        result, wall = solve_in_wall_time(problem, budget, args.seed, params=params)
        ours = tutorial.routes_cost(problem, tutorial.trips(problem, result.permutation))
        assert ours == result.value, (ours, result.value)  # Split's cut costs the value metaheur reports
        print(f"  {name} metaheur{suffix} {ours} in {wall:.1f} s", file=sys.stderr, flush=True)
        out.update({f"metaheur{suffix}": ours, f"metaheur_wall_s{suffix}": round(wall, 1),
                    f"gap_%{suffix}": None if theirs is None else round(100.0 * (ours - theirs) / theirs, 2)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one instance of 30 customers, 3 s")
    ap.add_argument("--sizes", type=int, nargs="*", default=[100, 200, 400])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--one-core", action="store_true", help="metaheur on one island too (columns _1core)")
    ap.add_argument("--method", default=None, help="PermSearchParams.method (default: the class's)")
    ap.add_argument("--out", default=None, help="folder for the table (default: results/; --quick: a new "
                    "temporary folder)")
    args = ap.parse_args()
    sizes, suffix = args.sizes, ""
    if args.quick:
        sizes, args.seconds, suffix = [30], 3.0, "_quick"
    out = out_folder(args.out, args.quick)
    with tempfile.TemporaryDirectory(prefix="metaheur-cvrp-") as tmp:
        tutorial = tutorial_module(Path(tmp))
        rows = [row(tutorial, Path(tmp), n, args) for n in sizes]
    method = f"--method {args.method}" if args.method else "the class's defaults"
    head = run_header(f"settings: seed {args.seed}, PyVRP {args.seconds:g} s (MaxRuntime, its defaults, one "
                      f"core), then metaheur ({method}) in that wall time with its setup, one island a core "
                      f"({os.cpu_count()}){' and one island (_1core)' if args.one_core else ''}")
    columns = ["instance", "n", "seconds", "pyvrp", "metaheur", "gap_%", "metaheur_wall_s"]
    columns += ["metaheur_1core", "gap_%_1core", "metaheur_wall_s_1core"] if args.one_core else []
    write_table(rows, [*columns, "note"], f"bench_cvrp{suffix}",
                [*head, "instances: uniform integer coordinates on [0, 1000]^2, depot at (500, 500), demands "
                        f"1..10, capacity {CAPACITY}; rounded Euclidean distances, the same matrix for both; values "
                        "recomputed from the routes; gap_%: metaheur over PyVRP"], out,
                "CVRP: the routing tutorial's class vs PyVRP at equal time")


if __name__ == "__main__":
    main()
