"""Benchmark tables longer than a session, made in parts (docs/development.md, "Tables made in
parts"): every run is one row of a runs table, with the load average at its start, the commit
it ran and the CPU it ran on (a table made over several sessions may span machines), written out
as soon as the run ends; ``--resume`` reads that table back and runs only the rows it lacks;
``--lock FILE`` holds an exclusive flock on FILE during each run, so that the runs of several
scripts on one machine never overlap. A summary lists every cell of the full design, those
without runs as ``missing``.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
from collections.abc import Iterator
from pathlib import Path

from lib.report import commit, cpu_model


@contextlib.contextmanager
def held(path: str | None) -> Iterator[None]:
    """An exclusive flock on ``path`` for the block (nothing without a path)."""
    if path is None:
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_stamp() -> dict[str, str]:
    """What every run of one call records beside its load average: the checkout's commit and the
    CPU model (read once a call)."""
    return {"commit": commit(), "cpu": cpu_model()}


def read_runs(path: Path) -> list[dict[str, str]]:
    """The rows of a runs table's CSV written before (``#`` comment lines skipped; none when the
    file is absent), every value a string."""
    if not path.is_file():
        return []
    with open(path, newline="") as handle:
        return list(csv.DictReader(line for line in handle if not line.startswith("#")))


def cell_status(done: int, planned: int) -> str:
    """``ok`` for a cell with all its runs, ``missing`` for one without any, else ``partial``."""
    return "ok" if done >= planned else "missing" if done == 0 else "partial"
