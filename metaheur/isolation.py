"""A run's helper processes (loky's worker processes and its resource tracker, a local Dask
cluster's workers) never import from the working folder: a file there named like a standard or
installed module (``json.py``, ``zipfile.py``, ``signal.py``, ``numpy.py``) is not what they import.

Two things put the working folder first on a Python process's ``sys.path``: the interpreter
itself for ``python -m`` and ``python -c`` (how loky and multiprocessing start their processes),
which ``PYTHONSAFEPATH`` turns off (Python 3.11 on), and the ``sys.path`` that the run's process
hands them, which keeps the working folder (a user's ``module:Class`` imports from it) but after
every other entry. Their resource trackers print nothing (:func:`quiet_resource_trackers`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

SAFE_PATH = "PYTHONSAFEPATH"


def working_folder_last() -> None:
    """Move the working folder's entries of ``sys.path`` (``''``, ``'.'``, its path) after the
    others, keeping them: what the standard library or an installed package names comes from
    there, a user's own module still from the working folder."""
    here = os.getcwd()
    local = [p for p in sys.path if os.path.abspath(p or os.curdir) == here]
    if local:
        sys.path[:] = [p for p in sys.path if p not in local] + local


def quiet_resource_trackers() -> None:
    """Start the resource trackers of this process (loky's and multiprocessing's, once per
    process; they remove the semaphores and memory-mapped files a killed process leaves) with
    their stderr on the null device: what they print (warnings of the leaks they clean up, the
    KeyError of a resource a killed worker never registered) is no message of the run's. Called
    with the stop signals held (:func:`metaheur.signals.held`), so that they inherit them
    blocked, as the worker processes do."""
    from multiprocessing import resource_tracker as mp_tracker

    from joblib.externals.loky.backend import resource_tracker as loky_tracker

    sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        for tracker in (loky_tracker, mp_tracker):
            tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


@contextlib.contextmanager
def isolated_helpers() -> Iterator[None]:
    """Run the block (which starts the run's helper processes, also later ones that replace a
    lost worker) with the working folder last on ``sys.path`` and ``PYTHONSAFEPATH`` set; the
    environment as it was after."""
    working_folder_last()
    before = os.environ.get(SAFE_PATH)
    os.environ[SAFE_PATH] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(SAFE_PATH, None)
        else:
            os.environ[SAFE_PATH] = before
