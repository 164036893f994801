"""Batches of ``metaheur solve``: patterns looked up under METAHEUR_INSTANCES, instances named in
their status lines, duplicates refused, the table in the order given; suggestions for mistyped
instance names and config keys (issue 24, items 6 and 7)."""

from __future__ import annotations

import pytest
from cliutil import QUICK, cpu_runner, ok, user_error, write_dat

from metaheur.cli import cli


@pytest.fixture
def library(tmp_path, monkeypatch):
    """A METAHEUR_INSTANCES folder with qaplib/ (tai7a, tai8a, tai8b, tai10a) and one instance flat (flat9)."""
    root = tmp_path / "library"
    (root / "qaplib").mkdir(parents=True)
    for name, n in (("tai7a", 7), ("tai8a", 8), ("tai8b", 8), ("tai10a", 10)):
        write_dat(root / "qaplib" / f"{name}.dat", n, n)
    write_dat(root / "flat9.dat", 9, 9)
    monkeypatch.setenv("METAHEUR_INSTANCES", str(root))
    return root


@pytest.fixture
def runner(monkeypatch, tmp_path, library):
    work = tmp_path / "work"
    work.mkdir()
    return cpu_runner(monkeypatch, work)


def table_names(out: str) -> list[str]:
    """The instances of a batch's table, or of the one summary."""
    if "instance       " not in out:
        return [line.split()[1] for line in out.splitlines() if line.startswith("instance ")]
    rows = out[out.index("instance       "):].splitlines()[2:-2]
    return [row.split()[0] for row in rows]


@pytest.mark.parametrize(("pattern", "names"), [
    ("qaplib/tai*a.dat", ["tai7a", "tai8a", "tai10a"]),  # in natural order
    ("tai8?", ["tai8a", "tai8b"]),
    ("flat*", ["flat9"]),
])
def test_a_pattern_is_looked_up_under_the_library(runner, pattern, names):
    out = ok(runner.invoke(cli, ["solve", pattern, *QUICK, "-q"]))
    assert table_names(out) == names


def test_batch_in_the_order_given_with_named_status_lines(runner):
    result = runner.invoke(cli, ["solve", "tai8b", "tai7a", "flat9", *QUICK])
    assert table_names(ok(result)) == ["tai8b", "tai7a", "flat9"]
    lines = result.stderr.splitlines()
    assert lines and all(line.split()[0] in ("tai8b", "tai7a", "flat9") for line in lines)
    assert [line.split()[0] for line in lines if line.endswith("[generations]")] == ["tai8b", "tai7a", "flat9"]


def test_an_instance_given_twice_is_refused_up_front(runner, library):
    result = runner.invoke(cli, ["solve", "tai7a", "tai8a", str(library / "qaplib" / "tai7a.dat"), *QUICK])
    user_error(result, "tai7a.dat: the same instance as tai7a, given twice")
    assert result.stdout == ""
    user_error(runner.invoke(cli, ["solve", "tai8?", "tai8a", *QUICK]), "given twice")


def test_an_unknown_instance_name_suggests_the_nearest(runner):
    user_error(runner.invoke(cli, ["solve", "tai8", *QUICK]), "tai8: no such file", "(did you mean tai8a or tai8b?)")
    user_error(runner.invoke(cli, ["info", "flat8"]), "(did you mean flat9?)")
    user_error(runner.invoke(cli, ["solve", "tai*z", *QUICK]), "tai*z: no file matches")


def test_an_unknown_config_key_suggests_the_nearest_and_lists_the_keys(runner):
    with open("run.toml", "w") as handle:
        handle.write("[tabu]\ntenur = 'cubic'\n")
    err = user_error(runner.invoke(cli, ["solve", "tai7a", *QUICK, "--config", "run.toml"]),
                     "unknown key(s) in [tabu]: tenur (did you mean tenure?)")
    assert "its keys are " in err and "scale" in err
