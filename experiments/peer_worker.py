"""Runs one external solver for experiments/peers.py in a child process, under any Python that has
numpy and that solver (metaheur is not needed here), so that peers installed in another virtual
environment can be compared from the project's own:

    PYTHON experiments/peer_worker.py check MODULE       exit 0 when numpy and MODULE import
    PYTHON experiments/peer_worker.py run SPEC.json      run the solver SPEC names

SPEC: {"solver": "scipy-2opt" | "scipy-faq" | "fast_tsp" | "elkai" | "ortools", "seconds": S,
"seed": K, "cores": C, "out": PATH, and "matrix": M.npy (TSP) or "flow"/"distance": A.npy/B.npy
(QAP), and "array": true to hand the matrix over as a numpy array, not as lists (fast_tsp takes
either)}. The solver's clock starts after the inputs are loaded and converted (to Python lists
where its API wants them). OUT gets JSON {"solution": [...], "wall_s": t, "note": "..."}; the
scipy loops rewrite it after every improving restart, so the parent may kill a restart that
runs past the budget and still read the best finished one.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time


def _write(path: str, data: dict) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as handle:
        json.dump(data, handle)
    os.replace(tmp, path)


def scipy_qap(spec: dict, np) -> None:
    """scipy.optimize.quadratic_assignment restarted with new seeds until the budget is used
    (the restart that is running when it ends finishes); the best permutation is kept."""
    from scipy.optimize import quadratic_assignment

    a, b = np.load(spec["flow"]), np.load(spec["distance"])
    method = spec["solver"].removeprefix("scipy-")
    seconds, seed = spec["seconds"], spec["seed"]
    best = None
    restarts = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        options = {"rng": 1000 * seed + restarts}
        if method == "faq":
            options["P0"] = "randomized"
        res = quadratic_assignment(a, b, method=method, options=options)
        restarts += 1
        perm = [int(x) for x in res.col_ind]
        cost = int(np.sum(a * b[np.ix_(perm, perm)]))
        if best is None or cost < best:
            best = cost
            _write(spec["out"], {"solution": perm, "wall_s": time.perf_counter() - t0, "restarts": restarts,
                                 "note": f"{restarts} restart(s) so far"})
    with open(spec["out"]) as handle:
        data = json.load(handle)
    data.update({"wall_s": time.perf_counter() - t0, "restarts": restarts,
                 "note": f"{restarts} restart(s), 1 core"})
    _write(spec["out"], data)


def fast_tsp(spec: dict, matrix: list) -> None:
    import inspect

    import fast_tsp as ft

    kwargs, note = {}, "1 thread (its API has no max_threads)"
    try:
        if "max_threads" in inspect.signature(ft.find_tour).parameters:
            kwargs["max_threads"] = spec["cores"]
            note = f"max_threads={spec['cores']}"
    except (TypeError, ValueError):
        pass
    t0 = time.perf_counter()
    tour = ft.find_tour(matrix, spec["seconds"], **kwargs)
    _write(spec["out"], {"solution": [int(x) for x in tour], "wall_s": time.perf_counter() - t0, "note": note})


def elkai(spec: dict, matrix: list) -> None:
    """elkai (LKH-3) has no time limit: one run (RUNS = 1) is timed first, then it runs again with
    RUNS = round(budget / time of one run), and that second call is what is reported (its own
    wall time, whatever it came to). When that makes RUNS = 1, the first run is reported."""
    import elkai as lk

    def solve(runs: int) -> tuple[list[int], float]:
        t0 = time.perf_counter()
        tour = lk.DistanceMatrix(matrix).solve_tsp(runs=runs)
        return [int(x) for x in tour[:-1]], time.perf_counter() - t0

    tour, one = solve(1)
    runs = max(1, min(100_000, round(spec["seconds"] / max(one, 1e-3))))
    if runs == 1:
        over = " (over the budget)" if one > spec["seconds"] else ""
        _write(spec["out"], {"solution": tour, "wall_s": one, "note": f"runs=1: one run took {one:.3g} s{over}"})
        return
    tour, wall = solve(runs)
    _write(spec["out"], {"solution": tour, "wall_s": wall,
                         "note": f"runs={runs} (one run took {one:.3g} s, wall includes elkai's text conversion)"})


def ortools(spec: dict, matrix: list) -> None:
    """OR-Tools routing: one vehicle, path-cheapest-arc start, guided local search, time limit."""
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2

    n = len(matrix)
    manager = pywrapcp.RoutingIndexManager(n, 1, 0)
    routing = pywrapcp.RoutingModel(manager)
    if hasattr(routing, "RegisterTransitMatrix"):
        callback = routing.RegisterTransitMatrix(matrix)
    else:
        callback = routing.RegisterTransitCallback(
            lambda i, j: matrix[manager.IndexToNode(i)][manager.IndexToNode(j)])
    routing.SetArcCostEvaluatorOfAllVehicles(callback)
    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PATH_CHEAPEST_ARC
    params.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    params.time_limit.FromMilliseconds(int(1000 * spec["seconds"]))
    t0 = time.perf_counter()
    solution = routing.SolveWithParameters(params)
    wall = time.perf_counter() - t0
    if solution is None:
        _write(spec["out"], {"solution": None, "wall_s": wall, "note": "no solution within the time limit"})
        return
    tour, index = [], routing.Start(0)
    while not routing.IsEnd(index):
        tour.append(manager.IndexToNode(index))
        index = solution.Value(routing.NextVar(index))
    _write(spec["out"], {"solution": tour, "wall_s": wall, "note": "guided local search, 1 thread"})


MODULES = {"scipy-2opt": "scipy.optimize", "scipy-faq": "scipy.optimize", "fast_tsp": "fast_tsp",
           "elkai": "elkai", "ortools": "ortools.constraint_solver.pywrapcp"}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        importlib.import_module("numpy")
        importlib.import_module(sys.argv[2])
        return
    if len(sys.argv) != 3 or sys.argv[1] != "run":
        sys.exit(__doc__)
    import numpy as np

    with open(sys.argv[2]) as handle:
        spec = json.load(handle)
    solver = spec["solver"]
    if solver.startswith("scipy-"):
        scipy_qap(spec, np)
        return
    matrix = np.load(spec["matrix"])
    if not spec.get("array"):
        matrix = matrix.tolist()
    {"fast_tsp": fast_tsp, "elkai": elkai, "ortools": ortools}[solver](spec, matrix)


if __name__ == "__main__":
    main()
