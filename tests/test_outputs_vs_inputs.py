"""An output never overwrites an input of its run: every output option against every kind of
input (instance files of two formats, --config, --initial, the checkpoint resumed, a problem
module of the user's own, the result a figure is redrawn from), reached by the same path, a
symlink, a hard link or a detour through another folder, is refused in one line with status 2
before any work, the input left as it was. Two outputs on one file are refused through hard
links too; --checkpoint on the checkpoint it resumes stays allowed (docs/long-runs.md)."""

from __future__ import annotations

import itertools
import json
import os
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from cliutil import QUICK, cpu_runner, ok, user_error, write_dat

from metaheur.cli import cli

OUTPUTS = ("--json", "--stats", "--solution", "--plot", "--checkpoint")
LINKS = ("same", "symlink", "hardlink", "detour")
TSP = ("NAME: five\nTYPE: TSP\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EUC_2D\n"
       "NODE_COORD_SECTION\n1 0 0\n2 10 0\n3 10 10\n4 0 10\n5 5 15\nEOF\n")


@pytest.fixture
def runner(monkeypatch, tmp_path):
    return cpu_runner(monkeypatch, tmp_path)


@pytest.fixture(scope="module")
def checkpoint_file(tmp_path_factory) -> Path:
    """A checkpoint of a short run of inst.dat (both in one folder)."""
    folder = tmp_path_factory.mktemp("ckpt")
    write_dat(folder / "inst.dat", 8, seed=3)
    here = os.getcwd()
    os.chdir(folder)
    try:
        ok(CliRunner().invoke(cli, ["solve", "inst.dat", *QUICK, "-q", "--checkpoint", "c.npz"]))
    finally:
        os.chdir(here)
    return folder / "c.npz"


def _input(kind: str, tmp_path: Path, checkpoint: Path) -> tuple[str, list[str]]:
    """The input file of ``kind`` (made in tmp_path) and the command that reads it (outputs to add)."""
    write_dat(tmp_path / "inst.dat", 8, seed=3)
    if kind == "instance-dat":
        return "inst.dat", ["solve", "inst.dat", *QUICK]
    if kind == "instance-tsp":
        (tmp_path / "five.tsp").write_text(TSP)
        return "five.tsp", ["solve", "five.tsp", *QUICK]
    if kind == "config":
        (tmp_path / "run.toml").write_text("[solve]\nseed = 2\n")
        return "run.toml", ["solve", "inst.dat", *QUICK, "--config", "run.toml"]
    if kind == "initial":
        (tmp_path / "start.sln").write_text(" ".join(map(str, range(1, 9))) + "\n")
        return "start.sln", ["solve", "inst.dat", *QUICK, "--initial", "start.sln"]
    if kind == "resume":
        (tmp_path / "c.npz").write_bytes(checkpoint.read_bytes())
        return "c.npz", ["solve", "--resume", "c.npz", "-g", "3"]
    if kind == "problem-module":
        module = f"userqap_{uuid.uuid4().hex}"
        (tmp_path / f"{module}.py").write_text(  # a subclass whose reader returns it (what --problem checks)
            "from dataclasses import replace\n\nfrom metaheur.problems.qap import QAP\n\n\nclass Mine(QAP):\n"
            "    pass\n\n\ndef read(spec):\n    qap = QAP.formats.read(spec)\n"
            "    return Mine(qap.name, qap.flow, qap.distance)\n\n\nMine.formats = replace(QAP.formats, read=read)\n")
        return f"{module}.py", ["solve", "inst.dat", *QUICK, "--problem", f"{module}:Mine"]
    raise AssertionError(kind)


def _reach(path: str, link: str, tmp_path: Path, suffix: str) -> str:
    """A path that names the file ``path``: itself, a symlink or hard link to it, or a detour."""
    if link == "same":
        return path
    if link == "symlink":
        os.symlink(path, tmp_path / f"link{suffix}")
        return f"link{suffix}"
    if link == "hardlink":
        os.link(tmp_path / path, tmp_path / f"hard{suffix}")
        return f"hard{suffix}"
    (tmp_path / "sub").mkdir()
    return f"sub/../{path}"


INPUT_KINDS = ("instance-dat", "instance-tsp", "config", "initial", "resume", "problem-module")


@pytest.mark.parametrize(("kind", "option", "link"), [
    case for case in itertools.product(INPUT_KINDS, OUTPUTS, LINKS)
    if not (case[0] == "resume" and case[1] == "--checkpoint")])
def test_an_output_on_an_input_is_refused_before_the_run(runner, tmp_path, checkpoint_file, kind, option, link):
    path, command = _input(kind, tmp_path, checkpoint_file)
    before = (tmp_path / path).read_bytes()
    target = _reach(path, link, tmp_path, ".png" if option == "--plot" else ".out")
    err = user_error(runner.invoke(cli, [*command, option, target]), f"{option} {target} would overwrite an input")
    assert path in err
    assert (tmp_path / path).read_bytes() == before
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("link", LINKS)
def test_a_figure_is_not_drawn_over_the_result_it_redraws(runner, tmp_path, link):
    write_dat(tmp_path / "inst.dat", 8, seed=3)
    ok(runner.invoke(cli, ["solve", "inst.dat", *QUICK, "-q", "--json", "r.json"]))
    before = (tmp_path / "r.json").read_bytes()
    figure = _reach("r.json", link, tmp_path, ".png")
    user_error(runner.invoke(cli, ["plot", "r.json", figure]), f"FIGURE {figure} would overwrite an input")
    assert (tmp_path / "r.json").read_bytes() == before


@pytest.mark.parametrize(("first", "second"), [("--json", "--stats"), ("--solution", "--json"),
                                               ("--stats", "--checkpoint"), ("--json", "--plot")])
def test_two_outputs_on_hard_links_of_one_file_are_refused(runner, tmp_path, first, second):
    write_dat(tmp_path / "inst.dat", 8, seed=3)
    (tmp_path / "a.png").write_text("keep")
    os.link(tmp_path / "a.png", tmp_path / "b.png")
    user_error(runner.invoke(cli, ["solve", "inst.dat", *QUICK, first, "a.png", second, "b.png"]),
               "would both write")
    assert (tmp_path / "a.png").read_text() == "keep"


@pytest.mark.parametrize("link", LINKS)
def test_resuming_into_the_checkpoint_resumed_stays_allowed(runner, tmp_path, checkpoint_file, link):
    write_dat(tmp_path / "inst.dat", 8, seed=3)
    (tmp_path / "c.npz").write_bytes(checkpoint_file.read_bytes())
    target = _reach("c.npz", link, tmp_path, ".npz")
    ok(runner.invoke(cli, ["solve", "--resume", "c.npz", "-g", "3", "-q", "--checkpoint", target,
                           "--json", "r.json"]))
    assert json.loads((tmp_path / "r.json").read_text())["cost"] > 0


@pytest.mark.parametrize("option", ["--json", "--stats", "--solution", "--checkpoint"])
def test_a_batch_output_on_one_of_its_instances_is_refused(runner, tmp_path, option):
    """With several instances, a ``{name}`` path that names an instance's own file is refused
    before any instance runs."""
    write_dat(tmp_path / "a.dat", 8, seed=3)
    write_dat(tmp_path / "b.dat", 8, seed=4)
    before = [(tmp_path / name).read_bytes() for name in ("a.dat", "b.dat")]
    user_error(runner.invoke(cli, ["solve", "a.dat", "b.dat", *QUICK, option, "{name}.dat"]),
               "would overwrite an input of the run (INSTANCE")
    assert [(tmp_path / name).read_bytes() for name in ("a.dat", "b.dat")] == before
