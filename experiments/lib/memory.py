"""Peak memory of the processes a benchmark starts: the largest sum, over the benchmark's
descendant processes, of their proportional set sizes (PSS: shared pages split between the
processes that map them, so worker processes sharing an instance are not counted twice), read
from /proc/PID/smaps_rollup (Linux) by a sampling thread."""

from __future__ import annotations

import os
import threading
from pathlib import Path

PROC = Path("/proc")


def descendants(root: int) -> list[int]:
    """Process ids below ``root`` (children, their children, ...), from /proc/PID/stat."""
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def pss_bytes(pid: int) -> int:
    """Proportional set size of one process in bytes (0 once it has ended)."""
    try:
        for line in (PROC / str(pid) / "smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return 1024 * int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class PeakMemory:
    """``with PeakMemory() as peak: ...`` samples the summed PSS of this process's descendants
    every ``interval`` seconds; ``peak.gib`` is the largest sum (``None`` where /proc has no
    smaps_rollup)."""

    def __init__(self, interval: float = 0.5):
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self.available = (PROC / "self" / "smaps_rollup").is_file()

    def _sample(self) -> None:
        root = os.getpid()
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(pss_bytes(pid) for pid in descendants(root)))
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakMemory:
        if self.available:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self.available:
            self._thread.join()

    @property
    def gib(self) -> float | None:
        return round(self.peak / 2**30, 2) if self.available else None
