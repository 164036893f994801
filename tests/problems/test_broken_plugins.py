"""A broken third-party plug-in (an installed entry point of ``metaheur.problems``) fails only the
runs that ask for it: every other run, ``metaheur info`` included, goes on with one warning naming
it; an import that hangs is given up after ``METAHEUR_PLUGIN_TIMEOUT``; the user's Ctrl-C while
plug-ins load still stops the command. Each case runs the real CLI in a subprocess with a
dist-info folder on PYTHONPATH, as pip leaves an installed package."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from metaheur.problem.registry import ENTRY_POINT_GROUP

# the plug-in module's source for each kind of fault (None: the module is not there at all)
FAULTS = {
    "missing module": None,
    "syntax error": "def broken(:\n",
    "raises at import": "raise RuntimeError('plug-in failed')\n",
    "sys.exit at import": "import sys\nsys.exit(2)\n",
    "KeyboardInterrupt at import": "raise KeyboardInterrupt\n",
    "a function": "def Bad():\n    pass\n",
    "an instance": "Bad = object()\n",
    "a class of the wrong kind": "class Bad(dict):\n    pass\n",
    "None": "Bad = None\n",
    "import hangs": "import pathlib, time\npathlib.Path('importing').touch()\nwhile True:\n    time.sleep(0.1)\n",
}
TIMEOUT = "1.5"  # METAHEUR_PLUGIN_TIMEOUT in these runs (seconds)


def install(root: Path, source: str | None) -> dict:
    """A distribution ``badplug`` registering ``bad = badplug_mod:Bad`` under ``root``; the
    environment of a run that has it installed."""
    dist = root / "badplug-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: badplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nbad = badplug_mod:Bad\n")
    if source is not None:
        (root / "badplug_mod.py").write_text(source)
    return os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
                         "METAHEUR_PLUGIN_TIMEOUT": TIMEOUT}


def metaheur(tmp_path: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metaheur.cli", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180)


def warned(err: str) -> list[str]:
    """The warning lines about the plug-in (one, naming its entry point, module and reason)."""
    lines = [line for line in err.splitlines() if "badplug_mod" in line]
    assert len(lines) == 1 and lines[0].startswith("metaheur: problem bad (entry point of metaheur.problems)"), err
    assert "Traceback" not in err
    return lines


@pytest.fixture(params=list(FAULTS), ids=list(FAULTS))
def broken(request, tmp_path) -> dict:
    return install(tmp_path / "site", FAULTS[request.param])


def test_metaheur_info_lists_the_other_problems_and_warns_of_the_broken_one(broken, tmp_path):
    done = metaheur(tmp_path, broken, "info", "--json")
    assert done.returncode == 0, done.stderr
    kinds = [p["kind"] for p in json.loads(done.stdout)["problems"]]
    assert "qap" in kinds and "bad" not in kinds
    warned(done.stderr)


def test_a_run_of_a_built_in_problem_finishes_and_writes_its_result(broken, tmp_path):
    done = metaheur(tmp_path, broken, "solve", "gen:qap:12", "-t", "0.5", "--strategy", "cpu-serial",
                    "--json", "out.json")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "out.json").read_text())["n"] == 12
    warned(done.stderr)


@pytest.mark.parametrize("args", [["info", "bad"], ["info", "--problem", "bad", "x.dat"], ["solve", "gen:bad:5"],
                                  ["solve", "--problem", "bad", "x.dat", "-t", "1"]],
                         ids=["info NAME", "info --problem", "solve gen:", "solve --problem"])
def test_a_run_that_asks_for_the_broken_plug_in_fails_in_one_line(broken, tmp_path, args):
    (tmp_path / "x.dat").write_text("1\n0\n0\n")
    done = metaheur(tmp_path, broken, *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    err = done.stderr.strip().splitlines()
    assert err[-1].startswith("metaheur: error: ") and "Traceback" not in done.stderr, done.stderr
    assert "bad" in err[-1]


def test_describing_a_built_in_instance_loads_no_plug_in(tmp_path):
    """A built-in ``gen:`` name, file extension or problem name is resolved before any plug-in is
    imported: a hanging one is not even waited for."""
    env = install(tmp_path / "site", FAULTS["import hangs"])
    qap = tmp_path / "a.dat"
    qap.write_text("2\n0 1\n1 0\n\n0 2\n2 0\n")
    for args in (["info", "gen:qap:12"], ["info", str(qap)], ["info", "qap"], ["evaluate", "gen:tsp:5", "s.txt"]):
        (tmp_path / "s.txt").write_text("0 1 2 3 4\n")
        done = metaheur(tmp_path, env, *args)
        assert done.returncode == 0 and "badplug_mod" not in done.stderr, (args, done.stderr)
        assert not (tmp_path / "importing").exists(), args


def test_the_workers_of_a_run_leave_out_what_the_run_left_out(tmp_path):
    """Worker processes (cpu-islands) do not warn again nor wait again for a hanging import."""
    env = install(tmp_path / "site", FAULTS["import hangs"])
    done = metaheur(tmp_path, env, "solve", "gen:qap:12", "-t", "0.5", "--strategy", "cpu-islands", "--json",
                    "out.json")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.json").is_file()
    warned(done.stderr)


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", "inf"])
def test_a_bad_timeout_setting_is_one_line(tmp_path, value):
    env = install(tmp_path / "site", FAULTS["raises at import"]) | {"METAHEUR_PLUGIN_TIMEOUT": value}
    done = metaheur(tmp_path, env, "info")
    assert done.returncode == 2
    assert done.stderr.strip() == ("metaheur: error: METAHEUR_PLUGIN_TIMEOUT must be a positive number of seconds, "
                                   f"got {value!r}")


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_while_a_plug_in_loads_still_stops_the_command(tmp_path):
    """The user's Ctrl-C (a real SIGINT) during a plug-in's import ends the command at once (130);
    a KeyboardInterrupt the plug-in raises is a broken plug-in (the other tests)."""
    env = install(tmp_path / "site", FAULTS["import hangs"]) | {"METAHEUR_PLUGIN_TIMEOUT": "60"}
    proc = subprocess.Popen([sys.executable, "-m", "metaheur.cli", "info"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "importing").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "metaheur: interrupted", err
