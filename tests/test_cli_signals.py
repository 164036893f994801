"""Stop signals at the command line (docs/long-runs.md): SIGTERM and SIGHUP are a Ctrl-C, the
outputs are written and the exit status says which signal; no process outlives a run, however its
process ends."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from fault_helpers import launch_failing_import, live_processes

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


#: the console script's entry point (its stop signals handled from the first import on)
CONSOLE_SCRIPT = [sys.executable, "-c", "import _metaheur_launch; _metaheur_launch.main()"]


def _start(tmp_path, *args: str, env: dict | None = None, command: list[str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([*(command or [sys.executable, "-m", "metaheur.cli"]), "solve", *args], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=os.environ | (env or {}))


def _descendants(pid: int) -> set[int]:
    """Every live (not zombie) process below ``pid``."""
    children: dict[int, list[int]] = {}
    for child, (parent, _) in live_processes().items():
        children.setdefault(parent, []).append(child)
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.add(pid)
        except OSError:
            pass
    return alive


def _wait_for_workers(proc: subprocess.Popen, count: int, timeout: float = 60.0) -> set[int]:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        found = _descendants(proc.pid)
        if len(found) >= count:
            return found
        time.sleep(0.1)
    raise AssertionError("the worker processes did not start")


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_stop_the_run_with_its_outputs_and_leave_no_process(tmp_path, signum, status):
    proc = _start(tmp_path, "gen:qap:40", "-t", "60", "--strategy", "cpu-islands", "--islands", "2",
                  "--json", "r.json", "--solution", "r.sln")
    workers = _wait_for_workers(proc, 2)
    time.sleep(3.0)  # the islands are searching
    t0 = time.monotonic()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 5.0
    assert proc.returncode == status, err
    assert "Traceback" not in err
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["stop_reason"] == "interrupted" and (tmp_path / "r.sln").is_file()
    time.sleep(1.0)
    assert not _alive(workers)


def test_workers_end_when_the_run_is_killed(tmp_path):
    proc = _start(tmp_path, "gen:qap:40", "-t", "60", "--strategy", "cpu-islands", "--islands", "2", "-q")
    workers = _wait_for_workers(proc, 2)
    time.sleep(3.0)
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 5.0
    while _alive(workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(workers)


def _compiling(pid: int) -> bool:
    """Whether a C compiler runs below ``pid`` (a kernel being built for the CPU)."""
    for child in _descendants(pid):
        try:
            with open(f"/proc/{child}/comm") as f:
                if f.read().strip() in ("cc1plus", "g++", "gcc", "c++", "cc1", "as", "ld", "collect2"):
                    return True
        except OSError:
            continue
    return False


def test_ctrl_c_while_the_kernels_are_built_is_an_interruption(tmp_path):
    """A cold kernel cache: the first seconds build the kernels; Ctrl-C then ends the command with
    one line and status 130 (not click's "Aborted!" and 1) saying that there is no solution to
    write."""
    proc = _start(tmp_path, "gen:qap:30", "-t", "30", "--strategy", "cpu-serial", "-q", "--json", "r.json",
                  env={"METAHEUR_CACHE_DIR": str(tmp_path / "cache")})
    deadline = time.monotonic() + 60.0  # the signal while a compiler runs, however fast the machine
    while not _compiling(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _compiling(proc.pid), "no kernel build was seen"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Aborted" not in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("metaheur: interrupted before the run of gen-qap-30")
    assert err.strip().endswith("had a solution: --json not written") and not (tmp_path / "r.json").exists()


def _mentioning(text: str) -> set[int]:
    """Every live process whose command line mentions ``text``."""
    return _alive({int(entry) for entry in os.listdir("/proc")
                   if entry.isdigit() and text.encode() in _cmdline(int(entry))})


SIGNAL_KINDS = {  # how the run is stopped: the signals sent, 0.1 s apart, and the exit status
    "SIGINT": ([signal.SIGINT], 130), "SIGTERM": ([signal.SIGTERM], 143), "SIGHUP": ([signal.SIGHUP], 129),
    "SIGINT twice": ([signal.SIGINT, signal.SIGINT], 130),
    "SIGTERM then SIGINT": ([signal.SIGTERM, signal.SIGINT], 143),
}


def _stop(proc: subprocess.Popen, kind: str) -> str:
    """Send the signals of ``kind``; the stderr of the ended command, checked for its status."""
    sent, status = SIGNAL_KINDS[kind]
    for k, signum in enumerate(sent):
        if k:
            time.sleep(0.1)
        proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    return err


@pytest.mark.parametrize("strategy", ["cpu-serial", "cpu-islands"])
@pytest.mark.parametrize("kind", sorted(SIGNAL_KINDS))
def test_signals_while_the_kernels_are_built_leave_no_compiler_and_no_temporary_file(tmp_path, kind, strategy):
    """A cold kernel cache: signals while a compiler runs end the command with one line; no
    compiler process (cc1plus ...) runs on and no temporary file or folder of the build is left."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    islands = ["--islands", "2"] if strategy == "cpu-islands" else []
    proc = _start(tmp_path, "gen:qap:30", "-t", "30", "--strategy", strategy, *islands, "-q",
                  env={"METAHEUR_CACHE_DIR": str(tmp_path / "cache"), "TMPDIR": str(scratch)})
    deadline = time.monotonic() + 60.0
    while not _mentioning(str(scratch)) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _mentioning(str(scratch)), "no kernel build was seen"
    err = _stop(proc, kind)
    assert err.strip().splitlines()[-1].startswith("metaheur:")
    deadline = time.monotonic() + 10.0  # a compiler is killed and waited for before the command ends
    while _mentioning(str(scratch)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _mentioning(str(scratch))
    assert list(scratch.iterdir()) == []


def test_ctrl_c_while_the_command_starts_is_one_line(monkeypatch, capsys):
    """The console script imports the command line (numpy, the solver) inside its handling of
    Ctrl-C: a Ctrl-C then is one line and status 130, not a traceback."""
    assert launch_failing_import(monkeypatch, KeyboardInterrupt) == 130
    assert capsys.readouterr().err == "metaheur: interrupted\n"


def test_a_signal_while_the_outputs_are_written_writes_the_others(tmp_path):
    """The search has ended and the JSON waits for a FIFO's reader: the first SIGTERM lets the
    writing go on, the second gives up the FIFO; the solution file is written, exit 143."""
    os.mkfifo(tmp_path / "out.fifo")
    proc = _start(tmp_path, "gen:qap:12", "-g", "2", "--strategy", "cpu-serial", "-q", "--json", "out.fifo",
                  "--solution", "r.sln")
    deadline = time.monotonic() + 60
    while not (tmp_path / "r.sln").exists() and time.monotonic() < deadline:  # files before FIFOs
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    assert proc.poll() is None  # still waiting for the FIFO's reader
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert (tmp_path / "r.sln").is_file() and "out.fifo: interrupted" in err and "Traceback" not in err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_the_process_group_is_not_a_worker_fault(tmp_path, signum):
    """SIGTERM or SIGHUP to the whole group (a scheduler, a closed terminal) reaches the workers
    too: they leave it to the run, which stops with its islands' results, without a rerun."""
    proc = subprocess.Popen([sys.executable, "-m", "metaheur.cli", "solve", "gen:qap:40", "-t", "60", "--strategy",
                             "cpu-islands", "--islands", "2", "-q", "--json", "r.json"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    _wait_for_workers(proc, 2)
    time.sleep(3.0)
    os.killpg(proc.pid, signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signum, err
    assert "worker failed" not in err and "Traceback" not in err
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["stop_reason"] == "interrupted" and result["generations"] > 0


def _left_behind(pids: set[int], scratch=None) -> tuple[set[int], list[str]]:
    """The processes of ``pids`` still alive and what is left in the run's ``scratch`` folder,
    after a few seconds' grace for processes that end themselves."""
    def left() -> list[str]:
        return [] if scratch is None else sorted(p.name for p in scratch.iterdir())

    deadline = time.monotonic() + 10.0
    while (_alive(pids) or left()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return _alive(pids), left()


@pytest.mark.parametrize("moment", ["startup", "search"])
@pytest.mark.parametrize("kind", sorted(SIGNAL_KINDS))
def test_signals_at_any_moment_leave_no_process_and_no_temporary_file(tmp_path, kind, moment):
    """One or several stop signals while the command starts or while its islands search: the
    documented status, no traceback, the outputs when a solution exists, and no process or
    temporary file of the run left (TMPDIR is the run's own here)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = _start(tmp_path, "gen:qap:40", "-t", "60", "--strategy", "cpu-islands", "--islands", "2", "-q",
                  "--json", "r.json", env={"TMPDIR": str(scratch)}, command=CONSOLE_SCRIPT)
    if moment == "startup":
        time.sleep(0.3)
        pids = _descendants(proc.pid)
    else:
        pids = _wait_for_workers(proc, 2)
        time.sleep(3.0)
        pids |= _descendants(proc.pid)
    _stop(proc, kind)
    if moment == "search":
        assert json.loads((tmp_path / "r.json").read_text())["stop_reason"] == "interrupted"
    alive, files = _left_behind(pids, scratch)
    assert not alive and files == []


def test_a_killed_run_leaves_nothing_once_the_next_run_has_started(tmp_path):
    """SIGKILL of the run's process: its workers end themselves; what it cannot remove (its run
    folder, joblib's memory-mapped instance in it) the next run on the machine removes."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {"TMPDIR": str(scratch)}
    proc = _start(tmp_path, "gen:lop:400", "-t", "60", "--strategy", "cpu-islands", "--islands", "2", "-q", env=env)
    workers = _wait_for_workers(proc, 2)
    time.sleep(3.0)
    workers |= _descendants(proc.pid)
    proc.kill()
    _, err = proc.communicate(timeout=30)
    assert err == ""
    assert [p.name.startswith(f"metaheur-run-{proc.pid}-") for p in scratch.iterdir()] == [True]
    following = _start(tmp_path, "gen:qap:12", "-g", "1", "--strategy", "cpu-islands", "--islands", "2", "-q",
                       env=env)
    _, err = following.communicate(timeout=120)
    assert following.returncode == 0, err
    alive, files = _left_behind(workers, scratch)
    assert not alive and files == []


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="dask.distributed is not installed")
@pytest.mark.parametrize("delay", [0.5, 1.0, 1.5, 2.5])
def test_ctrl_c_while_a_local_dask_cluster_starts_is_one_line(tmp_path, delay):
    """Ctrl-C while ``--dask-local`` starts its cluster (or soon after): one line, status 130,
    no traceback of Dask's closing at exit, and no process of the cluster left."""
    proc = _start(tmp_path, "gen:qap:20", "-t", "60", "--dask-local", "2", "-q", command=CONSOLE_SCRIPT)
    time.sleep(delay)
    pids = _descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    pids |= _descendants(proc.pid)
    alive, _ = _left_behind(pids)
    assert not alive


@pytest.mark.parametrize("instance", ["gen:qap:40", "gen:lop:400"])  # the LOP's matrix is memory-mapped
def test_sigkill_of_every_worker_is_one_line_and_the_run_goes_on(tmp_path, instance):
    """Every worker process killed mid-run: one warning line (the epoch is rerun), nothing from
    the resource trackers, and the run ends at its time limit with its outputs."""
    proc = _start(tmp_path, instance, "-t", "8", "--strategy", "cpu-islands", "--islands", "2", "-q",
                  "--json", "r.json", command=CONSOLE_SCRIPT)
    _wait_for_workers(proc, 2)
    time.sleep(3.0)
    workers = {pid for pid in _descendants(proc.pid) if b"popen_loky_posix" in _cmdline(pid)}
    assert len(workers) == 2
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert err.count("\n") == 1 and "a worker failed" in err, err
    assert json.loads((tmp_path / "r.json").read_text())["stop_reason"] == "time_limit"


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""
