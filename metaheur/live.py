"""What passes between a run's process and its islands while an epoch runs: the run's stop
request (the first Ctrl-C or SIGTERM) and each island's progress report (its best, the best
solution itself and counters), so that a long phase inside an epoch (a population being built, a
long epoch, a long kernel launch) can be stopped within a fraction of a second, shows progress,
and an island that does not come back in time still gives its best (docs/long-runs.md).

They pass through files in a folder of the run (:class:`Board`), which every process of the
machine can read: a ``stop`` page (one shared byte, mapped by every island's process), and per
island a report rewritten at most every :data:`REPORT_SECONDS` and its best solution, rewritten
when it improved. An island running an epoch (:func:`island_epoch`, in any process or thread)
polls the stop byte between kernel launches (:func:`stop_requested`, called by
:class:`~metaheur.search.batch.LaunchPacer` and between generations); a CPU kernel launch reads
the byte and the epoch's deadline itself between the steps of its searches
(:func:`launch_controls`, ``mh_time_up`` of kernels/engine/mh_cpu_shim.h). Islands on other
machines (a Dask cluster) do not see the folder: they stop and report at the epoch's end.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import mmap
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from metaheur import scratch

REPORT_SECONDS = 1.0  # wall time between two reports of an island
STOP_POLL_SECONDS = 0.05  # wall time between two looks at the stop byte
_STOP_BYTES = ctypes.sizeof(ctypes.c_int)  # the stop file: one int, small under any file-size limit


@dataclass(frozen=True)
class Report:
    """An island's progress as it last reported it (engine costs)."""

    best_cost: int | None
    generation: int
    ls_iterations: int


class Board:
    """The run's folder of stop request and reports (created here, removed by :meth:`close`;
    a killed run's by the next run, :func:`metaheur.scratch.sweep`); its worker processes'
    scratch (joblib's memory-mapped arrays) is in it too."""

    def __init__(self):
        self.folder = scratch.folder("run")
        with open(os.path.join(self.folder, "stop"), "wb") as f:
            f.write(bytes(_STOP_BYTES))

    def request_stop(self) -> None:
        """Ask every island to end its epoch now, keeping what it has (async-signal safe enough
        for a signal handler: one write to an open-by-path file)."""
        with contextlib.suppress(OSError):
            fd = os.open(os.path.join(self.folder, "stop"), os.O_WRONLY)
            try:
                os.pwrite(fd, b"\x01", 0)
            finally:
                os.close(fd)

    def reports(self) -> dict[int, Report]:
        """The latest report of every island that has reported (island index -> report)."""
        out: dict[int, Report] = {}
        try:
            names = os.listdir(self.folder)
        except OSError:
            return out
        for name in names:
            if name.startswith("island-") and name.endswith(".json"):
                with contextlib.suppress(OSError, ValueError, TypeError), \
                        open(os.path.join(self.folder, name)) as f:
                    data = json.load(f)
                    out[int(name[7:-5])] = Report(data["best_cost"], data["generation"], data["ls_iterations"])
        return out

    def best_solution(self, index: int) -> tuple[int, np.ndarray] | None:
        """(engine cost as tracked, solution) of the best solution island ``index`` reported, or
        None when it reported none."""
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            with open(os.path.join(self.folder, f"island-{index}.json")) as f:
                cost = json.load(f)["solution_cost"]
            if cost is not None:
                return int(cost), np.load(os.path.join(self.folder, f"best-{index}.npy"), allow_pickle=False)
        return None

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class _StopPage:
    """The run's stop byte mapped into this process (shared with every process of the run)."""

    def __init__(self, folder: str):
        with open(os.path.join(folder, "stop"), "r+b") as f:
            self.map = mmap.mmap(f.fileno(), _STOP_BYTES)
        self.flag = ctypes.c_int.from_buffer(self.map)

    def __bool__(self) -> bool:
        return self.map[0] != 0

    def address(self) -> int:
        return ctypes.addressof(self.flag)


_pages: dict[str, _StopPage] = {}


def _stop_page(folder: str) -> _StopPage | None:
    """The stop byte of the run of ``folder``, mapped once per process (the last few runs kept)."""
    page = _pages.get(folder)
    if page is None:
        try:
            page = _StopPage(folder)
        except (OSError, ValueError):
            return None
        if len(_pages) >= 4:
            del _pages[next(iter(_pages))]
        _pages[folder] = page
    return page


class _Epoch:
    """One island's epoch as seen by the island side: its state (mutated in place), folder, stop
    byte and deadline (a ``time.perf_counter`` value or None)."""

    def __init__(self, folder: str, index: int, state, deadline: float | None):
        self.folder, self.index, self.state, self.deadline = folder, index, state, deadline
        self.page = _stop_page(folder)
        self.stopped, self.reporting = False, True
        self.last_poll, self.last_report = float("-inf"), time.perf_counter()  # the first poll looks
        self.solution_cost: int | None = None  # the cost of the solution last written

    def poll(self) -> bool:
        now = time.perf_counter()
        if not self.stopped and now - self.last_poll >= STOP_POLL_SECONDS:
            self.last_poll = now
            self.stopped = bool(self.page)
        return self.stopped

    def report(self, search: Callable[[], tuple] | None, final: bool = False) -> None:
        now = time.perf_counter()
        if not self.reporting or (now - self.last_report < REPORT_SECONDS and not final):
            return
        self.last_report = now
        st = self.state
        best, iterations, solution = st.best_cost, st.ls_iterations, st.best
        if search is not None:  # a batch of searches under way: its best (and solution) and iterations so far
            batch_best, batch_iterations, *batch_solution = search()
            iterations += batch_iterations
            if batch_best is not None and (best is None or batch_best < best):
                best, solution = batch_best, (batch_solution[0] if batch_solution else None)
        try:
            if solution is not None and best is not None and best != self.solution_cost:
                self._write(f"best-{self.index}.npy", lambda f: np.save(f, np.asarray(solution)))
                self.solution_cost = best
            data = {"best_cost": None if best is None else int(best), "generation": int(st.generation),
                    "ls_iterations": int(iterations), "solution_cost": self.solution_cost}
            self._write(f"island-{self.index}.json", lambda f: f.write(json.dumps(data).encode()))
        except OSError:
            self.reporting = False  # the folder is gone (the run ended)

    def _write(self, name: str, write: Callable) -> None:
        path = os.path.join(self.folder, name)
        with open(path + ".tmp", "wb") as f:
            write(f)
        os.replace(path + ".tmp", path)


_local = threading.local()


@contextlib.contextmanager
def island_epoch(folder: str | None, index: int, state, deadline: float | None = None) -> Iterator[None]:
    """The calling thread runs island ``index``'s epoch on ``state`` with the run's ``folder``
    (None, or a folder this machine does not have: no stop request, no reports) until
    ``deadline`` (a ``time.perf_counter`` value: the run's time limit; None without one)."""
    previous = getattr(_local, "epoch", None)
    _local.epoch = _Epoch(folder, index, state, deadline) if folder and os.path.isdir(folder) else None
    try:
        yield
    finally:
        _local.epoch = previous


def stop_requested() -> bool:
    """Whether the run asked the island of this thread to end its epoch (polled at most every
    :data:`STOP_POLL_SECONDS`; False outside an epoch)."""
    epoch = getattr(_local, "epoch", None)
    return epoch is not None and epoch.poll()


def time_up() -> bool:
    """Whether the island of this thread should stop now: the run asked it to, or its epoch's
    deadline has passed (for host loops inside a step, such as a construction)."""
    epoch = getattr(_local, "epoch", None)
    if epoch is None:
        return False
    return epoch.poll() or (epoch.deadline is not None and time.perf_counter() >= epoch.deadline)


def launch_controls() -> tuple[float, int | None]:
    """What a CPU kernel launch of this thread's island reads between the steps of its searches:
    the deadline in ``CLOCK_MONOTONIC`` seconds (0: none) and the address of the run's stop byte
    (None outside an epoch)."""
    epoch = getattr(_local, "epoch", None)
    if epoch is None:
        return 0.0, None
    deadline = 0.0 if epoch.deadline is None else max(1e-9, time.monotonic() + epoch.deadline - time.perf_counter())
    return deadline, None if epoch.page is None else epoch.page.address()


def beat(search: Callable[[], tuple] | None = None, final: bool = False) -> None:
    """Report this thread's island when :data:`REPORT_SECONDS` have passed since its last report
    (``final``: now, at the epoch's end); ``search``: the running batch's (best cost, iterations
    so far[, best solution]), added to the island's."""
    epoch = getattr(_local, "epoch", None)
    if epoch is not None:
        epoch.report(search, final)
