"""A file named like a library instance, of that size, whose data differ (a renamed or changed
file): the best-known table's entry is looked up by name and size, so a value better than its
proven optimum is the proof that the entry is not this instance's. The run then neither stops as
"optimal" nor reports a gap to that entry, and it goes on searching; ``evaluate`` says so."""

from __future__ import annotations

import numpy as np
import pytest
from testutil import solve_with

from metaheur import solver as solver_module
from metaheur.describe import evaluation
from metaheur.devices import cpu_device
from metaheur.problem.best_known import beaten_optimum
from metaheur.problems import random_qap
from metaheur.problems.lop import LOP
from metaheur.problems.qap import QAP


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch):
    monkeypatch.setattr(solver_module, "available_devices", lambda: [cpu_device()])


def heavy_lop() -> LOP:
    """A LOP named like LOLIB's be75eec (n = 50, proven optimum 236464) whose every order is worth
    more: each pair of items is worth 1000 whichever goes first."""
    matrix = np.full((50, 50), 1000, dtype=np.int64)
    np.fill_diagonal(matrix, 0)
    return LOP(matrix, name="be75eec")


def test_a_maximisation_beyond_the_tables_optimum_runs_on_without_that_entry():
    lop = heavy_lop()
    assert lop.best_known().optimal and lop.best_known().value == 236464
    with pytest.warns(RuntimeWarning, match="be75eec: a solution better than 236464, the proven optimum"):
        result = solve_with(lop, strategy="cpu-islands", islands=2, generations=3, sync=True, epoch_generations=1,
                            seed=1)
    assert result.stop_reason == "generations" and result.cost == 1000 * 50 * 49 // 2
    assert result.best_known is None and result.gap_percent is None
    assert [row.generations for row in result.islands] == [3, 3]


def test_a_minimisation_below_the_tables_optimum_runs_on_without_that_entry():
    """A QAP named like QAPLIB's tai12a whose every assignment costs less than its optimum."""
    small = random_qap(12, seed=2)
    qap = QAP("tai12a", small.flow % 3, small.distance % 3)
    assert qap.best_known().value == 224416
    with pytest.warns(RuntimeWarning, match="tai12a: a solution better than 224416, the proven optimum"):
        result = solve_with(qap, strategy="cpu-serial", generations=2, sync=True, epoch_generations=1, seed=1)
    assert result.stop_reason == "generations" and result.best_known is None


def test_a_resumed_run_beyond_that_optimum_goes_on_like_the_whole_run(tmp_path):
    """The resumed run drops the entry's rule before its first epoch (its islands are beyond it
    already): no idle epoch, the same epochs as the run that was not interrupted."""
    from metaheur.solver import resume

    options = {"strategy": "cpu-islands", "islands": 2, "sync": True, "epoch_generations": 1, "seed": 1}
    with pytest.warns(RuntimeWarning):
        whole = solve_with(heavy_lop(), generations=4, **options)
        solve_with(heavy_lop(), generations=2, checkpoint=str(tmp_path / "run.npz"), **options)
        rest = resume(str(tmp_path / "run.npz"), problem=heavy_lop(), generations=4)
    assert rest.stop_reason == "generations" and rest.best_known is None
    assert [(r.epoch, r.island, r.generations) for r in rest.history] == \
           [(r.epoch, r.island, r.generations) for r in whole.history]


def test_evaluate_says_the_entry_is_of_another_instance():
    lop = heavy_lop()
    ev = evaluation(lop, np.arange(50))
    assert ev["cost"] == 1225000 and ev["best_known"] is None and ev["gap_percent"] is None
    assert "better than the proven optimum 236464 of the best-known table's be75eec" in ev["note"]


def test_only_a_proven_optimum_is_contradicted_by_a_better_value():
    entry = heavy_lop().best_known()
    assert beaten_optimum(entry, 236465, "max") and not beaten_optimum(entry, 236464, "max")
    assert not beaten_optimum(entry, 300000, "min") and not beaten_optimum(None, 1, "max")


def test_the_cli_warns_in_one_line_and_shows_no_gap_to_that_entry(tmp_path, monkeypatch):
    """The CLI prints a warning as its message alone (pytest records the warning itself here, so the
    line is the CLI's format applied to it)."""
    import warnings

    from click.testing import CliRunner

    from metaheur.cli import cli

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)  # the CLI sets its own
    path = tmp_path / "be75eec"
    path.write_text("50\n" + "\n".join(" ".join(map(str, row)) for row in heavy_lop().matrix) + "\n")
    with pytest.warns(RuntimeWarning) as seen:
        result = CliRunner().invoke(cli, ["solve", str(path), "--problem", "lop", "-g", "2", "--sync",
                                          "--strategy", "cpu-serial"])
    assert result.exit_code == 0, result.output
    assert warnings.formatwarning(seen[0].message, RuntimeWarning, "model.py", 1) == (
        "metaheur: be75eec: a solution better than 236464, the proven optimum of the best-known table's be75eec, was "
        "found: that entry is of another instance of this name; the run goes on without it\n")
    other = warnings.formatwarning(UserWarning("numpy: something"), UserWarning, "x.py", 3)
    assert other.startswith("x.py:3: UserWarning: numpy: something")  # the others as Python formats them
    assert "gap" not in result.stderr and "best known  unknown" in result.stdout
