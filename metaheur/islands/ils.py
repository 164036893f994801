"""The ILS island (TSP): a multistart of iterated local searches without crossover. Each
generation continues ``offspring`` members' searches in turn, and a continued search replaces
its member when its tour is not longer."""

from __future__ import annotations

import numpy as np

from metaheur.islands.base import Island, seconds_to
from metaheur.islands.params import GAParams


class ILSIsland(Island):
    """Iterated local searches of the TSP, continued member by member (crossover ``none``)."""

    local_search_only = True

    @classmethod
    def label(cls, ga: GAParams) -> str:
        return "ILS chains"

    def generation(self, state, deadline: float | None, progress: float | None) -> None:
        ops, count = self.ops, self.spec.params.ga.offspring
        keys = self.keys(state, count)
        source = (state.generation * count + np.arange(count)) % state.population.shape[0]
        sols, costs, iters = ops.improve(ops.device.asarray(state.population[source], np.int32), keys,
                                         time_limit=seconds_to(deadline))
        state.ls_iterations += int(np.sum(iters))
        better = costs <= state.costs[source]
        state.population[source[better]] = sols[better]
        state.costs[source[better]] = costs[better]
