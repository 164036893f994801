"""The host memory a run's populations take, checked before anything is allocated.

Every island keeps its population and a generation's children as ``n``-element solutions (int64
on the host), and at an epoch's boundary holds up to :data:`COPIES` of them at once (the
island's state, the epoch's own copy, the copy sent to or from a worker, the searches' buffers).
A run whose estimate passes the memory this machine has available is refused with the estimate,
instead of growing until the system ends it (docs/long-runs.md).
"""

from __future__ import annotations

import contextlib
import os

from metaheur.errors import MetaheurError
from metaheur.islands.params import IslandParams

COPIES = 4
SOLUTION_BYTES = 8  # an int64 element of a solution


def population_bytes(n: int, params: list[IslandParams]) -> int:
    """The host memory the islands' populations and children take at an epoch's boundary."""
    members = sum(p.ga.population + p.ga.offspring for p in params)
    return COPIES * members * (n + 1) * SOLUTION_BYTES


def available_memory() -> int | None:
    """Bytes of memory this machine can give a new allocation now (Linux: MemAvailable), or None
    where that is not known."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        with open("/proc/meminfo") as f:
            kib = next(int(line.split()[1]) for line in f if line.startswith("MemAvailable:"))
        return kib * 1024
    with contextlib.suppress(ValueError, OSError, AttributeError):
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    return None


def check_host_memory(n: int, params: list[IslandParams]) -> None:
    """Refuse a run whose populations (:func:`population_bytes`) cannot fit the memory available."""
    need, have = population_bytes(n, params), available_memory()
    if have is not None and need > have:
        sizes = sorted({(p.ga.population, p.ga.offspring) for p in params})
        shown = ", ".join(f"population {pop:,} and {off:,} children" for pop, off in sizes)
        raise MetaheurError(f"{len(params)} island(s) of {shown} of n = {n} need about {need / 2**30:.1f} GiB of "
                            f"memory; this machine has {have / 2**30:.1f} GiB available: use smaller populations")
