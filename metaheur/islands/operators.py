"""What a memetic island's operators share, whatever the problem: the base of a problem's
operators (random solutions, crossover, mutation, local search of children, distance between
solutions, exact cost; the built-in problems' are in problems/<name>/operators.py), their cache per
process (a worker builds them once) and the split of a batch too large for the device."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from metaheur.devices import Device, parse_device
from metaheur.islands.params import IslandParams
from metaheur.islands.params import ls_budget as default_budget

if TYPE_CHECKING:
    from metaheur.problem.interface import Problem


def is_out_of_memory(exc: BaseException) -> bool:
    """True for a device or host allocation failure (CuPy's OutOfMemoryError, MemoryError)."""
    return isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError"


def split_on_oom(improve, children: np.ndarray, keys: np.ndarray, time_limit: float | None):
    """Run ``improve(children, keys, time_limit)``; when the device runs out of memory, run the two
    halves of the batch one after the other (recursively), so a batch too large for the device
    still completes. A single child that does not fit re-raises."""
    try:
        return improve(children, keys, time_limit)
    except Exception as exc:
        if not is_out_of_memory(exc) or len(keys) < 2:
            raise
    half = len(keys) // 2
    a = split_on_oom(improve, children[:half], keys[:half], time_limit)
    b = split_on_oom(improve, children[half:], keys[half:], time_limit)
    return tuple(np.concatenate([x, y]) for x, y in zip(a, b, strict=True))


class Operators:
    """What every problem's operators hold: the problem, the device, the island parameters, the
    batched crossovers (``ga``, of the class's ``crossovers``: metaheur/ga/) and the local-search
    budget per child (``ls_budget``, chosen by the island's algorithm; None: the GA parameters'
    or the problem's default, :func:`~metaheur.islands.params.ls_budget`)."""

    crossovers = None

    def __init__(self, problem: Problem, device: Device, params: IslandParams, ls_budget: int | None = None):
        self.problem = problem
        self.device = device
        self.params = params
        self.n = problem.n
        self.ga = self.crossovers(device, problem.n)
        self.ls_budget = default_budget(params.ga, problem) if ls_budget is None else ls_budget


_CACHE: dict[tuple, object] = {}
_CACHE_SIZE = 8  # operators hold device buffers: keep those of the islands of one run
_CACHE_LOCK = threading.Lock()  # GPU islands' threads look up and build at the same time


def operators_for(problem: Problem, device: str | Device, params: IslandParams, key: str, *,
                  ls_budget: int | None = None, options: Mapping[str, Any] | None = None,
                  island: int | None = None):
    """The operators of ``problem`` on ``device`` (cached in this process under ``key``, a
    fingerprint of the instance, and their owner). Islands that take turns in one thread (the
    epochs of a worker process) share them: an island sets up its searches from its own state at
    every epoch, so only buffers and instance data (neighbour lists, the instance on the device)
    are kept, once a process rather than once an island. Islands that run at the same time as
    threads of one process (Dask's threads) get their own. ``island``: the island that owns them
    instead of the calling thread (the model's own islands, GPU islands among them, whose epochs
    run on a new thread each: their warm-up's operators then serve every epoch). The generation
    size (population, offspring), which the balancer changes and the operators do not use, is
    not part of the key.
    ``ls_budget``: local-search effort per child (None: the GA parameters' or the problem's
    default, :func:`~metaheur.islands.params.ls_budget`); ``options``: the island algorithm's own
    keyword arguments of :meth:`Problem.operators <metaheur.problem.SolvingPlan.operators>`
    (:attr:`Island.operator_options <metaheur.islands.base.Island.operator_options>`)."""
    dev = parse_device(device)
    owner = ("island", island) if island is not None else ("thread", threading.get_ident())
    shape_free = replace(params, ga=replace(params.ga, population=1, offspring=1))
    options = dict(options or {})
    cache_key = (key, dev.name, shape_free, owner, ls_budget, tuple(sorted(options.items())))
    with _CACHE_LOCK:
        ops = _CACHE.get(cache_key)
    if ops is None:
        ops = problem.operators(dev, params, ls_budget, **options)
        with _CACHE_LOCK:
            if len(_CACHE) >= _CACHE_SIZE:
                _CACHE.pop(next(iter(_CACHE)))  # forget the oldest
            _CACHE[cache_key] = ops
    return ops
