"""Checkpoints and resume: a synchronous run that is stopped and resumed ends exactly like an
uninterrupted one with the same seed (QAP memetic islands and TSP EAX islands, in process and in
worker processes, through the API and the CLI); a checkpoint of another instance, of another
metaheur version, or a damaged file is a clear error, never a silent fresh start."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from testutil import solve_with

from metaheur import solver as solver_module
from metaheur.callbacks import Callbacks
from metaheur.checkpoint import load_checkpoint
from metaheur.cli import cli
from metaheur.devices import cpu_device
from metaheur.errors import InputFormatError, MetaheurError
from metaheur.islands.migration import MigrationParams
from metaheur.islands.params import GAParams
from metaheur.problems import asymmetric_tsp, random_qap, uniform_tsp
from metaheur.problems.pfsp import random_pfsp
from metaheur.result import Result
from metaheur.run_settings import InstanceInfo, RunSettings
from metaheur.solver import resume

QAP_GA = GAParams(population=6, offspring=3, crossover="ux", ls_budget=80)
TSP_GA = GAParams(population=8, crossover="eax")
FULL_RESTARTS = GAParams(population=6, offspring=3, crossover="ux", ls_budget=80, restart_after=1, restart="full")
HISTORY_KEYS = ("epoch", "island", "generations", "ls_iterations", "best_cost", "global_best", "migrants_in")


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch):
    monkeypatch.setattr(solver_module, "available_devices", lambda: [cpu_device()])


def sync_run(problem, **kwargs) -> Result:
    ga = QAP_GA if problem.kind == "qap" else TSP_GA
    options = {"strategy": "cpu-serial", "sync": True, "epoch_generations": 2, "seed": 7, "ga": ga} | kwargs
    return solve_with(problem, **options)


class Interrupt:
    """A stop rule that ends the run after ``after`` generations (a Ctrl-C at a known point)."""

    reason = "interrupted"

    def __init__(self, after: int):
        self.after = after

    def __call__(self, progress) -> bool:
        return progress.generations >= self.after


class EpochCounter(Callbacks):
    def __init__(self):
        self.epochs: list[int] = []

    def on_epoch(self, model, epoch, stats) -> None:
        self.epochs.append(epoch)


def history(result: Result) -> list[list]:
    return [[getattr(row, k) for k in HISTORY_KEYS] for row in result.history]


@pytest.mark.parametrize(("kind", "strategy", "islands", "tabu", "ga"), [
    ("qap", "cpu-serial", None, None, QAP_GA),
    ("qap", "cpu-serial", None, None, FULL_RESTARTS),  # stagnation counted from a restarted population
    ("qap", "cpu-islands", 2, 0, QAP_GA),
    ("qap", "cpu-islands", 2, 1, QAP_GA),  # a GA island and a tabu island
    ("tsp", "cpu-islands", 2, None, TSP_GA),
    ("atsp", "cpu-islands", 2, None, TSP_GA),
], ids=["qap-serial", "qap-full-restarts", "qap-islands", "qap-tabu", "tsp-islands", "atsp-islands"])
def test_an_interrupted_sync_run_resumed_ends_like_an_uninterrupted_one(tmp_path, kind, strategy, islands, tabu, ga):
    """The first leg has the whole run's limit (8 generations) and is interrupted after 4, as by
    Ctrl-C or a fault: EAX islands schedule their selection by the run's horizon
    (problems/tsp/eax_island.py), which the interruption must not change."""
    problem = {"qap": random_qap(16, seed=9), "tsp": uniform_tsp(80, seed=9), "atsp": asymmetric_tsp(40, seed=9)}[kind]
    whole = sync_run(problem, strategy=strategy, islands=islands, ls_islands=tabu, generations=8, ga=ga)
    path = tmp_path / "run.npz"
    first = sync_run(problem, strategy=strategy, islands=islands, ls_islands=tabu, generations=8,
                     stop=Interrupt(after=4), checkpoint=str(path), ga=ga)
    if ga.restart == "full":
        assert load_checkpoint(path).states[0].cycle_best is not None  # a full restart happened before the stop
    assert path.is_file() and first.stop_reason == "interrupted"
    assert len(first.history) < len(whole.history)
    counter = EpochCounter()
    rest = resume(str(path), problem=problem, generations=8, callbacks=counter)
    assert counter.epochs == [2, 3]  # it continued from the saved epochs, not from scratch
    assert rest.permutation == whole.permutation and rest.cost == whole.cost
    exact = problem.cost if kind == "qap" else problem.tour_length
    assert rest.cost == exact(np.array(rest.permutation))
    assert history(rest) == history(whole)
    assert rest.migrations == whole.migrations
    assert rest.search_iterations == whole.search_iterations
    assert rest.seed == whole.seed and rest.strategy == whole.strategy


def test_a_run_stopped_at_a_shorter_limit_continues_like_a_longer_run(tmp_path):
    """QAP islands have no schedule by the horizon: a run of 4 generations resumed to 8 is the run of 8."""
    problem = random_qap(16, seed=9)
    whole = sync_run(problem, strategy="cpu-islands", islands=2, ls_islands=1, generations=8)
    path = tmp_path / "run.npz"
    sync_run(problem, strategy="cpu-islands", islands=2, ls_islands=1, generations=4, checkpoint=str(path))
    rest = resume(str(path), problem=problem, generations=8)
    assert rest.permutation == whole.permutation and history(rest) == history(whole)


def test_a_flow_shop_run_resumed_goes_on_with_its_chains_where_they_stood(tmp_path):
    """The iterated-greedy chains' islands (metaheur/islands/ils.py) keep each chain's current
    solution beside its best (``IslandState.searches``): the checkpoint holds both, and a run of 2
    generations resumed to 4 is the run of 4."""
    shop = random_pfsp(20, 5, seed=4)
    options = {"strategy": "cpu-islands", "islands": 2, "sync": True, "epoch_generations": 1, "seed": 7}
    whole = solve_with(shop, generations=4, **options)
    path = tmp_path / "run.npz"
    solve_with(shop, generations=2, checkpoint=str(path), **options)
    checkpoint = load_checkpoint(path)
    checkpoint.validate(shop)  # reads the arrays
    saved = checkpoint.states[0].searches
    assert set(saved) == {"best", "current"} and saved["current"].shape == (1, 20)
    rest = resume(str(path), problem=shop, generations=4)
    assert [row.algorithm for row in rest.islands] == ["iterated greedy chains"] * 2
    assert rest.permutation == whole.permutation and history(rest) == history(whole)
    assert rest.search_iterations == whole.search_iterations


def test_the_checkpoint_holds_every_island(tmp_path):
    path = tmp_path / "run.npz"
    sync_run(random_qap(12, seed=1), strategy="cpu-islands", islands=2, ls_islands=1, generations=2,
             checkpoint=str(path))
    saved = load_checkpoint(path)
    assert len(saved.states) == 2 and len(saved.island_params(random_qap(12, seed=1))) == 2
    assert all(state.population is None for state in saved.states)  # no array before the instance is known
    saved.validate(random_qap(12, seed=1))
    ga_island, tabu_island = saved.states  # the second of two CPU islands is a tabu island
    assert ga_island.population.shape == (QAP_GA.population, 12) and ga_island.searches is None
    assert tabu_island.population.shape == (1, 12)
    assert tabu_island.searches["tabu"].shape == (1, 12, 12) and tabu_island.searches["stats"][0, 2] > 0
    assert np.array_equal(tabu_island.searches["best"], tabu_island.population)
    for state in saved.states:
        assert state.best_cost == random_qap(12, seed=1).cost(state.best)
    assert saved.settings.seed == 7 and saved.settings.sync is True
    assert not list(tmp_path.glob(".*.tmp"))  # written through a temporary file and a rename


def test_a_checkpoint_of_another_instance_is_refused(tmp_path):
    path = tmp_path / "run.npz"
    sync_run(random_qap(12, seed=1), generations=2, checkpoint=str(path))
    with pytest.raises(MetaheurError, match=r"checkpoint of instance .* \(n = 12\), not of"):
        resume(str(path), problem=random_qap(12, seed=2), generations=4)


def rewrite_header(path: Path, **changes) -> None:
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    header = json.loads(str(arrays["header"])) | changes
    arrays["header"] = np.array(json.dumps(header))
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)


def test_a_checkpoint_without_a_cycle_best_resumes(tmp_path):
    """Written before full restarts existed (the same version): its islands lack ``cycle_best``,
    which then means no full restart yet, as it did."""
    path = tmp_path / "run.npz"
    sync_run(random_qap(12, seed=1), generations=2, checkpoint=str(path))
    with np.load(path, allow_pickle=False) as data:
        islands = json.loads(str(data["header"]))["islands"]
    rewrite_header(path, islands=[{k: v for k, v in isl.items() if k != "cycle_best"} for isl in islands])
    assert load_checkpoint(path).states[0].cycle_best is None
    result = resume(str(path), problem=random_qap(12, seed=1), generations=4)
    assert result.cost == random_qap(12, seed=1).cost(np.array(result.permutation))


@pytest.mark.parametrize(("changes", "message"), [
    ({"metaheur": "0.0.1"}, r"written by metaheur 0\.0\.1, this is .*: resume it with that version"),
    ({"format": 99}, r"checkpoint format 99 is not supported"),
    ({"islands": []}, r"damaged checkpoint"),
])
def test_a_foreign_or_damaged_checkpoint_is_refused(tmp_path, changes, message):
    path = tmp_path / "run.npz"
    sync_run(random_qap(12, seed=1), generations=2, checkpoint=str(path))
    rewrite_header(path, **changes)
    with pytest.raises(InputFormatError, match=message):
        resume(str(path), problem=random_qap(12, seed=1), generations=4)


def test_a_damaged_array_header_is_refused(tmp_path):
    """A byte changed inside an array's header (numpy's parser raises SyntaxError or TokenError,
    before the zip checksum is read): found by experiments/fuzz.py."""
    path = tmp_path / "run.npz"
    sync_run(random_qap(12, seed=1), generations=2, checkpoint=str(path))
    data = path.read_bytes()
    at = data.rindex(b"'shape': (), }")  # the header's own array, larger than the zip reader's first read
    path.write_bytes(data[:at] + b"'shape': (), |" + data[at + 14:])  # its dict is never closed
    with pytest.raises(InputFormatError, match=r"not a metaheur checkpoint or damaged \(TokenError\)"):
        load_checkpoint(path)


def test_cli_checkpoint_and_resume_match_an_uninterrupted_run(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    common = ["--sync", "--epoch-generations", "2", "--seed", "3", "--strategy", "cpu-islands", "--islands", "2",
              "--tabu-islands", "1", "-q"]
    done = runner.invoke(cli, ["solve", "gen:qap:14:5", "-g", "6", "--json", "whole.json", *common])
    assert done.exit_code == 0, done.output
    done = runner.invoke(cli, ["solve", "gen:qap:14:5", "-g", "2", "--checkpoint", "run.npz", *common])
    assert done.exit_code == 0, done.output
    done = runner.invoke(cli, ["solve", "--resume", "run.npz", "-g", "6", "--json", "rest.json",
                               "--solution", "rest.sln", "-q"])
    assert done.exit_code == 0, done.output
    whole, rest = Result.from_json(Path("whole.json").read_text()), Result.from_json(Path("rest.json").read_text())
    assert (rest.cost, rest.permutation) == (whole.cost, whole.permutation)
    assert history(rest) == history(whole)
    scored = runner.invoke(cli, ["evaluate", "gen:qap:14:5", "rest.sln", "--json"])
    assert json.loads(scored.stdout)["cost"] == whole.cost


@pytest.mark.parametrize(("args", "fragment"), [
    (["solve", "--resume", "missing.npz"], "missing.npz: no such file"),
    (["solve", "--resume", "junk.npz"], "not a metaheur checkpoint or damaged"),
    (["solve", "gen:qap:13", "--resume", "run.npz"], "not of gen-qap-13"),
])
def test_cli_resume_errors_are_one_line_with_status_2(monkeypatch, tmp_path, args, fragment):
    monkeypatch.chdir(tmp_path)
    Path("junk.npz").write_bytes(b"PK\x03\x04 not really a zip")
    runner = CliRunner()
    made = runner.invoke(cli, ["solve", "gen:qap:12", "-g", "2", "--sync", "--checkpoint", "run.npz", "-q",
                               "--strategy", "cpu-serial"])
    assert made.exit_code == 0, made.output
    done = runner.invoke(cli, args)
    assert done.exit_code == 2, (done.output, done.exception)
    err = done.stderr.strip()
    assert err.startswith("metaheur: error: ") and "\n" not in err and fragment in err, err


def test_the_run_settings_survive_a_json_round_trip():
    settings = RunSettings(problem=InstanceInfo("0123abcd", "tai12a", 12, "qap", "/x/tai12a.dat"),
                           strategy="cpu-islands", seed=3, devices=("cpu", "cpu"),
                           migration=MigrationParams(topology="complete", interval=2), sync=True,
                           epoch_seconds=0.5, epoch_generations=4, stop={"generations": 8}, in_process=False)
    text = json.dumps(settings.to_json())
    assert RunSettings.from_json(json.loads(text)) == settings
    with pytest.raises(TypeError):
        RunSettings.from_json(json.loads(text) | {"colour": "blue"})
