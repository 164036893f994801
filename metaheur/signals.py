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

from metaheur.engine import compile_run

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


def forget() -> None:
    """Start a command with no stop signal received (one process may run several: the tests)."""
    _received.clear()


def received() -> bool:
    """Whether a stop signal came to this process."""
    return bool(_received)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Run the block (writing a run's results: its last checkpoint, its outputs) with stop
    signals noted rather than acted on, so that what the run found is written: the first lets the
    block end (the caller then exits with :func:`exit_status`), a second interrupts it
    (KeyboardInterrupt: an output that blocks, a FIFO without a reader, is abandoned)."""
    count = [0]

    def handler(signum: int, frame) -> None:
        note(signum)
        count[0] += 1
        if count[0] > 1:
            raise KeyboardInterrupt

    with handling(handler):
        yield


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


def block_in_this_thread() -> None:
    """Block the stop signals in the calling thread (not the main one: Python runs handlers
    there), so that the processes it starts inherit them blocked: a signal to the whole process
    group (a terminal, a scheduler) then reaches the run's process alone, which stops the run, and
    not its worker processes or their resource trackers mid-epoch."""
    if hasattr(signal, "pthread_sigmask") and threading.current_thread() is not threading.main_thread():
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Run the block (starting helper processes) with the stop signals held back in this thread:
    the processes it starts inherit them blocked; a signal that comes meanwhile is delivered
    (not lost) when the block ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


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
        compile_run.end_all()  # a kernel build under way goes with this process
        os._exit(1)

    threading.Thread(target=watch, name="metaheur-parent-watch", daemon=True).start()
