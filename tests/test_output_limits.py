"""A run under the limits of a real process still writes what it can, each output on its own:
closed standard streams (``>&-``, ``2>&-``), a file-size limit only one output exceeds
(``ulimit -f``), other runs writing the same files at once, a memory limit (``ulimit -v``) and
running out of memory. Processes are started for real, the limits set in the child."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from cliutil import QUICK, cpu_runner, write_dat
from fault_helpers import launch_failing_import

from metaheur import inputs
from metaheur.cli import cli

OUTPUTS = {"--json": "o.json", "--solution": "o.sln", "--stats": "o.csv"}
TIMEOUT = 240


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "metaheur.cli", *args]


def _solve(tmp_path: Path, *extra: str, preexec=None, **kwargs) -> subprocess.CompletedProcess:
    write_dat(tmp_path / "inst.dat", 8, seed=5)
    out = [item for option, path in OUTPUTS.items() for item in (option, path)]
    return subprocess.run(_command("solve", "inst.dat", *QUICK, *out, *extra), cwd=tmp_path, preexec_fn=preexec,
                          capture_output=True, text=True, timeout=TIMEOUT, **kwargs)


def _written(tmp_path: Path, options=tuple(OUTPUTS)) -> None:
    """Each output of ``options`` is there and whole; no temporary file is left."""
    for option in options:
        text = (tmp_path / OUTPUTS[option]).read_text()
        if option == "--json":
            assert json.loads(text)["cost"] > 0
        else:
            assert text.strip()
    assert not list(tmp_path.glob(".*.tmp"))


def _closing(*fds: int):
    return lambda: [os.close(fd) for fd in fds]


@pytest.mark.parametrize("fds", [(1,), (2,), (1, 2), (0, 1, 2)], ids=["stdout", "stderr", "both", "all"])
def test_closed_standard_streams_still_complete_the_run(tmp_path, fds):
    done = _solve(tmp_path, preexec=_closing(*fds))
    assert done.returncode == 0, done.stderr
    _written(tmp_path)


def test_json_on_a_closed_standard_output_fails_alone(tmp_path):
    write_dat(tmp_path / "inst.dat", 8, seed=5)
    done = subprocess.run(_command("solve", "inst.dat", *QUICK, "--json", "-", "--solution", "o.sln", "--stats",
                                   "o.csv"), cwd=tmp_path, preexec_fn=_closing(1), capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == "metaheur: error: --json -: standard output is closed"
    _written(tmp_path, ("--solution", "--stats"))


@pytest.mark.parametrize("beyond", [("--json",), tuple(OUTPUTS)], ids=["json-only", "all"])
def test_a_file_size_limit_fails_only_the_outputs_beyond_it(tmp_path, beyond):
    """A limit below the outputs of ``beyond`` and above the others: SIGXFSZ does not kill the
    run, each output beyond it is named in one line, the others are written."""
    free = tmp_path / "free"
    free.mkdir()
    assert _solve(free).returncode == 0
    sizes = {option: (free / path).stat().st_size for option, path in OUTPUTS.items()}
    below = max((size for option, size in sizes.items() if option not in beyond), default=0)
    above = min(sizes[option] for option in beyond)
    assert below < above, sizes
    limit = (below + above) // 2

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = _solve(tmp_path, preexec=limited)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    for option in beyond:
        assert f"metaheur: error: {option} {OUTPUTS[option]}: File too large" in done.stderr
        assert not (tmp_path / OUTPUTS[option]).exists()
    _written(tmp_path, [o for o in OUTPUTS if o not in beyond])


def test_runs_writing_the_same_outputs_at_once_all_succeed(tmp_path):
    write_dat(tmp_path / "inst.dat", 8, seed=5)
    out = [item for option, path in OUTPUTS.items() for item in (option, path)]
    runs = [subprocess.Popen(_command("solve", "inst.dat", *QUICK, "-q", *out), cwd=tmp_path, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
    for run in runs:
        _, err = run.communicate(timeout=TIMEOUT)
        assert run.returncode == 0, err
    _written(tmp_path)


MEMORY_LIMIT = 2_000_000 * 1024  # ulimit -v 2000000, as batch systems set it


def _memory_limited():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@pytest.fixture(scope="module")
def memory_limit_usable():
    probe = subprocess.run([sys.executable, "-c", "import metaheur.cli"], preexec_fn=_memory_limited,
                           capture_output=True, timeout=TIMEOUT)
    if probe.returncode != 0:
        pytest.skip("the interpreter cannot start metaheur under a 2 GB address-space limit here")


@pytest.mark.parametrize("command", ["solve", "evaluate", "config", "initial"])
def test_a_memory_limit_reads_small_inputs(tmp_path, memory_limit_usable, command):
    write_dat(tmp_path / "inst.dat", 8, seed=5)
    (tmp_path / "start.sln").write_text(" ".join(map(str, range(1, 9))) + "\n")
    (tmp_path / "run.toml").write_text("[solve]\nseed = 2\n")
    args = {"solve": ["solve", "inst.dat", *QUICK, "--json", "o.json"],
            "evaluate": ["evaluate", "inst.dat", "start.sln"],
            "config": ["solve", "inst.dat", *QUICK, "--config", "run.toml", "--json", "o.json"],
            "initial": ["solve", "inst.dat", *QUICK, "--initial", "start.sln", "--json", "o.json"]}[command]
    done = subprocess.run(_command(*args), cwd=tmp_path, preexec_fn=_memory_limited, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("kind", sorted(inputs.LIMITS))
def test_a_read_allocates_what_the_file_holds(tmp_path, kind):
    path = tmp_path / "small"
    path.write_bytes(b"7 " * 2000)
    tracemalloc.start()
    try:
        assert inputs.read_bytes(path, kind) == b"7 " * 2000
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


@pytest.mark.parametrize("where", ["reading the instance", "running", "writing the JSON"])
def test_running_out_of_memory_is_one_line(monkeypatch, tmp_path, where):
    """A MemoryError before the run is one line and status 2; one while an output is written fails
    that output alone (status 1, the others written)."""
    from metaheur import cli as cli_module
    from metaheur import solver
    from metaheur.result import Result

    def no_memory(*args, **kwargs):
        raise MemoryError

    target = {"reading the instance": (cli_module, "_load_all"), "running": (solver, "_run"),
              "writing the JSON": (Result, "to_json")}[where]
    monkeypatch.setattr(*target, no_memory)
    runner = cpu_runner(monkeypatch, tmp_path)
    write_dat(tmp_path / "inst.dat", 8, seed=5)
    out = [item for option, path in OUTPUTS.items() for item in (option, path)]
    result = runner.invoke(cli, ["solve", "inst.dat", *QUICK, "-q", *out])
    err = result.stderr.strip()
    assert "Traceback" not in result.output and "\n" not in err, result.output
    if where == "writing the JSON":
        assert result.exit_code == 1 and err == "metaheur: error: --json o.json: out of memory"
        _written(tmp_path, ("--solution", "--stats"))
    else:
        assert result.exit_code == 2 and err.startswith("metaheur: error: out of memory")


def test_out_of_memory_while_the_command_starts_is_one_line(monkeypatch, capsys):
    assert launch_failing_import(monkeypatch, MemoryError) == 2
    assert capsys.readouterr().err.startswith("metaheur: error: out of memory while starting")
