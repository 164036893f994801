"""Signals that end a run: Ctrl-C (SIGINT), SIGTERM (batch schedulers, ``kill``) and SIGHUP (a
closed terminal) are one request to stop, handled alike (docs/long-runs.md): the first ends the
run at once with its best solution, the second stops waiting for the islands. The exit status
says which signal it was: 130, 143 or 129 (128 + the signal's number).

A worker process of a run watches the run's process and ends itself when that process is gone,
however it ended (SIGKILL included), so that no process outlives a run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator

STOP_SIGNALS = tuple(s for s in (signal.SIGINT, getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None))
                     if s is not None)
PARENT_POLL_SECONDS = 0.25  # how often a worker looks whether the run's process is still there

_received: list[int] = []  # the stop signals this process received, in order
_watching = False


def note(signum: int) -> None:
    """Remember that ``signum`` asked this process to stop (for :func:`exit_status`)."""
    _received.append(signum)


def exit_status() -> int:
    """The exit status of a run that a signal stopped: 128 + the first stop signal's number (130
    for Ctrl-C, also when no signal was recorded)."""
    return 128 + (_received[0] if _received else signal.SIGINT)


def interrupt(signum: int, frame) -> None:
    """The handler outside a run (start-up, reading files, writing outputs): any stop signal is
    a Ctrl-C (KeyboardInterrupt)."""
    note(signum)
    raise KeyboardInterrupt


@contextlib.contextmanager
def handling(handler: Callable[[int, object], None]) -> Iterator[None]:
    """Run the block with ``handler`` for every stop signal (in the main thread only: elsewhere
    Python cannot install handlers, and the block runs unchanged); the previous handlers after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def watch_parent(parent_pid: int) -> None:
    """In a worker process of the run whose process is ``parent_pid``: end this process as soon as
    that one is gone (its own parent changes), once per process. A worker started by something
    else (a Dask nanny) is left alone: its parent looks after it."""
    global _watching
    if _watching or os.getppid() != parent_pid or os.getpid() == parent_pid:
        return
    _watching = True

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="metaheur-parent-watch", daemon=True).start()
