"""Batched crossovers and swap mutation of permutations as assignments (kernels/engine/perm_ga.cu):
one child per kernel block, every child with its own random stream. The QAP's GA and a user
problem's use them."""

from __future__ import annotations

import numpy as np

from metaheur.devices import Device
from metaheur.engine import load_module

#: Crossovers of kernels/engine/perm_ga.cu: partially mapped (Goldberg and Lingle 1985), cycle
#: (Oliver, Smith and Holland 1987), uniform with repair.
CROSSOVERS = {"pmx": 0, "cx": 1, "ux": 2}


class PermGA:
    """Children of pairs of parents on ``device``, then random swaps."""

    def __init__(self, device: Device, n: int):
        self.device = device
        self.n = n
        self.module = load_module("engine/perm_ga.cu", device)
        self.counters = None  # the children's random-stream counters, shared by crossover and mutation

    def crossover(self, population: np.ndarray, pairs: np.ndarray, keys: np.ndarray, kind: str):
        """One child of ``population[pairs[k, 0]]`` and ``population[pairs[k, 1]]`` per pair, by
        crossover ``kind`` (:data:`CROSSOVERS`), from stream ``keys[k]``; returns the children
        (C x n int32 on the device)."""
        dev, c, n = self.device, len(pairs), self.n
        children = dev.zeros((c, n), np.int32)
        self.counters = dev.zeros(c, np.int64)
        self.module.kernel("perm_crossover")(c, 1, (dev.asarray(population, np.int32), dev.asarray(pairs, np.int32),
                                                    n, CROSSOVERS[kind], dev.asarray(keys), self.counters, children,
                                                    dev.zeros((c, 2 * n), np.int32)))
        return children

    def mutate(self, children, keys: np.ndarray, swaps: int) -> None:
        """``swaps`` random swaps in every child of the latest :meth:`crossover` (in place)."""
        if swaps > 0:
            self.module.kernel("perm_mutate")(len(keys), 1, (children, self.n, swaps, self.device.asarray(keys),
                                                             self.counters))
