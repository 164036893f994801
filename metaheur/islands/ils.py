"""The island of continued local searches without crossover (the TSP's ILS, a user problem's
generic local search): each generation continues ``offspring`` members' searches in turn, and a
continued search replaces its member when its result is not worse. Its label names the search
the problem runs (:meth:`Problem.chain_search`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from metaheur.islands.base import Island, seconds_to

if TYPE_CHECKING:
    from metaheur.islands.island import IslandSpec


class ILSIsland(Island):
    """Local searches continued member by member (crossover ``none``)."""

    local_search_only = True

    @classmethod
    def label(cls, spec: IslandSpec) -> str:
        return f"{spec.problem.chain_search(spec.params)} chains"

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
