"""Temporary folders of a process (a run's board and worker scratch, a kernel build) and the
leftovers of dead processes: each folder is named ``metaheur-KIND-PID-...`` after the process
that made it, which removes it when it ends; one that a process killed outright (SIGKILL, a
power cut) left behind is removed by the next run on the machine that finds its process gone
(:func:`sweep`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile

_NAME = re.compile(r"^metaheur-[a-z]+-(\d+)-")


def folder(kind: str) -> str:
    """A new private temporary folder of this process for ``kind`` (``run``, ``build``)."""
    return tempfile.mkdtemp(prefix=f"metaheur-{kind}-{os.getpid()}-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def sweep() -> int:
    """Remove this user's temporary folders of metaheur processes that are gone; how many."""
    root = tempfile.gettempdir()
    removed = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            m = _NAME.match(entry.name)
            if m is None or int(m.group(1)) == os.getpid() or _alive(int(m.group(1))):
                continue
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_uid == os.getuid():
                    shutil.rmtree(entry.path, ignore_errors=True)
                    removed += 1
    return removed
