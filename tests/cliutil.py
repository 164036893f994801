"""Helpers of the command-line tests (importable as ``cliutil``: pytest puts tests/ on the path)."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

from click.testing import CliRunner

from metaheur import solver as solver_module
from metaheur.devices import cpu_device
from metaheur.problems import random_qap

# a short synchronous run on one core
QUICK = ["-g", "2", "--sync", "--epoch-generations", "1", "--strategy", "cpu-serial", "--population", "6",
         "--offspring", "3", "--ls-budget", "40", "--seed", "1"]


def cpu_runner(monkeypatch, tmp_path: Path) -> CliRunner:
    """A CliRunner in tmp_path on a machine without a GPU (as far as the planner knows)."""
    monkeypatch.setattr(solver_module, "available_devices", lambda: [cpu_device()])
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def ok(result) -> str:
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


def user_error(result, *fragments: str) -> str:
    """Exit status 2 with one line on stderr, no traceback."""
    assert result.exit_code == 2, (result.output, result.exception)
    err = result.stderr.strip()
    assert err.startswith("metaheur: error: "), err
    assert "\n" not in err and "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in err, err
    return err


def write_dat(path: Path, n: int, seed: int) -> Path:
    q = random_qap(n, seed=seed)
    rows = [str(n)] + [" ".join(map(str, r)) for r in q.flow] + [""] + [" ".join(map(str, r)) for r in q.distance]
    path.write_text("\n".join(rows) + "\n")
    return path


@contextlib.contextmanager
def fifo(path: Path):
    """A FIFO at ``path``; while the block runs, a watchdog opens its write end (and closes it at
    once) whenever a reader waits on it, so that code which wrongly opens it reads nothing and
    goes on instead of waiting for ever."""
    os.mkfifo(path)
    done = threading.Event()

    def unblock() -> None:
        while not done.wait(0.05):
            with contextlib.suppress(OSError):  # ENXIO: no reader waits
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    watchdog = threading.Thread(target=unblock, daemon=True)
    watchdog.start()
    try:
        yield path
    finally:
        done.set()
        watchdog.join()
