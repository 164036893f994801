"""The standard streams of a command. One that was closed when it started (``>&-``, ``2>&-``)
is opened on ``/dev/null`` before anything else is opened: no file the run opens takes its
number (a worker process would write its lines into that file), every write to it goes nowhere,
and the run still completes and writes its files. An output asked for on standard output
(``--json -``) when it was closed fails alone (:func:`closed`), the others are written.

A file-size limit (``ulimit -f``) makes a write beyond it fail with ``EFBIG`` instead of ending
the process (SIGXFSZ, whose default action kills it, is ignored): the output that hit the limit
is reported, the others are still written.
"""

from __future__ import annotations

import os
import signal
import sys

_STREAMS = ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w"))
_closed: set[int] = set()


def prepare() -> None:
    """Open each closed standard stream on ``/dev/null`` (in order, so each takes its own number)
    and ignore SIGXFSZ; call first thing in a command."""
    for fd, name, mode in _STREAMS:
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            _closed.add(fd)
            if getattr(sys, name) is None:  # Python sets a stream it found closed to None
                setattr(sys, name, open(fd, mode, closefd=False))  # noqa: SIM115 - kept open for the process
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def closed(fd: int) -> bool:
    """Whether the standard stream ``fd`` (1: standard output) was closed when the command started."""
    return fd in _closed
