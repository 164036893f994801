"""docs/problems.md runs as written: its module kept as a user's own (a temporary folder, not
problems/), its instance, check_problem, a solve from the API and from the CLI, on the CPU and on
simulated GPUs."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from joblib.externals.loky import get_reusable_executor

from metaheur.cli import cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "problems.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), re.S)


@pytest.fixture
def tutorial(tmp_path, monkeypatch):
    """The tutorial's module and instance in tmp_path, importable as ``wt_tutorial``."""
    (tmp_path / "wt_tutorial.py").write_text(_blocks("python")[0])
    (tmp_path / "small.wt").write_text(_blocks("text")[0])
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    # worker processes started by earlier tests have the old sys.path, without the module: new ones
    get_reusable_executor().shutdown(wait=True)
    yield tmp_path
    sys.modules.pop("wt_tutorial", None)


def test_the_api_blocks_run_as_written(tutorial, capsys):
    check, solve = _blocks("python")[1:3]
    scope: dict = {}
    exec(check, scope)
    exec(solve, scope)
    problem, result = scope["problem"], scope["result"]
    out = capsys.readouterr().out
    assert "every check agrees with evaluate" in out and "swap_delta" in out and "insert_row" in out
    assert result.value == problem.value(result.permutation) == int(out.split()[-problem.n - 1])
    from wt_tutorial import Tardiness

    assert type(problem) is Tardiness and type(problem).__module__ == "wt_tutorial"
    exec(_blocks("python")[3], scope)  # islands of two kinds
    assert [island.algorithm for island in scope["result"].islands] == ["GA (ox)", "iterated greedy chains"]
    assert scope["result"].value == problem.value(scope["result"].permutation)


def test_the_cli_solves_the_users_class(tutorial):
    command = _blocks("bash")[0].split()[1:]
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 0, result.output
    order = np.array((tutorial / "best.order").read_text().split(), dtype=np.int64) - 1
    from wt_tutorial import read_wt

    value = read_wt("small.wt").value(order)
    assert str(value) in result.stdout
    evaluated = CliRunner().invoke(cli, [*_blocks("bash")[2].split()[1:], "--json"])
    assert evaluated.exit_code == 0, evaluated.output
    assert json.loads(evaluated.output)["cost"] == value


@pytest.mark.gpusim
@pytest.mark.slow
def test_on_simulated_gpus_from_the_api_and_the_cli(tutorial, simulated_gpus):
    from wt_tutorial import read_wt

    import metaheur

    problem = read_wt("small.wt")
    report = metaheur.check_problem(problem, trials=4)
    assert {line.split(": ")[0] for line in report.checks} == {"cpu", "cuda:0", "cuda:1"}
    result = metaheur.solve(problem, generations=2, seed=1,
                            params=metaheur.SolveParams(strategy="gpu", sync=True))
    assert result.value == problem.value(result.permutation)
    command = _blocks("bash")[1].split()[2:]
    cli_result = CliRunner().invoke(cli, command)
    assert cli_result.exit_code == 0, cli_result.output
