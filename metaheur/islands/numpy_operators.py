"""The numpy-only route of a user problem without device code (the slow path for prototypes):
the permutation GA's crossovers and mutation (CPU build of kernels/engine/perm_ga.cu and order_ga.cu) and a
sampled-neighbourhood descent that scores moves through the problem's batched ``evaluate``; on
the CPU whatever the device. One warning line points to the CUDA-C route (docs/problems.md)."""

from __future__ import annotations

import warnings

import numpy as np

from metaheur.devices import Device, parse_device, to_host
from metaheur.islands.params import IslandParams
from metaheur.islands.perm_operators import PermCrossovers
from metaheur.problem.permutation_check import apply_move
from metaheur.search.perm_search import PermSearchParams

SAMPLES = 32  # moves sampled per child and step
_WARNED: set[str] = set()


def warn_numpy_route(problem) -> None:
    """The one warning of the slow path (once per problem kind and process)."""
    if problem.kind not in _WARNED:
        _WARNED.add(problem.kind)
        warnings.warn(f"metaheur: the {problem.kind} problem has no device_code: the numpy-only route (slow; its cost "
                      f"and move deltas in CUDA-C run the batched kernels, see docs/problems.md)", RuntimeWarning,
                      stacklevel=3)


class NumpyOperators:
    """Operators whose local search samples ``SAMPLES`` moves a step per child and takes the best
    improving one; ``ls_budget`` steps (a step without improvement ends a child's descent)."""

    def __init__(self, problem, device: Device, params: IslandParams, ls_budget: int | None = None):
        self.problem, self.params, self.n = problem, params, problem.n
        self.device = parse_device("cpu")
        self.move = params.search(PermSearchParams).move or problem.moves[0]
        self.ls_budget = (params.ga.ls_budget if params.ga.ls_budget is not None
                          else max(20, problem.n)) if ls_budget is None else ls_budget
        self._ga = PermCrossovers(self.device, self.n, params)

    def random_solutions(self, count: int, rng: np.random.Generator) -> np.ndarray:
        return np.array([rng.permutation(self.n) for _ in range(count)], dtype=np.int64)

    def crossover(self, population: np.ndarray, pairs: np.ndarray, keys: np.ndarray):
        return self._ga.crossover(population, pairs, keys)

    def mutate(self, children, keys: np.ndarray) -> None:
        self._ga.mutate(children, keys)

    def improve(self, children, keys: np.ndarray, time_limit: float | None = None):
        """Sampled descent of every child; returns (solutions, exact engine costs, steps)."""
        sols = to_host(children).astype(np.int64).copy()
        sign, k = self.problem.engine_sign, len(sols)
        costs = sign * self.problem.values(sols)
        rngs = [np.random.default_rng(int(key)) for key in np.asarray(keys, dtype=np.uint64)]
        live, steps = np.ones(k, bool), np.zeros(k, np.int64)
        for _ in range(self.ls_budget):
            idx = np.flatnonzero(live)
            if idx.size == 0:
                break
            moved = np.array([apply_move(sols[c], self.move, *self._pair(rngs[c]))
                              for c in idx for _ in range(SAMPLES)])
            vals = (sign * self.problem.values(moved)).reshape(idx.size, SAMPLES)
            pick = np.argmin(vals, axis=1)
            for row, c in enumerate(idx):
                steps[c] += 1
                if vals[row, pick[row]] < costs[c]:
                    sols[c], costs[c] = moved[row * SAMPLES + pick[row]], vals[row, pick[row]]
                else:
                    live[c] = False
        return sols, costs, steps

    def _pair(self, rng: np.random.Generator) -> tuple[int, int]:
        i = int(rng.integers(self.n))
        return i, (i + 1 + int(rng.integers(self.n - 1))) % self.n

    def distances(self, solution: np.ndarray, population: np.ndarray) -> np.ndarray:
        return self.problem.distances(solution, population)

    def cost(self, solution) -> int:
        return self.problem.engine_sign * self.problem.value(solution)
