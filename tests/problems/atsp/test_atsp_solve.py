"""Solving the asymmetric TSP end to end: a user's numpy matrix through the API, a TSPLIB instance
to its optimum, the CLI's solve / evaluate / info with directed tour files, and the drawing."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from testutil import solve_with

import metaheur
from metaheur import solver as solver_module
from metaheur.cli import cli
from metaheur.devices import cpu_device
from metaheur.islands.params import GAParams
from metaheur.problems import ATSP, asymmetric_tsp, read_tour, uniform_tsp, write_tour
from metaheur.problems.tsp.picture import plot_tour

SMALL_GA = GAParams(population=8, crossover="eax")


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch):
    monkeypatch.setattr(solver_module, "available_devices", lambda: [cpu_device()])


def sync_solve(problem, seed: int = 3):
    return solve_with(problem, strategy="cpu-serial", sync=True, generations=4, epoch_generations=2, seed=seed,
                      ga=SMALL_GA)


def test_the_api_solves_a_users_asymmetric_matrix():
    rng = np.random.default_rng(8)
    m = rng.integers(1, 1000, size=(30, 30))
    np.fill_diagonal(m, 0)
    result = sync_solve(metaheur.ATSP("mine", m))
    atsp = ATSP("mine", m)
    assert (result.problem, result.n, result.instance) == ("ATSP", 30, "mine")
    assert sorted(result.permutation) == list(range(30))
    assert result.cost == atsp.tour_length(result.permutation)
    assert all(row.best_cost >= result.cost for row in result.history if row.best_cost is not None)
    again = sync_solve(metaheur.ATSP("mine", m))
    assert again.permutation == result.permutation  # seeded and synchronous: reproducible


def test_the_search_beats_the_nearest_neighbour_tour():
    atsp = asymmetric_tsp(60, seed=4)
    from metaheur.problems.atsp import upper_bound

    assert sync_solve(atsp).cost < upper_bound(atsp)


def test_br17_reaches_its_optimum(instances_dir):
    result = metaheur.solve("br17", time_limit=30, target="bks", seed=1)
    assert result.cost == 39 and result.best_known == 39 and result.stop_reason == "target"
    assert result.problem == "ATSP"


def test_cli_solve_evaluate_and_info(instances_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    out = runner.invoke(cli, ["solve", "ftv33", "-t", "30", "--target", "bks", "--seed", "2", "-q",
                              "--solution", "ftv33.tour", "--json", "r.json"])
    assert out.exit_code == 0, out.output
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["problem"] == "ATSP" and data["cost"] == 1286 and data["gap_percent"] == 0.0
    tour = read_tour(tmp_path / "ftv33.tour")
    assert list(tour) == data["permutation"]
    ev = runner.invoke(cli, ["evaluate", "ftv33", "ftv33.tour"])
    assert ev.exit_code == 0 and "cost        1286" in ev.stdout and "(ATSP, n = 34)" in ev.stdout
    (tmp_path / "rev.tour").write_text("TOUR_SECTION\n" + "\n".join(str(c + 1) for c in tour[::-1]) + "\n-1\n")
    rev = runner.invoke(cli, ["evaluate", "ftv33", "rev.tour"])
    assert rev.exit_code == 0 and "cost        1286" not in rev.stdout  # the other direction costs more
    info = runner.invoke(cli, ["info", "ftv33"])
    assert info.exit_code == 0 and "problem     ATSP" in info.stdout and "1286 (optimal)" in info.stdout


def test_a_directed_tour_is_drawn_with_arrows():
    atsp, tsp = asymmetric_tsp(12, seed=1), uniform_tsp(12, seed=1)
    tour = np.arange(12)
    assert len(plot_tour(atsp, tour).collections) == 1  # the arrows
    assert len(plot_tour(tsp, tour).collections) == 0


def test_cli_plot_of_a_generated_atsp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(cli, ["solve", "gen:atsp:25", "-g", "2", "--sync", "--strategy", "cpu-serial",
                                   "--population", "6", "-q", "--plot", "run.png"])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "run.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_resumed_atsp_run_continues_its_checkpoint(tmp_path):
    atsp = asymmetric_tsp(40, seed=9)
    options = {"strategy": "cpu-islands", "islands": 2, "sync": True, "epoch_generations": 2, "seed": 7,
               "ga": SMALL_GA}
    path = tmp_path / "run.npz"
    first = solve_with(atsp, generations=4, checkpoint=str(path), **options)
    rest = metaheur.resume(path, generations=8)
    assert (rest.problem, rest.n) == ("ATSP", 40)
    assert rest.history[: len(first.history)] == first.history and len(rest.history) > len(first.history)
    assert rest.cost <= first.cost and rest.cost == atsp.tour_length(rest.permutation)


def test_warm_starts_are_directed_tours(tmp_path):
    """A directed tour given as a warm start (array or .tour file) seeds the islands: the result is
    never longer, and its reverse (another directed tour) is not taken for it."""
    atsp = asymmetric_tsp(30, seed=5)
    good = sync_solve(atsp, seed=1)
    write_tour(tmp_path / "good.tour", atsp, good.permutation)
    for initial in (good.permutation, str(tmp_path / "good.tour")):
        result = solve_with(atsp, strategy="cpu-serial", sync=True, generations=1, epoch_generations=1, seed=9,
                            ga=SMALL_GA, initial=initial)
        assert result.cost <= good.cost and result.parameters["initial"] == 1
    reverse = good.permutation[::-1]
    assert atsp.tour_length(reverse) != good.cost
    result = solve_with(atsp, strategy="cpu-serial", sync=True, generations=1, epoch_generations=1, seed=9,
                        ga=SMALL_GA, initial=reverse)
    assert result.cost <= atsp.tour_length(reverse)
