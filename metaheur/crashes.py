"""Worker processes that crash: native code (most often a problem's device code) killed by a
signal of a fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT). Such a worker is not rerun (the
code would crash again); the run says so in one line (docs/long-runs.md, "Faults").
"""

from __future__ import annotations

import faulthandler
import os
import re

from metaheur.errors import MetaheurError

#: the signals of a crash of native code (loky names them in its error: "SIGSEGV(-11)")
CRASH_SIGNALS = ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT")


class WorkerCrash(MetaheurError):
    """A worker process crashed (:func:`crash_error`)."""


def crash_error(exc: BaseException, what: str) -> WorkerCrash | None:
    """The one-line error of a worker process that crashed (killed by one of
    :data:`CRASH_SIGNALS`) while it ran ``what``, or None when ``exc`` is no such crash."""
    found = [name for name in re.findall(r"\b(SIG[A-Z]+)\(-\d+\)", str(exc)) if name in CRASH_SIGNALS]
    if not found:
        return None
    return WorkerCrash(f"the problem's device code crashed ({found[0]}) in a worker process during {what} "
                       "(check_problem(problem) finds the function; PYTHONFAULTHANDLER=1 shows the worker's stack)")


def quiet_crashes() -> None:
    """In a worker process: a crash is the run's one line (:func:`crash_error`), not loky's dump
    of the Python stack on stderr, unless PYTHONFAULTHANDLER asks for the dump (as loky reads it)."""
    if "PYTHONFAULTHANDLER" not in os.environ:
        faulthandler.disable()
