"""The tabu island (QAP): each member is the best of one robust tabu search (Taillard 1991) that
goes on, tabu memory and all, from generation to generation and epoch to epoch, as Taillard's
searches run for as long as they are given; the saved searches travel in the island's state
(``IslandState.searches``). Beside GA islands it sends its best to them and takes no migrant
while its search still improves, so the search keeps its memory
(docs/decisions/tabu-islands.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from metaheur.islands.base import Island, SavedSearches, seconds_to
from metaheur.islands.params import IslandParams
from metaheur.problems.qap.tabu import BEST, COST, N_STATS, SAVED_SEARCH

if TYPE_CHECKING:
    from metaheur.islands.island import IslandSpec


class TabuIsland(Island):
    """Continued robust tabu searches of the QAP, one per member (crossover ``none``)."""

    local_search_only = True
    #: the searches' snapshot (``QAPTabuBatch.snapshot``: SAVED_SEARCH), statistics with the costs
    saved_searches = SavedSearches({"perm": ("S", "n"), "best": ("S", "n"), "stats": ("S", N_STATS),
                                    "tabu": ("S", "n", "n"), "left": ("S", "n", "n"), "keys": ("S",)},
                                   ("perm", "best"), {("stats", COST): "perm", ("stats", BEST): "best"})

    @classmethod
    def label(cls, spec: IslandSpec) -> str:
        return "tabu search"

    @classmethod
    def accepts_migrants(cls, params: IslandParams, state) -> bool:
        """Only once its best has not improved for ``restart_after`` generations (0: never): a
        migrant restarts one of its searches and loses that search's memory."""
        after = params.ga.restart_after
        return bool(after) and state.stale >= after

    def generation(self, state, deadline: float | None, progress: float | None) -> None:
        """Every member's tabu search goes on for ``ls_budget`` iterations. A member that is not
        the best of a saved search (the first members, a migrant, members added by the load
        balancer) starts a new search from itself."""
        ops, pop, saved = self.ops, state.population, state.searches
        owner = np.full(len(pop), -1)
        if saved is not None:
            for i, member in enumerate(pop):
                same = [j for j in np.flatnonzero((saved["best"] == member[None, :]).all(axis=1)) if j not in owner]
                owner[i] = same[0] if same else -1  # each saved search goes on once, even for equal members
        new = np.flatnonzero(owner < 0)
        keys = self.keys(state, new.size)
        searches = saved
        if new.size:  # the new searches come after the saved ones, taken in the members' order
            fresh = ops.new_searches(pop[new], keys)
            known = 0 if saved is None else len(saved["keys"])
            owner[new] = known + np.arange(new.size)
            searches = {k: fresh[k] if saved is None else np.concatenate([saved[k], fresh[k]]) for k in SAVED_SEARCH}
        searches = {k: v[owner] for k, v in searches.items()}
        state.searches, best, costs, iters = ops.continue_searches(searches, time_limit=seconds_to(deadline))
        state.population, state.costs = best.astype(pop.dtype), costs
        state.ls_iterations += int(np.sum(iters))
