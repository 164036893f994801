"""Running a compiler (gcc for the CPU build, nvcc) so that nothing of it outlives its build: it
runs in a process group of its own, with ``TMPDIR`` the build's private folder (its temporary
files, ``/tmp/cc*.s``, go there and are removed with it); an interruption (Ctrl-C, SIGTERM, the
run's process ending with compilers still running in its threads, a worker whose run is gone)
kills the whole group (the driver and ``cc1plus``, ``as``, ``ld``) and waits for it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import threading

_running: dict[int, tuple[subprocess.Popen, str]] = {}  # process group -> its compiler and folder, while it runs
_lock = threading.Lock()


def run(cmd: list[str], folder: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run ``cmd`` with ``folder`` as its ``TMPDIR``; its output captured as text. Should this
    process end while it runs (:func:`end_all`), ``folder`` is removed with it."""
    env = os.environ | {"TMPDIR": folder}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    with _lock:
        _running[proc.pid] = (proc, folder)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:  # KeyboardInterrupt, a time-out: the whole group goes, now
        _end(proc)
        raise
    finally:
        with _lock:
            _running.pop(proc.pid, None)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _end(proc: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.communicate(timeout=10)


def end_all() -> None:
    """Kill every compiler this process still runs, with its group, wait for them and remove
    their folders (at exit, with builds left in threads, or before a worker process whose run is
    gone ends itself)."""
    with _lock:
        running = list(_running.values())
        _running.clear()
    for proc, folder in running:
        _end(proc)
        shutil.rmtree(folder, ignore_errors=True)


atexit.register(end_all)
