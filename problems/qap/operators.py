"""The QAP's operators for the memetic and tabu islands: random permutations, the permutation
crossovers and swap mutation (metaheur/ga/perm_ga.py), robust tabu search of children and of the
tabu islands' continued searches (problems/qap/tabu.py), Hamming distances, exact costs."""

from __future__ import annotations

import numpy as np

from metaheur.devices import Device, to_host
from metaheur.ga.perm_ga import PermGA
from metaheur.islands.operators import Operators, split_on_oom
from metaheur.islands.params import IslandParams
from metaheur.problems.qap.params import TabuParams
from metaheur.problems.qap.problem import QAP
from metaheur.problems.qap.tabu import ITER, QAPTabuBatch, fresh_searches


class QAPOperators(Operators):
    """Robust tabu search children for the QAP; crossovers of kernels/engine/perm_ga.cu."""

    crossovers = PermGA

    def __init__(self, qap: QAP, device: Device, params: IslandParams, ls_budget: int | None = None):
        super().__init__(qap, device, params, ls_budget)
        self._tabu: QAPTabuBatch | None = None

    def random_solutions(self, count: int, rng: np.random.Generator) -> np.ndarray:
        return np.array([rng.permutation(self.n) for _ in range(count)], dtype=np.int64)

    def crossover(self, population: np.ndarray, pairs: np.ndarray, keys: np.ndarray):
        return self.ga.crossover(population, pairs, keys, self.params.ga.crossover)

    def mutate(self, children, keys: np.ndarray) -> None:
        self.ga.mutate(children, keys, self.params.ga.mutation)

    def improve(self, children, keys: np.ndarray, time_limit: float | None = None):
        """Tabu search from every child (``ls_budget`` iterations, cut short by ``time_limit``);
        returns (best solutions, exact costs, iterations). A batch too large for the device's
        memory is split."""
        return split_on_oom(self._improve, to_host(children).astype(np.int64), np.asarray(keys), time_limit)

    def _improve(self, starts: np.ndarray, keys: np.ndarray, time_limit: float | None):
        batch = self._batch(starts, keys)
        batch.restart(starts, keys)
        result = batch.run(self.ls_budget, time_limit=time_limit)
        return result.best, result.best_costs, result.iterations

    def _batch(self, starts: np.ndarray, keys: np.ndarray) -> QAPTabuBatch:
        """The island's one batch of searches, reused for any count up to its capacity and
        reallocated only when the count grows (the old buffers are freed first, so that a batch
        that fits after them is not refused for lack of memory)."""
        if self._tabu is None or self._tabu.capacity < len(keys):
            self._tabu = None
            self._tabu = QAPTabuBatch(self.problem, self.device, starts=starts, keys=keys,
                                      params=self.params.search(TabuParams))
        return self._tabu

    def new_searches(self, starts: np.ndarray, keys: np.ndarray) -> dict[str, np.ndarray]:
        """Saved state of tabu searches about to start from ``starts``."""
        return fresh_searches(self.problem, starts, keys)

    def continue_searches(self, searches: dict[str, np.ndarray], time_limit: float | None = None):
        """Continue the saved tabu searches ``searches`` by ``ls_budget`` iterations each (cut short
        by ``time_limit``), memory and all; returns (their new state, best solutions, best costs,
        iterations done now)."""
        batch = self._batch(searches["perm"], searches["keys"])
        batch.resume(searches)
        before = searches["stats"][:, ITER]
        result = batch.run(self.ls_budget, time_limit=time_limit)
        return batch.snapshot(), result.best, result.best_costs, result.iterations - before

    def distances(self, solution: np.ndarray, population: np.ndarray) -> np.ndarray:
        """Hamming distance: units placed differently."""
        return (population != solution[None, :]).sum(axis=1)

    def cost(self, solution) -> int:
        return self.problem.cost(solution)
