"""Batched order crossover and segment-reversal mutation of orders (kernels/engine/order_ga.cu):
one child per kernel block, every child with its own random stream. The TSP's GA and a user
problem's use them."""

from __future__ import annotations

import numpy as np

from metaheur.devices import Device
from metaheur.engine import load_module

CROSSOVER = "ox"  # the order crossover (Davis 1985), the name GA parameters give it
REVERSAL_WINDOW = 50  # longest segment a mutation reverses


class OrderGA:
    """Order-crossover children (Davis 1985) of pairs of parents on ``device``, and random segment
    reversals (the mutation, the perturbation of greedy starts, and the kick of a GPU island's ILS)."""

    def __init__(self, device: Device, n: int):
        self.device = device
        self.n = n
        self.module = load_module("engine/order_ga.cu", device)
        self.counters = None  # the children's random-stream counters, shared by crossover and mutation

    def crossover(self, population: np.ndarray, pairs: np.ndarray, keys: np.ndarray):
        """One OX child of ``population[pairs[k, 0]]`` and ``population[pairs[k, 1]]`` per pair,
        from stream ``keys[k]``; returns the children (C x n int32 on the device)."""
        dev, c, n = self.device, len(pairs), self.n
        children = dev.zeros((c, n), np.int32)
        self.counters = dev.zeros(c, np.int64)
        self.module.kernel("order_crossover")(c, 1, (dev.asarray(population, np.int32), dev.asarray(pairs, np.int32),
                                                     n, dev.asarray(keys), self.counters, children,
                                                     dev.zeros((c, n), np.int32)))
        return children

    def reverse_segments(self, tours, keys, reversals: int, window: int = REVERSAL_WINDOW, counters=None) -> None:
        """``reversals`` random reversals of segments of at most ``window`` elements in every order
        of ``tours`` (in place, on the device), order k from stream ``keys[k]`` (a device array) at
        ``counters`` (default: those of the latest :meth:`crossover`)."""
        counters = self.counters if counters is None else counters
        self.module.kernel("order_reversals")(len(keys), 1, (tours, self.n, reversals, window, keys, counters))
