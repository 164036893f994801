"""The public API refuses an argument of the wrong type up front, with a TypeError that names
the function, the argument and what it takes (one shared check, :mod:`metaheur.arguments`):
every argument of solve(), resume(), SolveParams, load_instance() and load_solution() against
values of the kinds callers mix up (a bool for an integer, a string for a number, a number for
a path, a stray object)."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

import metaheur
from metaheur import solve_params, solver
from metaheur.problem import instances
from metaheur.problems import random_qap

WRONG = {
    "solve": {
        "problem": [42, 4.2, True, object()], "stop": [42, "soon", [1], True], "seed": ["x", 1.5, True, None],
        "params": [42, "cpu", {}], "initial": [42, True, 1.5, b"1 2"], "callbacks": [42, "x", object()],
        "checkpoint": [42, True], "checkpoint_every": ["60", True, None], "time_limit": ["3", True, [3]],
        "generations": [True, 2.5, "2"], "target": [1.5, True, [1]], "no_improvement": [True, 1.5, "3"]},
    "resume": {
        "path": [42, None, True], "stop": [42], "problem": [42, 1.5], "callbacks": [42], "checkpoint": [42],
        "checkpoint_every": ["60", True], "time_limit": ["3", True], "generations": [True, "2"],
        "target": [1.5, True], "no_improvement": [True, "3"], "stop_at_optimum": [1, "yes"],
        "scheduler": [42, True], "dask_local": [True, 1.5]},
    "SolveParams": {
        "strategy": [42, None], "devices": ["cpu", 42, [1]], "islands": [True, 1.5, "4"],
        "ls_islands": [True, "2"], "ga": [42, {}], "migration": ["ring", 3], "sync": [1, "yes", None],
        "epoch_seconds": ["1", True, None], "epoch_generations": [True, 1.5], "scheduler": [42],
        "dask_local": [True, "2"], "stop_at_optimum": [1, None]},
    "load_instance": {"spec": [42, None, True], "problem": [42, True]},
    "load_solution": {"instance": ["x", 42], "path": [42, None]},
}
CALLS = {
    "solve": lambda **kw: metaheur.solve(**({"problem": random_qap(8, seed=1), "generations": 1} | kw)),
    "resume": lambda **kw: metaheur.resume(**({"path": "missing.npz"} | kw)),
    "SolveParams": lambda **kw: metaheur.SolveParams(**kw),
    "load_instance": lambda **kw: metaheur.load_instance(**({"spec": "gen:qap:8"} | kw)),
    "load_solution": lambda **kw: metaheur.load_solution(**({"instance": random_qap(8, seed=1),
                                                             "path": "missing.sln"} | kw)),
}
SIGNATURES = {"solve": metaheur.solve, "resume": metaheur.resume, "SolveParams": metaheur.SolveParams,
              "load_instance": metaheur.load_instance, "load_solution": metaheur.load_solution}
SPECS = {"solve": solver._SOLVE_TAKES, "resume": solver._RESUME_TAKES, "SolveParams": solve_params._TAKES,
         "load_instance": instances._LOAD_TAKES}


@pytest.mark.parametrize(("function", "argument", "value"), [
    (function, argument, value) for function, table in WRONG.items() for argument, values in table.items()
    for value in values])
def test_a_wrong_type_is_a_type_error_naming_the_argument(monkeypatch, tmp_path, function, argument, value):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(solver, "_run", lambda *a, **k: pytest.fail("the run started"))
    with pytest.raises(TypeError) as info:
        CALLS[function](**{argument: value})
    message = str(info.value)
    assert message.startswith(f"{function}(): {argument} takes "), message
    assert f"got {value!r}"[:40] in message and "\n" not in message


@pytest.mark.parametrize("function", sorted(SIGNATURES))
def test_every_public_argument_is_checked(function):
    """No argument of a public entry point escapes the check (``searches``: by its own check)."""
    names = set(inspect.signature(SIGNATURES[function]).parameters) - {"self", "earlier", "searches"}
    assert names == set(WRONG[function])
    if function in SPECS:
        assert names == set(SPECS[function])


def test_numpy_numbers_and_paths_are_taken(tmp_path):
    params = metaheur.SolveParams(strategy="cpu-serial", sync=np.bool_(True), epoch_generations=np.int64(1),
                                  epoch_seconds=np.float32(1))
    result = metaheur.solve(random_qap(8, seed=1), seed=np.int64(3), params=params, generations=np.int32(1),
                            time_limit=np.float64(30), checkpoint=Path(tmp_path / "c.npz"))
    assert result.cost > 0 and (tmp_path / "c.npz").exists()
