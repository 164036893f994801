"""What every batched search shares: stop rules between launches and the per-batch result."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from metaheur import live


@dataclass
class BatchResult:
    """Best solutions and statistics of a batch of searches (host arrays).

    ``best_costs[k]`` is the exact cost of ``best[k]`` as tracked by the kernel; callers that
    report a cost recompute it from scratch on the host.
    """

    best: np.ndarray  # S x n, 0-based permutations / tours
    best_costs: np.ndarray  # S
    iterations: np.ndarray  # S: local-search iterations (QAP) or kicks (TSP) done by each search
    seconds: float  # wall time spent in launches (compilation excluded)
    launches: int
    stop_reason: str
    extra: dict = field(default_factory=dict)
    current: np.ndarray | None = None  # S x n: where each search stands at the end (searches that keep one)

    @property
    def best_index(self) -> int:
        return int(np.argmin(self.best_costs))


class LaunchPacer:
    """Sizes kernel launches so that each takes about ``target_seconds``, and decides when to stop.

    Time limits are checked between launches, so a launch is kept short enough for the limit to be
    honoured within a few percent; so is the run's stop request, and the island reports its
    progress there (:mod:`metaheur.live`).
    """

    def __init__(self, budget: int | None, time_limit: float | None, first: int, target_seconds: float = 0.1):
        self.budget = budget
        self.time_limit = time_limit
        self.start = time.perf_counter()
        self.done = 0
        self.step = max(1, first)
        self.target = target_seconds
        self.launches = 0

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def out_of_time(self) -> bool:
        """Whether the time is used up or the run asked the island to stop."""
        return (self.time_limit is not None and self.elapsed() >= self.time_limit) or live.stop_requested()

    def next_step(self) -> int:
        """Units (iterations or kicks) for the next launch; 0 when a budget or the time is used up."""
        step = self.step
        if self.budget is not None:
            step = min(step, self.budget - self.done)
        if step <= 0 or live.stop_requested():
            return 0
        if self.time_limit is not None:
            left = self.time_limit - self.elapsed()
            if left <= 0:
                return 0
            if self.launches and self.rate > 0:
                step = max(1, min(step, int(left * self.rate)))
        return step

    rate = 0.0

    def record(self, units: int, seconds: float) -> None:
        self.done += units
        self.launches += 1
        if seconds > 0:
            self.rate = units / seconds
            self.step = max(1, int(self.rate * self.target))

    def run(self, launch, synchronize, reached, done: bool = False, progress=None) -> bool:
        """Launch ``launch(units)`` in steps sized by :meth:`next_step`, waiting for each
        (``synchronize()``) to time it, until the budget or the time is used up or ``reached()``
        (checked after every launch; ``done``: already reached, so nothing is launched); returns
        whether ``reached()`` ended it. ``progress()``: the batch's (best cost, iterations) so
        far, for the island's report (:func:`metaheur.live.beat`)."""
        while not done:
            step = self.next_step()
            if step == 0:
                break
            t0 = time.perf_counter()
            launch(step)
            synchronize()
            self.record(step, time.perf_counter() - t0)
            done = reached()
            live.beat(progress)
        return done

    def reason(self, target_reached: bool) -> str:
        if target_reached:
            return "target"
        if self.budget is not None and self.done >= self.budget:
            return "iterations"
        return "time_limit"
