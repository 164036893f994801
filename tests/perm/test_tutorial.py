"""docs/problems.md runs as written: its module kept as a user's own (a temporary folder, not
problems/), its instance, check_problem, a solve from the API and from the CLI, on the CPU and on
simulated GPUs."""

from __future__ import annotations

import json
from functools import partial

import numpy as np
import pytest
from click.testing import CliRunner
from tutorial_pages import DOCS, blocks, run_check_and_solve, tutorial_fixture

from metaheur.cli import cli

DOC = DOCS / "problems.md"
_blocks = partial(blocks, DOC)
tutorial = tutorial_fixture(DOC, "wt_tutorial", "small.wt")  # the module importable as wt_tutorial


def test_the_api_blocks_run_as_written(tutorial, capsys):
    scope, out = run_check_and_solve(DOC, capsys)
    problem, result = scope["problem"], scope["result"]
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
