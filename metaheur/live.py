"""What passes between a run's process and its islands while an epoch runs: the run's stop
request (the first Ctrl-C) and each island's progress report (its best and counters), so that a
long phase inside an epoch (a population being built, a long epoch) can be stopped within a
fraction of a second and shows progress (docs/long-runs.md).

They pass through files in a folder of the run (:class:`Board`), which every process of the
machine can read: a ``stop`` file, and one report per island rewritten at most every
:data:`REPORT_SECONDS`. An island running an epoch (:func:`island_epoch`, in any process or
thread) polls the stop file between kernel launches (:func:`stop_requested`, called by
:class:`~metaheur.search.batch.LaunchPacer` and between generations) and reports
(:func:`beat`). Islands on other machines (a Dask cluster) do not see the folder: they stop and
report at the epoch's end, as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

REPORT_SECONDS = 1.0  # wall time between two reports of an island
STOP_POLL_SECONDS = 0.05  # wall time between two looks at the stop file


@dataclass(frozen=True)
class Report:
    """An island's progress as it last reported it (engine costs)."""

    best_cost: int | None
    generation: int
    ls_iterations: int


class Board:
    """The run's folder of stop request and reports (created here, removed by :meth:`close`)."""

    def __init__(self):
        self.folder = tempfile.mkdtemp(prefix="metaheur-run-")

    def request_stop(self) -> None:
        """Ask every island to end its epoch now, keeping what it has."""
        with contextlib.suppress(OSError):
            open(os.path.join(self.folder, "stop"), "w").close()

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
                    out[int(name[7:-5])] = Report(**json.load(f))
        return out

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class _Epoch:
    """One island's epoch as seen by the island side: its state (mutated in place) and folder."""

    def __init__(self, folder: str, index: int, state):
        self.folder, self.index, self.state = folder, index, state
        self.stopped, self.reporting = False, True
        self.last_poll, self.last_report = float("-inf"), time.perf_counter()  # the first poll looks

    def poll(self) -> bool:
        now = time.perf_counter()
        if not self.stopped and now - self.last_poll >= STOP_POLL_SECONDS:
            self.last_poll = now
            self.stopped = os.path.exists(os.path.join(self.folder, "stop"))
        return self.stopped

    def report(self, search: Callable[[], tuple[int | None, int]] | None) -> None:
        now = time.perf_counter()
        if not self.reporting or now - self.last_report < REPORT_SECONDS:
            return
        self.last_report = now
        st = self.state
        best, iterations = st.best_cost, st.ls_iterations
        if search is not None:  # a batch of searches under way: its best and iterations so far
            batch_best, batch_iterations = search()
            iterations += batch_iterations
            if batch_best is not None and (best is None or batch_best < best):
                best = batch_best
        path = os.path.join(self.folder, f"island-{self.index}.json")
        data = {"best_cost": None if best is None else int(best), "generation": int(st.generation),
                "ls_iterations": int(iterations)}
        try:
            with open(path + ".tmp", "w") as f:
                json.dump(data, f)
            os.replace(path + ".tmp", path)
        except OSError:
            self.reporting = False  # the folder is gone (the run ended)


_local = threading.local()


@contextlib.contextmanager
def island_epoch(folder: str | None, index: int, state) -> Iterator[None]:
    """The calling thread runs island ``index``'s epoch on ``state`` with the run's ``folder``
    (None, or a folder this machine does not have: no stop request, no reports)."""
    previous = getattr(_local, "epoch", None)
    _local.epoch = _Epoch(folder, index, state) if folder and os.path.isdir(folder) else None
    try:
        yield
    finally:
        _local.epoch = previous


def stop_requested() -> bool:
    """Whether the run asked the island of this thread to end its epoch (polled at most every
    :data:`STOP_POLL_SECONDS`; False outside an epoch)."""
    epoch = getattr(_local, "epoch", None)
    return epoch is not None and epoch.poll()


def beat(search: Callable[[], tuple[int | None, int]] | None = None) -> None:
    """Report this thread's island when :data:`REPORT_SECONDS` have passed since its last report;
    ``search``: the running batch's (best cost, iterations so far), added to the island's."""
    epoch = getattr(_local, "epoch", None)
    if epoch is not None:
        epoch.report(search)
