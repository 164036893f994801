"""docs/routing.md runs as written: its module kept as a user's own (a temporary folder, not
problems/), its instance, check_problem, a solve from the API and from the CLI with the routes
written and evaluated again, on the CPU and on simulated GPUs in several thread orders; its numpy
Split against every cut of small tours."""

from __future__ import annotations

import itertools
import re
from functools import partial

import numpy as np
import pytest
from click.testing import CliRunner
from tutorial_pages import DOCS, blocks, run_check_and_solve, tutorial_fixture

from metaheur.cli import cli

DOC = DOCS / "routing.md"
_blocks = partial(blocks, DOC)
tutorial = tutorial_fixture(DOC, "cvrp_tutorial", "small.vrp")  # the module importable as cvrp_tutorial


def _random_cvrp(module, n: int, seed: int, capacity: int):
    rng = np.random.default_rng(seed)
    return module.CVRP(rng.integers(0, 1001, size=(n + 1, 2)), rng.integers(1, 11, size=n), capacity)


def test_split_is_the_best_cut_of_the_tour(tutorial):
    """The page's numpy Split against every way of cutting small tours into trips (2^(n-1) cuts),
    and the trips it returns cost its value."""
    import cvrp_tutorial as cv

    pb = _random_cvrp(cv, 9, 3, capacity=18)
    perms = np.array([np.random.default_rng(k).permutation(9) for k in range(12)])
    for perm in perms:
        best = None
        for mask in itertools.product((0, 1), repeat=8):
            cuts = [0, *(k + 1 for k in range(8) if mask[k]), 9]
            trips = [list(perm[a:b]) for a, b in itertools.pairwise(cuts)]
            if all(pb.demand[t].sum() <= pb.capacity for t in trips):
                cost = cv.routes_cost(pb, trips)
                best = cost if best is None else min(best, cost)
        assert pb.value(perm) == best
        assert cv.routes_cost(pb, cv.trips(pb, perm)) == best
    assert np.array_equal(pb.evaluate(perms), [pb.value(p) for p in perms])
    with pytest.raises(ValueError, match="more than the capacity"):
        cv.routes_cost(pb, [list(range(9))])


def test_candidates_are_the_nearest_other_customers(tutorial):
    """Each row: k customers other than its own, by distance (customers may share a place)."""
    import cvrp_tutorial as cv

    pb = cv.CVRP([[50, 50], [10, 10], [10, 10], [10, 10], [90, 90], [20, 80]], [3, 4, 5, 6, 2], 9)
    near = pb.candidates()
    assert near.shape == (5, 4) and not (near == np.arange(5)[:, None]).any()
    for e, row in enumerate(near):
        others = np.delete(pb.dist[e + 1, 1:], e)
        assert list(pb.dist[e + 1, 1:][row]) == sorted(others)[:4]
    big = _random_cvrp(cv, 30, 5, capacity=40)
    assert big.candidates().shape == (30, big.neighbours)


def test_the_api_blocks_run_as_written(tutorial, capsys):
    scope, out = run_check_and_solve(DOC, capsys)
    problem, result = scope["problem"], scope["result"]
    assert "every check agrees with evaluate" in out
    for function in ("segment_delta", "segment_row", "reverse_delta", "swap_delta", "update_reverse"):
        assert function in out, function
    import cvrp_tutorial as cv

    routes = cv.trips(problem, result.permutation)
    assert result.value == problem.value(result.permutation) == cv.routes_cost(problem, routes)
    assert str(routes) in out and type(problem).__module__ == "cvrp_tutorial"


def test_the_cli_writes_routes_that_evaluate_reads_back(tutorial):
    solve, evaluate = (line.split()[1:] for line in _blocks("bash")[0].splitlines())
    ran = CliRunner().invoke(cli, solve)
    assert ran.exit_code == 0, ran.output
    text = (tutorial / "best.sol").read_text()
    import cvrp_tutorial as cv

    problem = cv.read_vrp("small.vrp")
    lines = [line for line in text.splitlines() if line.startswith("Route")]
    routes = [[int(c) - 1 for c in line.split(":")[1].split()] for line in lines]
    cost = cv.routes_cost(problem, routes)
    assert text.rstrip().endswith(f"Cost {cost}") and str(cost) in ran.stdout
    checked = CliRunner().invoke(cli, evaluate)
    assert checked.exit_code == 0, checked.output
    assert re.search(rf"\b{cost}\b", checked.stdout), checked.stdout


@pytest.mark.gpusim
@pytest.mark.parametrize("order", ["forward", "reverse", "random:5"])
def test_the_device_code_in_every_thread_order(tutorial, simulated_gpus, monkeypatch, order):
    """Blocks of threads on a simulated GPU (each thread its own scratch) against numpy, at a size
    past a block's width where trips hold many customers (long label windows)."""
    import cvrp_tutorial as cv

    import metaheur

    monkeypatch.setenv("METAHEUR_SIMULATED_THREADS", "1")
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    report = metaheur.check_problem(_random_cvrp(cv, 70, 4, capacity=90), devices=["cuda:0"], trials=3)
    assert any(line.startswith("cuda:0: segment_delta") for line in report.checks)


@pytest.mark.gpusim
@pytest.mark.slow
def test_on_a_simulated_gpu_from_the_api_and_the_cli(tutorial, simulated_gpus):
    import cvrp_tutorial as cv

    import metaheur

    problem = cv.read_vrp("small.vrp")
    report = metaheur.check_problem(problem, trials=4)
    assert {line.split(": ")[0] for line in report.checks} == {"cpu", "cuda:0", "cuda:1"}
    result = metaheur.solve(problem, generations=2, seed=1, params=metaheur.SolveParams(strategy="gpu", sync=True))
    assert result.value == problem.value(result.permutation)
    command = _blocks("bash")[1].split()[2:]
    ran = CliRunner().invoke(cli, command)
    assert ran.exit_code == 0, ran.output
