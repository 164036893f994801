"""Island epochs that misbehave on purpose, for the fault tests (importable by worker processes)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from metaheur.islands.island import run_epoch


class OutOfMemoryError(Exception):
    """Stands in for cupy.cuda.memory.OutOfMemoryError (recognised by its name)."""


def killed_once(spec, state, *, marker: str, **budget):
    """The first call in a worker process dies by SIGKILL mid-epoch; later calls work."""
    path = Path(marker)
    if budget.get("in_worker") and not path.exists():
        path.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return run_epoch(spec, state, **budget)


def gpu_out_of_memory(spec, state, **budget):
    """An island on a (pretend) GPU always runs out of memory; on the CPU it works."""
    if spec.device != "cpu":
        raise OutOfMemoryError("out of memory allocating 1 GiB")
    return run_epoch(spec, state, **budget)


def fails_after_first_epoch(spec, state, **budget):
    """The second epoch of every island fails with a user-facing error."""
    from metaheur.errors import MetaheurError

    if state.generation > 0:
        raise MetaheurError("device lost")
    return run_epoch(spec, state, **budget)
