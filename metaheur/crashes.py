"""Processes that crash: native code (most often a problem's device code) killed by a signal of
a fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT). A worker process that crashes is not rerun
(the code would crash again); the run says so in one line (docs/long-runs.md, "Faults"). The
command line's own process, which runs the device code itself with ``--strategy cpu-serial``,
cannot go on after a crash: while it solves, a crash there prints one line and exits with status 2
(:func:`crash_line`, a signal handler of the CPU build's compiler) instead of dying silently; and
it ends without Python's finalization where a thread it gave up is still inside device code
(:func:`exit_process`), since finalization frees what that code reads (a crash at exit).
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import re
import sys
import threading
from collections.abc import Iterator

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


#: the threads of a run's process that run device code and may be given up inside it (names' starts)
NATIVE_THREADS = ("metaheur-island-", "metaheur-cost-probe")


def exit_process(status: int) -> None:
    """End the process with ``status``: ``sys.exit``, or, while a thread given up inside device code
    (:data:`NATIVE_THREADS`) still runs, ``os._exit`` after flushing the standard streams."""
    if any(t.is_alive() and t.name.startswith(NATIVE_THREADS) for t in threading.enumerate()):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(status)
    sys.exit(status)


#: the handler of :func:`crash_line`: writes its line (async-signal-safe ``write``) and ends the process
_CRASH_LINE_SOURCE = r"""
#include <signal.h>
#include <string.h>
#include <unistd.h>
static char mh_prefix[512], mh_suffix[1024];
static struct sigaction mh_previous[4];
static const int mh_signals[4] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
static const char *const mh_names[4] = {"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL"};
static void mh_say(const char *s) { ssize_t r = write(2, s, strlen(s)); (void)r; }
static void mh_on_crash(int sig) {
  mh_say(mh_prefix);
  for (int k = 0; k < 4; ++k) if (mh_signals[k] == sig) mh_say(mh_names[k]);
  mh_say(mh_suffix);
  _exit(2);
}
extern "C" int mh_crash_line(const char *prefix, const char *suffix, int on) {
  if (!on) {
    for (int k = 0; k < 4; ++k) sigaction(mh_signals[k], &mh_previous[k], NULL);
    return 0;
  }
  strncpy(mh_prefix, prefix, sizeof mh_prefix - 1);
  strncpy(mh_suffix, suffix, sizeof mh_suffix - 1);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = mh_on_crash;
  sigemptyset(&sa.sa_mask);
  for (int k = 0; k < 4; ++k) if (sigaction(mh_signals[k], &sa, &mh_previous[k]) != 0) return -1;
  return 0;
}
"""


@contextlib.contextmanager
def crash_line() -> Iterator[None]:
    """Run the block (a command's solve) with a crash of this process (SIGSEGV, SIGBUS, SIGFPE,
    SIGILL) told in one line on stderr and exit status 2; the previous handlers (Python's
    faulthandler's) after. Without a C compiler the block runs unchanged."""
    from metaheur.engine import cpu_build
    from metaheur.engine.source import KernelSource

    try:
        library = cpu_build.build(KernelSource("crash_line.cu", _CRASH_LINE_SOURCE, {}, {}), (), False).library
    except (MetaheurError, OSError):
        yield
        return
    install = library.mh_crash_line
    install.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    prefix = b"metaheur: error: the run's process crashed ("
    suffix = (b") in native code, most likely the problem's device code run in this process (--strategy cpu-serial): "
              b"nothing could be written; worker processes report a crash and keep the best found, and "
              b"check_problem(problem) finds the function\n")
    installed = install(prefix, suffix, 1) == 0
    try:
        yield
    finally:
        if installed:
            install(prefix, suffix, 0)
