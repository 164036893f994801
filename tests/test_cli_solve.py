"""``metaheur solve`` (and ``plot``, ``--version``, ``info``) through click's CliRunner and as a
subprocess: output files, several instances, progress, configuration files, errors, Ctrl-C."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from cliutil import QUICK, cpu_runner, ok, user_error, write_dat

import metaheur
from metaheur.cli import cli
from metaheur.problems import random_qap
from metaheur.result import STATS_FIELDS, Result

JSON_KEYS = ("instance", "problem", "n", "cost", "best_known", "gap_percent", "permutation", "seed", "strategy",
             "devices", "time_s", "search_iterations", "stop_reason")


@pytest.fixture
def runner(monkeypatch, tmp_path):
    return cpu_runner(monkeypatch, tmp_path)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def subprocess_env() -> dict:
    return dict(os.environ, METAHEUR_NO_GPU="1")


def run_cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metaheur.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=subprocess_env(), timeout=timeout)


# ----------------------------------------------------------------------------------- outputs


def test_json_output(runner, tmp_path):
    out = ok(runner.invoke(cli, ["solve", "gen:qap:14", *QUICK, "-q", "--json", "r.json"]))
    data = json.loads((tmp_path / "r.json").read_text())
    for key in JSON_KEYS:
        assert key in data, key
    assert data["instance"] == "gen-qap-14-s1" and data["problem"] == "QAP" and data["n"] == 14
    assert data["cost"] == random_qap(14, seed=1).cost(data["permutation"])
    assert data["best_known"] is None and data["gap_percent"] is None
    assert (data["seed"], data["strategy"], data["devices"]) == (1, "cpu-serial", ["cpu"])
    assert data["stop_reason"] == "generations" and data["search_iterations"] > 0 and data["time_s"] > 0
    assert f"cost        {data['cost']}" in out
    assert "stopped     generations" in out


def test_migration_on_a_uniform_random_qap_only_when_asked(runner, tmp_path):
    """No migration option: the solver's default (none between islands on a uniformly random
    instance such as the generated ones); any migration option: migration with the others' defaults."""
    args = ["solve", "gen:qap:30", "-g", "4", "--sync", "--epoch-generations", "1", "--strategy", "cpu-islands",
            "--islands", "2", "--population", "6", "--offspring", "3", "--ls-budget", "2", "-q", "--json", "r.json"]
    for extra, migrates in (([], False), (["--migration-interval", "1"], True), (["--topology", "complete"], True)):
        ok(runner.invoke(cli, [*args, *extra]))
        assert bool(json.loads((tmp_path / "r.json").read_text())["migrations"]) == migrates, extra


@pytest.mark.parametrize(("instance", "suffix"), [("gen:qap:15:2", ".sln"), ("gen:tsp:40:3", ".tour")])
def test_solution_file_rescored_by_evaluate(runner, tmp_path, instance, suffix):
    sol = tmp_path / f"best{suffix}"
    ok(runner.invoke(cli, ["solve", instance, *QUICK, "-q", "--json", "r.json", "--solution", str(sol)]))
    reported = json.loads((tmp_path / "r.json").read_text())["cost"]
    ev = json.loads(ok(runner.invoke(cli, ["evaluate", instance, str(sol), "--json"])))
    assert ev["cost"] == reported
    # the result JSON itself is a solution file too
    ev = json.loads(ok(runner.invoke(cli, ["evaluate", instance, "r.json", "--json"])))
    assert ev["cost"] == reported == ev["stated_cost"]


def test_stats_csv(runner, tmp_path):
    ok(runner.invoke(cli, ["solve", "gen:qap:12", *QUICK, "-q", "--json", "r.json", "--stats", "s.csv"]))
    text = (tmp_path / "s.csv").read_text()
    assert text.splitlines()[0] == ",".join(STATS_FIELDS)
    rows = Result.read_stats_csv(tmp_path / "s.csv")
    result = Result.from_json(tmp_path / "r.json")
    assert len(rows) == len(result.history) == 2  # 2 epochs of 1 island
    assert [r.epoch for r in rows] == [0, 1]
    assert rows[-1].global_best == result.cost
    assert rows == result.history


@pytest.mark.parametrize("instance", ["gen:qap:12", "gen:tsp:30"])
def test_plot_png_is_1200_by_800(runner, tmp_path, instance):
    ok(runner.invoke(cli, ["solve", instance, *QUICK, "-q", "--plot", "run.png"]))
    assert png_size(tmp_path / "run.png") == (1200, 800)


def test_plot_command_redraws_a_saved_result(runner, tmp_path):
    ok(runner.invoke(cli, ["solve", "gen:tsp:25", *QUICK, "-q", "--json", "r.json"]))
    out = ok(runner.invoke(cli, ["plot", "r.json", "again.png"]))
    assert out.strip() == "wrote again.png"
    assert png_size(tmp_path / "again.png") == (1200, 800)
    # without the instance at hand the figure is still drawn
    data = json.loads((tmp_path / "r.json").read_text())
    data["source"], data["instance"] = None, "elsewhere"
    (tmp_path / "moved.json").write_text(json.dumps(data))
    out = ok(runner.invoke(cli, ["plot", "moved.json", "moved.png"]))
    assert "instance not found" in out
    assert png_size(tmp_path / "moved.png") == (1200, 800)


def test_plot_command_errors(runner, tmp_path):
    user_error(runner.invoke(cli, ["plot", "missing.json", "x.png"]), "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    user_error(runner.invoke(cli, ["plot", "bad.json", "x.png"]), "invalid JSON")


def test_verbose_lists_islands(runner):
    out = ok(runner.invoke(cli, ["solve", "gen:qap:12", *QUICK, "-q", "-v"]))
    assert "  island 0 on cpu (GA (ux)): 2 generations" in out


# ------------------------------------------------------------------------- several instances


def test_several_instances_with_name_templates_and_a_table(runner, tmp_path):
    (tmp_path / "out").mkdir()
    out = ok(runner.invoke(cli, ["solve", "gen:qap:12", "gen:tsp:20", *QUICK, "-q", "--json", "out/{name}.json",
                                 "--solution", "out/{name}.sol", "--stats", "out/{name}.csv"]))
    for name in ("gen-qap-12-s1", "gen-tsp-20-s1"):
        data = json.loads((tmp_path / "out" / f"{name}.json").read_text())
        assert data["instance"] == name
        assert (tmp_path / "out" / f"{name}.sol").is_file() and (tmp_path / "out" / f"{name}.csv").is_file()
    table = out[out.index("instance       "):].splitlines()
    assert table[0].split() == ["instance", "n", "best", "known", "found", "gap", "%", "time", "s"]
    assert table[2].split()[:2] == ["gen-qap-12-s1", "12"]
    assert table[3].split()[:2] == ["gen-tsp-20-s1", "20"]
    assert table[-1].startswith("mean")


def test_several_instances_need_name_templates(runner):
    user_error(runner.invoke(cli, ["solve", "gen:qap:8", "gen:qap:9", *QUICK, "-q", "--json", "r.json"]),
               "--json", "{name}")


def test_glob_of_instance_files(runner, tmp_path):
    (tmp_path / "inst").mkdir()
    write_dat(tmp_path / "inst" / "alpha.dat", 9, 1)
    write_dat(tmp_path / "inst" / "beta.dat", 10, 2)
    (tmp_path / "inst" / "notes.txt").write_text("not an instance")
    out = ok(runner.invoke(cli, ["solve", "inst/*.dat", *QUICK, "-q", "--json", "{name}.json"]))
    assert json.loads((tmp_path / "alpha.json").read_text())["n"] == 9
    assert json.loads((tmp_path / "beta.json").read_text())["n"] == 10
    assert "alpha " in out and "beta " in out and "\nmean" in out


def test_glob_without_matches(runner):
    user_error(runner.invoke(cli, ["solve", "nowhere/*.dat", *QUICK]), "nowhere/*.dat: no file matches")


# ---------------------------------------------------------------------------------- progress


def test_quiet_prints_no_progress(runner):
    result = runner.invoke(cli, ["solve", "gen:qap:12", *QUICK, "-q"])
    ok(result)
    assert result.stderr == ""


def test_progress_without_a_terminal_is_plain_lines(runner):
    result = runner.invoke(cli, ["solve", "gen:qap:12", *QUICK])
    ok(result)
    err = result.stderr
    assert err and "\r" not in err and "\033" not in err
    lines = err.splitlines()
    assert all("best " in line for line in lines)
    assert lines[-1].endswith("[generations]")
    assert "cpu x1" in lines[0]


# ------------------------------------------------------------------------------------ config


def test_config_file(runner, tmp_path):
    (tmp_path / "run.toml").write_text(
        "[solve]\ngenerations = 2\nsync = true\nepoch_generations = 1\nstrategy = \"cpu-serial\"\nseed = 4\n"
        "[ga]\npopulation = 5\noffspring = 2\ncrossover = \"pmx\"\nls_budget = 30\n"
        "[tabu]\ntenure = \"uniform\"\n")
    ok(runner.invoke(cli, ["solve", "gen:qap:12", "--config", "run.toml", "-q", "--json", "r.json"]))
    data = json.loads((tmp_path / "r.json").read_text())
    assert (data["seed"], data["strategy"], data["stop_reason"]) == (4, "cpu-serial", "generations")
    assert data["parameters"]["ga"]["crossover"] == "pmx" and data["parameters"]["ga"]["population"] == 5
    assert data["parameters"]["tabu"]["tenure"] == "uniform"
    assert data["islands"][0]["generations"] == 2
    # the command line wins over the file
    ok(runner.invoke(cli, ["solve", "gen:qap:12", "--config", "run.toml", "-q", "--json", "r2.json", "--seed", "9",
                           "--population", "7"]))
    data = json.loads((tmp_path / "r2.json").read_text())
    assert data["seed"] == 9 and data["parameters"]["ga"]["population"] == 7
    assert data["parameters"]["ga"]["crossover"] == "pmx"


@pytest.mark.parametrize(("text", "fragments"), [
    ("[solve]\ngenerashuns = 2\n", ("run.toml", "unknown key(s) in [solve]: generashuns")),
    ("[ga]\npopulaton = 2\n", ("unknown key(s) in [ga]: populaton",)),
    ("[gaa]\npopulation = 2\n", ("unknown section [gaa]",)),
    ("[ga]\npopulation = 0\n", ("[ga] population must be at least 1",)),
    ("[ga]\npopulation = \"many\"\n", ("[ga] population must be int",)),
    ("[solve]\ntime_limit = -3\n", ("time limit must be positive",)),
    ("[solve]\nstrategy = \"warp\"\n", ("unknown strategy 'warp'",)),
    ("[solve]\ntarget = \"abc\"\n", ("must be a number or 'bks'",)),
    ("[solve\n", ("run.toml", "invalid TOML")),
    ("[tabu]\nscale = 200000000\n", ("cubic tenure scale must be from 1 to 1048575, got 200000000",)),
])
def test_bad_config_exits_2_with_one_line(runner, tmp_path, text, fragments):
    (tmp_path / "run.toml").write_text(text)
    user_error(runner.invoke(cli, ["solve", "gen:qap:8", "--config", "run.toml", "-q", "-g", "1"]), *fragments)


def test_missing_config_file(runner):
    user_error(runner.invoke(cli, ["solve", "gen:qap:8", "--config", "absent.toml", "-q"]), "absent.toml",
               "no such file")


# ------------------------------------------------------------------------------- bad options


@pytest.mark.parametrize(("args", "fragments"), [
    (["gen:qap:8", "--time-limit", "-1"], ("--time-limit must be positive",)),
    (["gen:qap:8", "--time-limit", "0"], ("--time-limit must be positive",)),
    (["gen:qap:8", "--epoch-seconds", "0"], ("--epoch-seconds must be positive",)),
    (["gen:qap:8", "-g", "1", "--population", "0"], ("population must be at least 1",)),
    (["gen:qap:8", "-g", "1", "--offspring", "0"], ("offspring per generation must be at least 1",)),
    (["gen:qap:8", "-g", "1", "--crossover", "ox"], ("crossover 'ox' is not for the QAP",)),
    (["gen:tsp:10", "-g", "1", "--crossover", "pmx"], ("crossover 'pmx' is not for the TSP",)),
    (["gen:qap:8", "-g", "1", "--crossover", "magic"], ("unknown crossover 'magic'",)),
    (["gen:qap:8", "-g", "1", "--strategy", "gpu"], ("strategy gpu needs a GPU",)),
    (["gen:qap:8", "-g", "1", "--strategy", "hybrid"], ("strategy hybrid needs a GPU",)),
    (["gen:qap:8", "-g", "1", "--target", "abc"], ("--target must be a number or 'bks', got 'abc'",)),
    (["gen:qap:8", "-g", "1", "--target", "bks"], ("no best-known value",)),
    (["gen:qap:8", "-g", "1", "--device", "cuda:7"], ("cuda:7",)),
    (["gen:qap:8", "-g", "1", "--device", "cpu", "--device", "cpu"], ("a device is listed twice",)),
    (["gen:qap:8", "-g", "0"], ("generations must be at least 1",)),
    (["gen:qap:8", "-g", "1", "--seed", "-4"], ("seed must be from 0 to 2^63 - 1",)),
    (["gen:qap:8", "-g", "1", "--islands", "0"], ("islands must be at least 1",)),
    (["gen:qap:8", "-g", "1", "--migration-interval", "-1"], ("migration interval must be 0 (never)",)),
    (["gen:qap:1", "-g", "1"], ("n >= 2",)),
    (["gen:qap:abc"], ("bad built-in instance",)),
    (["no-such-instance-here", "-g", "1"], ("no-such-instance-here", "no such file")),
    ([], ("give at least one INSTANCE",)),
])
def test_bad_options_exit_2_with_one_line(runner, args, fragments):
    user_error(runner.invoke(cli, ["solve", *args, "-q"]), *fragments)


def test_unwritable_output_is_a_one_line_error_before_the_search(runner, tmp_path):
    result = runner.invoke(cli, ["solve", "gen:qap:8", *QUICK, "-q", "--json", "no/such/dir/r.json"])
    user_error(result, "--json no/such/dir/r.json", "no folder no/such/dir")
    assert result.stdout == ""  # nothing was solved


# ------------------------------------------------------------------------- version and info


def test_version(runner):
    out = ok(runner.invoke(cli, ["--version"]))
    assert out.strip() == f"metaheur, version {metaheur.__version__}"


def test_info_lists_the_cpu_device(runner):
    out = ok(runner.invoke(cli, ["info"]))
    assert "devices" in out.splitlines()
    assert any(line.strip().startswith("cpu ") for line in out.splitlines())
    data = json.loads(ok(runner.invoke(cli, ["info", "--json"])))
    assert data["devices"][0]["name"] == "cpu" and data["devices"][0]["cores"] >= 1
    assert data["metaheur"] == metaheur.__version__


# ------------------------------------------------------------------------------- subprocesses


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="dask.distributed is not installed")
def test_dask_local_run(runner, tmp_path):
    result = runner.invoke(cli, ["solve", "gen:qap:12", "-g", "2", "--sync", "--population", "6", "--offspring", "3",
                                 "--ls-budget", "40", "--strategy", "cpu-islands", "--islands", "2",
                                 "--dask-local", "2", "-q", "--json", "r.json"])
    ok(result)
    assert json.loads((tmp_path / "r.json").read_text())["parameters"]["dask"] == "local:2"


@pytest.mark.slow
def test_subprocess_solve_and_evaluate(tmp_path):
    proc = run_cli("solve", "gen:qap:16", *QUICK, "--json", "r.json", "--solution", "r.sln", "--plot", "r.png",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() and "Traceback" not in proc.stderr  # plain progress lines (not a terminal)
    data = json.loads((tmp_path / "r.json").read_text())
    assert set(JSON_KEYS) <= data.keys()
    ev = run_cli("evaluate", "gen:qap:16", "r.sln", "--json", cwd=tmp_path)
    assert ev.returncode == 0, ev.stderr
    assert json.loads(ev.stdout)["cost"] == data["cost"]
    assert png_size(tmp_path / "r.png") == (1200, 800)


@pytest.mark.slow
def test_subprocess_errors_are_one_line(tmp_path):
    for args, fragment in ((["--strategy", "gpu", "-g", "1"], "needs a GPU"),
                           (["--device", "cuda:7", "-g", "1"], "cuda:7"),
                           (["--time-limit", "-5"], "--time-limit must be positive")):
        proc = run_cli("solve", "gen:qap:8", "-q", *args, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        err = proc.stderr.strip()
        assert err.startswith("metaheur: error:") and "\n" not in err and fragment in err, err
        assert proc.stdout == ""


def test_subprocess_version_and_info(tmp_path):
    proc = run_cli("--version", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == f"metaheur, version {metaheur.__version__}"
    proc = run_cli("info", cwd=tmp_path)
    assert proc.returncode == 0
    assert any(line.strip().startswith("cpu ") for line in proc.stdout.splitlines())


@pytest.mark.slow
def test_ctrl_c_writes_the_best_so_far(tmp_path):
    """SIGINT (as a terminal's Ctrl-C: to the whole process group) during a long run: the run stops at
    the next epoch boundary, writes its outputs and exits with 130 (or 0)."""
    proc = subprocess.Popen([sys.executable, "-m", "metaheur.cli", "solve", "gen:qap:60", "--time-limit", "60",
                             "--json", "x.json", "--solution", "y.sln"], cwd=tmp_path, env=subprocess_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        first = proc.stderr.readline()
        while first.startswith("starting the islands"):  # the worker processes start
            first = proc.stderr.readline()
        assert "best" in first, first + proc.stderr.read()  # the first status line: the search is running
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1.5)  # let it run a little longer (it should not end by itself)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode in (0, 130), err
    assert "Traceback" not in err
    data = json.loads((tmp_path / "x.json").read_text())
    assert data["stop_reason"] == "interrupted"
    assert data["time_s"] < 50
    assert "stopped     interrupted" in out
    ev = run_cli("evaluate", "gen:qap:60", "y.sln", "--json", cwd=tmp_path)
    assert ev.returncode == 0, ev.stderr
    assert json.loads(ev.stdout)["cost"] == data["cost"]


def test_target_bks_on_a_library_instance(runner, tmp_path, instances_dir, monkeypatch):
    monkeypatch.setenv("METAHEUR_INSTANCES", str(instances_dir))
    out = ok(runner.invoke(cli, ["solve", "tai12a", "--target", "bks", "-t", "30", "--strategy", "cpu-islands",
                                 "--islands", "2", "-q", "--json", "r.json", "--solution", "r.sln"]))
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["stop_reason"] == "target"
    assert data["best_known"] == 224416 == data["cost"] and data["gap_percent"] == 0.0
    assert "stopped     target" in out
    ev = json.loads(ok(runner.invoke(cli, ["evaluate", "tai12a", "r.sln", "--json"])))
    assert ev["cost"] == 224416 and ev["gap_percent"] == 0.0


def test_tabu_and_walk_islands_are_hidden_earlier_names_of_ls_islands(runner, tmp_path):
    common = ["solve", "gen:qap:12:5", "--sync", "-g", "2", "--seed", "3", "--strategy", "cpu-islands",
              "--islands", "2", "-q"]
    runs = {}
    for flag in ("--ls-islands", "--tabu-islands", "--walk-islands"):
        out = runner.invoke(cli, [*common, flag, "1", "--json", f"{flag[2:]}.json"])
        assert out.exit_code == 0, out.output
        runs[flag] = json.loads(Path(f"{flag[2:]}.json").read_text())
    assert [i["algorithm"] for i in runs["--ls-islands"]["islands"]] == ["GA (ux)", "tabu search"]
    for earlier in ("--tabu-islands", "--walk-islands"):
        assert runs[earlier]["cost"] == runs["--ls-islands"]["cost"]
        assert runs[earlier]["islands"] == runs["--ls-islands"]["islands"]
    help_text = runner.invoke(cli, ["solve", "--help"]).output
    assert "--ls-islands" in help_text and "--tabu-islands" not in help_text and "--walk-islands" not in help_text


@pytest.mark.parametrize("args", [["-g", "1_000"], ["-g", "\u0661\u0662"], ["--seed", "+1_0"], ["--population", "٣٠"]])
def test_integer_options_are_ascii_digits(monkeypatch, tmp_path, args):
    """Python's int() takes ``1_000`` and other scripts' digits; an option does not."""
    result = cpu_runner(monkeypatch, tmp_path).invoke(cli, ["solve", "gen:qap:12", *args])
    assert result.exit_code == 2 and "is not an integer" in result.output


def test_a_target_is_ascii_digits(monkeypatch, tmp_path):
    result = cpu_runner(monkeypatch, tmp_path).invoke(cli, ["solve", "gen:qap:12", "-g", "1", "--target", "1_0"])
    user_error(result, "--target must be a number or 'bks'")
