"""Output files of ``metaheur solve`` and ``metaheur plot``: checked before the search, written
one by one so that a failure loses nothing else, JSON and statistics on standard output, figure
formats by extension (issue 24, items 1 and 2)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from cliutil import QUICK, cpu_runner, ok, user_error, write_dat

from metaheur import plots
from metaheur.cli import cli


@pytest.fixture
def runner(monkeypatch, tmp_path):
    return cpu_runner(monkeypatch, tmp_path)


def leftovers(folder) -> list[str]:
    """Temporary or probe files left in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# ------------------------------------------------------------------------ checked before the search


@pytest.mark.parametrize(("args", "fragments"), [
    (["--solution", "nodir/x.sln"], ("--solution nodir/x.sln", "no folder nodir")),
    (["--json", "."], ("--json .", "is a directory")),
    (["--plot", "out.gif"], ("--plot out.gif", "unknown figure format .gif", ".png, .svg, .pdf")),
    (["--plot", "out"], ("unknown figure format (no extension)",)),
    (["--json", "same.out", "--stats", "same.out"], ("--stats and --json would both write same.out",)),
    (["--checkpoint", "nodir/run.npz"], ("--checkpoint nodir/run.npz", "no folder nodir")),
    (["--json", "-", "--stats", "-"], ("--json and --stats both ask for standard output",)),
    (["--solution", "-"], ("--solution -: only --json and --stats write to standard output",)),
])
def test_a_bad_output_is_refused_before_the_search(runner, tmp_path, args, fragments):
    result = runner.invoke(cli, ["solve", "gen:qap:8", *QUICK, "--solution", "good.sln", *args])
    user_error(result, *fragments)
    assert result.stdout == ""  # no summary: nothing was solved
    assert not (tmp_path / "good.sln").exists()
    assert leftovers(tmp_path) == []


def test_several_instances_are_all_checked_before_the_first_search(runner, tmp_path):
    result = runner.invoke(cli, ["solve", "gen:qap:8", "gen:qap:9", *QUICK, "--json", "multi.json"])
    user_error(result, "--json", "{name}")
    assert result.stdout == "" and list(tmp_path.iterdir()) == []
    # two instances of one name (from two folders) would write the same file: refused before either is solved
    for folder, seed in (("a", 1), ("b", 2)):
        (tmp_path / folder).mkdir()
        write_dat(tmp_path / folder / "alpha.dat", 8, seed)
    (tmp_path / "out").mkdir()
    result = runner.invoke(cli, ["solve", "a/alpha.dat", "b/alpha.dat", *QUICK, "--json", "out/{name}.json"])
    user_error(result, "--json of alpha and --json of alpha would both write out/alpha.json")
    assert result.stdout == "" and list((tmp_path / "out").iterdir()) == []


def test_one_failed_output_loses_nothing_else(runner, tmp_path, monkeypatch):
    """A figure that fails while being written (a full disk): the JSON and the solution are
    written, the summary printed, no temporary file left, exit status 1."""
    def full_disk(result, path, problem=None, fmt=None):
        with open(path, "wb") as handle:
            handle.write(b"half a figure")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(plots, "save_result_figure", full_disk)
    result = runner.invoke(cli, ["solve", "gen:qap:10", *QUICK, "-q", "--json", "r.json", "--solution", "r.sln",
                                 "--plot", "r.png", "--stats", "r.csv"])
    assert result.exit_code == 1, result.output
    assert "cost        " in result.stdout  # the summary
    assert result.stderr.strip() == "metaheur: error: --plot r.png: No space left on device"
    data = json.loads((tmp_path / "r.json").read_text())
    assert (tmp_path / "r.sln").read_text().split()[1] == str(data["cost"])
    assert (tmp_path / "r.csv").is_file() and not (tmp_path / "r.png").exists()
    assert leftovers(tmp_path) == []


def test_outputs_get_the_permissions_of_new_files_and_keep_those_of_files_they_replace(runner, tmp_path):
    """The outputs are written through temporary files (owner-only permissions) and renamed: a new
    one gets what the umask gives a new file, a replaced one keeps its own."""
    import os
    import stat

    (tmp_path / "r.sln").write_text("old")
    os.chmod(tmp_path / "r.sln", 0o604)
    mask = os.umask(0o027)
    try:
        ok(runner.invoke(cli, ["solve", "gen:qap:10", *QUICK, "-q", "--json", "r.json", "--solution", "r.sln",
                               "--stats", "r.csv"]))
    finally:
        os.umask(mask)
    modes = {name: stat.S_IMODE((tmp_path / name).stat().st_mode) for name in ("r.json", "r.csv", "r.sln")}
    assert modes == {"r.json": 0o640, "r.csv": 0o640, "r.sln": 0o604}


# ------------------------------------------------------------------------------- standard output


def test_json_to_standard_output(runner, tmp_path):
    result = runner.invoke(cli, ["solve", "gen:qap:10", *QUICK, "--json", "-"])
    ok(result)
    data = json.loads(result.stdout)  # nothing but the JSON on stdout
    assert data["instance"] == "gen-qap-10-s1" and data["stop_reason"] == "generations"
    assert f"cost        {data['cost']}" in result.stderr  # the summary and the status lines go to stderr
    assert "[generations]" in result.stderr
    assert not (tmp_path / "-").exists()


def test_stats_to_standard_output(runner, tmp_path):
    result = runner.invoke(cli, ["solve", "gen:qap:10", *QUICK, "-q", "--stats", "-", "--json", "r.json"])
    rows = list(csv.DictReader(io.StringIO(ok(result))))
    assert len(rows) == 2 and rows[0]["generations"] == "1" and rows[0]["search_steps"] == "0"
    assert json.loads((tmp_path / "r.json").read_text())["history"][0]["generations"] == 1


# ----------------------------------------------------------------------------------- figure formats


MAGIC = {"png": b"\x89PNG", "svg": b"<?xml", "pdf": b"%PDF", "jpg": b"\xff\xd8\xff"}


def test_figure_format_follows_the_extension(runner, tmp_path):
    ok(runner.invoke(cli, ["solve", "gen:tsp:30", *QUICK, "-q", "--json", "r.json", "--plot", "r.svg"]))
    assert (tmp_path / "r.svg").read_bytes().startswith(MAGIC["svg"])
    for ext, magic in MAGIC.items():
        out = json.loads(ok(runner.invoke(cli, ["plot", "r.json", f"again.{ext.upper()}", "--json"])))
        assert out["figure"] == f"again.{ext.upper()}" and out["panel"] == "tour"
        assert (tmp_path / f"again.{ext.upper()}").read_bytes().startswith(magic), ext
    user_error(runner.invoke(cli, ["plot", "r.json", "again.gif"]), "unknown figure format .gif")
    user_error(runner.invoke(cli, ["plot", "r.json", "nodir/again.png"]), "no folder nodir")
    assert leftovers(tmp_path) == []
