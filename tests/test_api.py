"""The public API: names, solve() with SolveParams, open stop rules, stop at a proven optimum,
warm starts, resume(), the typed Result (through the API and, for the flags, the CLI)."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import metaheur
from metaheur import (
    GAParams,
    IslandRow,
    MaxGenerations,
    MetaheurError,
    Progress,
    Result,
    SolveParams,
    TimeLimit,
    resume,
    solve,
)
from metaheur import solver as solver_module
from metaheur.checkpoint import load_checkpoint
from metaheur.cli import cli
from metaheur.devices import cpu_device
from metaheur.islands.island import IslandSpec, IslandState, run_epoch
from metaheur.islands.memetic import MemeticIsland
from metaheur.islands.params import IslandParams
from metaheur.problems import load_instance, random_qap, uniform_tsp
from metaheur.result import DeviceRow, EpochRow, MigrationRow, TracePoint

SERIAL = SolveParams(strategy="cpu-serial", ga=GAParams(population=6, offspring=3, ls_budget=40))
SYNC = dataclasses.replace(SERIAL, sync=True, epoch_generations=1)


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch):
    monkeypatch.setattr(solver_module, "available_devices", lambda: [cpu_device()])


# ------------------------------------------------------------------------------ public names


def test_public_names_are_real_attributes():
    for name in metaheur.__all__:  # the built-in problems' names load on first use (module __getattr__)
        assert getattr(metaheur, name) is not None, name
        assert name in dir(metaheur), name
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        metaheur.Nothing  # noqa: B018
    assert metaheur.solve is solver_module.solve and metaheur.resume is solver_module.resume
    assert {"solve", "resume", "Result", "QAP", "TSP", "load_instance", "read_qaplib", "read_tsplib", "write_sln",
            "write_tour", "TimeLimit", "Progress", "SolveParams", "GAParams", "Callbacks", "MetaheurError",
            "__version__"} <= set(metaheur.__all__)


# ------------------------------------------------------------------------------ stop rules


def test_a_user_rule_ends_the_run_beside_the_built_in_ones():
    rule = lambda p: p.elapsed >= 1.5  # noqa: E731
    r = solve(random_qap(20, seed=1), [TimeLimit(60), rule], params=dataclasses.replace(SERIAL, epoch_seconds=0.25))
    assert r.stop_reason == "user"
    assert 1.5 <= r.time_s < 60
    assert r.parameters["stop"] == {"time_limit": 60.0}  # the built-in rules are what a result can record


def test_a_rule_reports_its_reason_or_its_name():
    def enough(p: Progress) -> bool:
        return p.generations >= 2

    assert solve(random_qap(10, seed=1), [enough, MaxGenerations(50)], params=SYNC).stop_reason == "enough"
    enough.reason = "two generations"
    assert solve(random_qap(10, seed=1), [enough, MaxGenerations(50)], params=SYNC).stop_reason == "two generations"
    assert solve(random_qap(10, seed=1), MaxGenerations(3), params=SYNC).stop_reason == "generations"


def test_progress_seen_by_a_rule():
    seen: list[Progress] = []

    def watch(p: Progress) -> bool:
        seen.append(p)
        return False

    r = solve(random_qap(12, seed=2), [watch, MaxGenerations(4)], params=SYNC)
    assert [p.epochs for p in seen] == [1, 2, 3, 4]
    assert [p.generations for p in seen] == [1, 2, 3, 4]
    assert all(a.best_cost >= b.best_cost for a, b in itertools.pairwise(seen))
    assert seen[-1].best_cost == r.cost
    assert all(p.elapsed >= 0 and p.epochs_without_improvement >= 0 and not p.interrupted for p in seen)
    improved = [True] + [b.best_cost < a.best_cost for a, b in itertools.pairwise(seen)]
    assert [p.epochs_without_improvement == 0 for p in seen] == improved


@pytest.mark.parametrize(("stop", "message"), [
    (lambda p: False, "give a time limit or a number of generations"),
    ([lambda p: False, MaxGenerations(2), "soon"], r"stop takes a stop rule \(a callable"),
    (42, r"stop takes a stop rule \(a callable"),
])
def test_bad_stop_rules(stop, message):
    with pytest.raises(MetaheurError, match=message):
        solve(random_qap(8, seed=1), stop, params=SYNC)


def test_without_any_rule_the_run_has_ten_seconds(monkeypatch):
    seen = []
    monkeypatch.setattr(solver_module, "_run", lambda problem, settings, *args: seen.append(settings))
    solve(random_qap(8, seed=1), params=SYNC)
    assert seen[0].stop == {"time_limit": 10.0}


def test_resume_keeps_the_built_in_rules_and_needs_rules_when_none_was_saved(tmp_path):
    path = tmp_path / "run.npz"
    first = solve(random_qap(12, seed=3), [lambda p: p.generations >= 2, MaxGenerations(5)], params=SYNC,
                  checkpoint=path)
    assert first.stop_reason == "user" and load_checkpoint(path).settings.stop == {"generations": 5}
    rest = resume(path)  # the user's rule cannot be saved: the saved budget applies
    assert rest.stop_reason == "generations" and [row.epoch for row in rest.history][-1] == 4
    header_free = tmp_path / "nobudget.npz"
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    header = json.loads(str(arrays["header"]))
    header["settings"]["stop"] = {"target": 1}
    arrays["header"] = np.array(json.dumps(header))
    np.savez(header_free, **arrays)
    with pytest.raises(MetaheurError, match="give stop rules to resume it"):
        resume(header_free)
    assert resume(header_free, MaxGenerations(6)).stop_reason == "generations"


# ------------------------------------------------------------------------------ proven optimum


def test_a_run_ends_at_a_proven_optimum(instances_dir):
    nug12 = instances_dir / "qaplib" / "nug12.dat"
    r = solve(nug12, params=SolveParams(strategy="cpu-serial"), time_limit=60)
    assert r.stop_reason == "optimal" and r.cost == r.best_known == 578 and r.time_s < 60


def test_a_warm_start_at_the_optimum_returns_it_at_once(instances_dir):
    nug12, sln = instances_dir / "qaplib" / "nug12.dat", instances_dir / "qaplib" / "nug12.sln"
    r = solve(nug12, initial=sln, params=SolveParams(strategy="cpu-serial"), time_limit=60)
    assert (r.stop_reason, r.cost, r.generations) == ("optimal", 578, 0)  # the first population had it
    assert len(r.history) == 1
    going_on = solve(nug12, initial=sln, params=dataclasses.replace(SYNC, stop_at_optimum=False), generations=2)
    assert (going_on.stop_reason, going_on.cost) == ("generations", 578)
    assert going_on.parameters["stop_at_optimum"] is False


def test_a_tsp_warm_start_from_a_tour_file(instances_dir):
    tsp = instances_dir / "tsplib" / "berlin52.tsp"
    r = solve(tsp, initial=instances_dir / "tsplib" / "berlin52.opt.tour", params=SolveParams(strategy="cpu-serial"),
              time_limit=60)
    assert (r.stop_reason, r.cost, r.generations) == ("optimal", 7542, 0)


def test_every_island_starts_from_the_warm_starts_and_the_tabu_island_from_the_best(instances_dir):
    nug12 = load_instance(instances_dir / "qaplib" / "nug12.dat")
    best = metaheur.read_sln(instances_dir / "qaplib" / "nug12.sln", nug12).permutation
    worse = np.roll(best, 1)
    params = SolveParams(strategy="cpu-islands", islands=2, ls_islands=1, stop_at_optimum=False, sync=True,
                         epoch_generations=1, ga=GAParams(population=4, offspring=2, ls_budget=1))
    r = solve(nug12, initial=[worse, best], params=params, generations=1)
    assert [i.algorithm for i in r.islands] == ["GA (ux)", "tabu search"]
    assert all(row.best_cost == 578 for row in r.history if row.epoch == 0)


# ------------------------------------------------------------------------------ warm starts


def brute_force(problem) -> tuple[np.ndarray, int]:
    perms = np.array(list(itertools.permutations(range(problem.n))))
    costs = np.einsum("ij,kij->k", problem.flow, problem.distance[perms[:, :, None], perms[:, None, :]])
    k = int(np.argmin(costs))
    return perms[k], int(costs[k])


def test_a_seeded_population_holds_the_seed_or_better():
    qap = random_qap(8, seed=11)
    optimum, cost = brute_force(qap)
    params = IslandParams(ga=GAParams(population=3, offspring=2, ls_budget=1))
    spec = IslandSpec(0, qap, qap.fingerprint(), "cpu", params, 7, initial=optimum[None, :])
    state, _ = run_epoch(spec, IslandState(0), generations=0)
    assert state.best_cost == cost and qap.cost(state.best) == cost


def test_a_seed_is_kept_when_the_search_returns_worse():
    class Worsening:
        """Operators whose local search makes every start worse (reversed)."""

        device = cpu_device()

        def random_solutions(self, count, rng):
            return np.array([rng.permutation(qap.n) for _ in range(count)])

        def improve(self, starts, keys, time_limit=None):
            worse = np.asarray(starts)[:, ::-1].astype(np.int64)
            return worse, np.array([qap.cost(w) for w in worse]), np.zeros(len(worse), dtype=np.int64)

        def cost(self, solution):
            return qap.cost(solution)

    qap = random_qap(8, seed=11)
    optimum, cost = brute_force(qap)
    spec = IslandSpec(0, qap, qap.fingerprint(), "cpu", IslandParams(), 7)
    sols, costs = MemeticIsland(spec, Worsening()).new_members(IslandState(0), 3, None, optimum[None, :])
    assert costs[0] == cost and list(sols[0]) == list(optimum)


def test_warm_starts_in_every_form_and_the_result_is_never_worse(tmp_path):
    qap = random_qap(10, seed=4)
    good = np.random.default_rng(1).permutation(10)
    other = np.roll(good, 3)
    metaheur.write_sln(tmp_path / "good.sln", qap, good)
    for initial in (good, list(good), [good, other], np.stack([other, good]), tmp_path / "good.sln",
                    [str(tmp_path / "good.sln"), other]):
        r = solve(qap, initial=initial, params=SYNC, generations=1)
        assert r.cost <= qap.cost(good)
        assert r.parameters["initial"] == (2 if (isinstance(initial, list) and len(initial) == 2)
                                           or getattr(initial, "ndim", 1) == 2 else 1)


@pytest.mark.parametrize(("initial", "message"), [
    ([0, 1, 2], "initial solution: solution has 3 entries, the instance has n = 10"),
    ([0] * 10, "not a permutation"),
    ([list(range(10)), [1] * 10], "initial solution 2: solution is not a permutation"),
    ([], "give at least one solution"),
    ("missing.sln", "no such file"),
])
def test_bad_warm_starts_are_refused(initial, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(MetaheurError, match=message):
        solve(random_qap(10, seed=4), initial=initial, params=SYNC, generations=1)


def test_a_tsp_warm_start_must_be_a_tour():
    with pytest.raises(MetaheurError, match="has 5 entries, the instance has n = 20"):
        solve(uniform_tsp(20, seed=1), initial=range(5), params=SYNC, generations=1)


# ------------------------------------------------------------------------------ Result


def test_the_result_is_typed_and_round_trips():
    r = solve(random_qap(12, seed=5), params=dataclasses.replace(SYNC, strategy="cpu-islands", islands=2),
              generations=2)
    assert all(isinstance(i, IslandRow) for i in r.islands) and all(isinstance(h, EpochRow) for h in r.history)
    assert all(isinstance(m, MigrationRow) for m in r.migrations) and all(isinstance(t, TracePoint) for t in r.trace)
    assert all(isinstance(d, DeviceRow) for d in r.device_loads)
    assert r.problem == "QAP" and not hasattr(r, "solution")
    back = Result.from_json(r.to_json())
    assert back == r and isinstance(back.islands[0], IslandRow)
    data = json.loads(r.to_json())
    assert {"island", "device", "generations", "ls_iterations", "best_cost", "algorithm"} <= data["islands"][0].keys()
    assert str(r) == r.summary()
    assert f"cost        {r.cost}" in r.summary() and "stopped     generations" in r.summary()


# ------------------------------------------------------------------------------ CLI flags


@pytest.fixture
def runner(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def test_cli_stops_at_the_optimum_unless_told_to_go_on(runner, instances_dir):
    nug12, sln = str(instances_dir / "qaplib" / "nug12.dat"), str(instances_dir / "qaplib" / "nug12.sln")
    done = runner.invoke(cli, ["solve", nug12, "-t", "60", "--strategy", "cpu-serial", "-q", "--initial", sln,
                               "--json", "r.json"])
    assert done.exit_code == 0, done.output
    assert "stopped     optimal" in done.stdout and json.loads(Path("r.json").read_text())["generations"] == 0
    going_on = runner.invoke(cli, ["solve", nug12, "-g", "2", "--sync", "--strategy", "cpu-serial", "-q",
                                   "--initial", sln, "--no-stop-at-optimum"])
    assert going_on.exit_code == 0, going_on.output
    assert "stopped     generations" in going_on.stdout and "cost        578" in going_on.stdout


def test_cli_config_can_turn_the_optimum_stop_off(runner, instances_dir):
    Path("run.toml").write_text("[solve]\nstop_at_optimum = false\nstrategy = \"cpu-serial\"\nsync = true\n")
    nug12, sln = str(instances_dir / "qaplib" / "nug12.dat"), str(instances_dir / "qaplib" / "nug12.sln")
    done = runner.invoke(cli, ["solve", nug12, "-g", "1", "-q", "--config", "run.toml", "--initial", sln])
    assert done.exit_code == 0, done.output
    assert "stopped     generations" in done.stdout


def test_cli_initial_files_are_repeatable_and_checked(runner, tmp_path):
    qap = random_qap(12, seed=1)
    best = brute_force(random_qap(8, seed=1))[0]  # a solution of another size
    metaheur.write_sln("a.sln", qap, np.arange(12))
    metaheur.write_sln("b.sln", qap, np.arange(12)[::-1])
    done = runner.invoke(cli, ["solve", "gen:qap:12", "-g", "1", "--sync", "--strategy", "cpu-serial", "-q",
                               "--initial", "a.sln", "--initial", "b.sln", "--json", "r.json"])
    assert done.exit_code == 0, done.output
    data = json.loads(Path("r.json").read_text())
    assert data["parameters"]["initial"] == 2
    assert data["cost"] <= min(qap.cost(np.arange(12)), qap.cost(np.arange(12)[::-1]))
    Path("small.sln").write_text(f"8 0\n{' '.join(str(x + 1) for x in best)}\n")
    bad = runner.invoke(cli, ["solve", "gen:qap:12", "-g", "1", "-q", "--initial", "small.sln"])
    assert bad.exit_code == 2 and bad.stderr.startswith("metaheur: error: ") and "Traceback" not in bad.output
    batch = runner.invoke(cli, ["solve", "gen:qap:12", "gen:qap:13", "-g", "1", "-q", "--initial", "a.sln"])
    assert batch.exit_code == 2 and "--initial seeds one instance" in batch.stderr
