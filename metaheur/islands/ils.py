"""The island of continued local searches without crossover (the TSP's ILS, a user problem's
generic local search): each generation continues ``offspring`` members' searches in turn, and a
continued search replaces its member when its result is not worse. A search continues from its
member, or, where the operators say so (``continues_chains``: the iterated greedy), from where it
stood at the end of its last generation while its member is still the best it left
(``IslandState.searches``). Its label names the search the problem runs
(:meth:`Problem.chain_search`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from metaheur.islands.base import Island, SavedSearches, seconds_to

if TYPE_CHECKING:
    from metaheur.islands.island import IslandSpec


class ILSIsland(Island):
    """Local searches continued member by member (crossover ``none``)."""

    local_search_only = True
    #: where each chain stands and the member it left
    saved_searches = SavedSearches({"best": ("S", "n"), "current": ("S", "n")}, ("best", "current"))

    @classmethod
    def label(cls, spec: IslandSpec) -> str:
        return f"{spec.problem.chain_search(spec.params)} chains"

    def first_population(self, state, deadline: float | None, time_left: float | None):
        """Where the chains go on from where they stood (``continues_chains``: the iterated greedy),
        the first members are the starting solutions themselves (the flow shop's first is NEH's
        sequence; the warm starts first), searched from the first generation on: each chain runs
        uninterrupted from its start, and the run's trace begins at the construction. Other chains
        start from members brought to local optima (:meth:`Island.first_population`)."""
        if not getattr(self.ops, "continues_chains", False):
            return super().first_population(state, deadline, time_left)
        starts, _ = self.member_starts(state, self.spec.params.ga.population, self.spec.initial)
        return starts, np.array([self.ops.cost(s) for s in starts], dtype=np.int64)

    def generation(self, state, deadline: float | None, progress: float | None) -> None:
        ops, count = self.ops, self.spec.params.ga.offspring
        keys = self.keys(state, count)
        source = (state.generation * count + np.arange(count)) % state.population.shape[0]
        continued = getattr(ops, "continues_chains", False)
        if continued:
            starts = ops.device.asarray(self._chain_starts(state, source), np.int32)
            sols, costs, iters, current = ops.improve_chains(starts, keys, time_limit=seconds_to(deadline))
        else:
            starts = ops.device.asarray(state.population[source], np.int32)
            sols, costs, iters = ops.improve(starts, keys, time_limit=seconds_to(deadline))
        state.ls_iterations += int(np.sum(iters))
        better = costs <= state.costs[source]
        state.population[source[better]] = sols[better]
        state.costs[source[better]] = costs[better]
        if continued:
            self._keep_chains(state, source, current)

    @staticmethod
    def _chain_starts(state, source: np.ndarray) -> np.ndarray:
        """Where the chains of ``source`` go on from: the current solution a chain left
        (``state.searches``) while its member is still the best that chain left; the member itself
        where it is not (a migrant, a new member of the load balancer) or no chain ran yet."""
        starts = state.population[source].copy()
        saved = state.searches
        if saved is not None and saved["best"].shape == state.population.shape:
            same = (saved["best"][source] == starts).all(axis=1)
            starts[same] = saved["current"][source[same]]
        return starts

    @staticmethod
    def _keep_chains(state, source: np.ndarray, current: np.ndarray) -> None:
        """Record where the chains of ``source`` stand and the member each left."""
        saved = state.searches
        if saved is None or saved["best"].shape != state.population.shape:
            saved = {"best": state.population.copy(), "current": state.population.copy()}
        saved["best"][source] = state.population[source]
        saved["current"][source] = current
        state.searches = saved
