"""The island protocol: what every island algorithm does within an epoch.

An island algorithm (one class per algorithm, chosen from the parameters by
:func:`metaheur.islands.island.island_class`) builds its first population, runs one generation
on the island's state within a deadline, says whether a stagnant population may restart and
whether the island takes migrants now. The island's state (:class:`~metaheur.islands.island.IslandState`)
is plain data kept outside the algorithm object, so that an epoch can run in any process and a
checkpoint holds the whole run; an algorithm object holds only the operators it drives (kernels
and device buffers, built once per process).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from metaheur.engine.rng import stream_key
from metaheur.islands.params import GAParams, IslandParams
from metaheur.islands.params import ls_budget as default_budget

if TYPE_CHECKING:
    from metaheur.islands.island import IslandSpec, IslandState
    from metaheur.problem.interface import Problem


def seconds_to(deadline: float | None) -> float | None:
    """Seconds left until ``deadline`` (a ``time.perf_counter`` value), or None without one."""
    return None if deadline is None else max(0.0, deadline - time.perf_counter())


@dataclass(frozen=True)
class SavedSearches:
    """The arrays an island algorithm keeps of its searches between epochs
    (``IslandState.searches``), as a checkpoint checks them: ``shapes`` by name (``"S"``: one row
    a search, ``"n"``: the searched problem's size, an int: that length), the names of those that
    hold permutations (``solutions``), and the columns that hold the engine costs of solutions
    (``costs``: (array, column) -> the solutions' array)."""

    shapes: dict[str, tuple]
    solutions: tuple[str, ...]
    costs: dict[tuple[str, int], str] = field(default_factory=dict)


class Island:
    """One island algorithm on the operators ``ops`` of its problem and device.

    Subclasses override :meth:`generation` and, where their algorithm differs, the other steps.
    Class attributes tell the planner what the algorithm needs: ``operator_options`` (keyword
    arguments its problem's :meth:`Problem.operators <metaheur.problem.SolvingPlan.operators>` is
    called with for its islands, which the framework passes on unread: the TSP's EAX islands ask
    for quadrant candidate lists) and ``sized_by_gpu_wave`` (a GPU island improves at least one
    wave of children a generation);
    ``local_search_only``: its generations are steps of local searches, not GA generations (the
    run's counters keep them apart; such an island keeps one member and one child, :meth:`sizes`);
    ``automatic_population``: a population of size 0 is sized by the algorithm (EAX);
    ``restarts``: the values of ``GAParams.restart`` it adds to those of every algorithm;
    ``saved_searches``: what it keeps of its searches between epochs (none by default)."""

    operator_options: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    sized_by_gpu_wave = False
    local_search_only = False
    automatic_population = False
    restarts: ClassVar[tuple[str, ...]] = ()
    saved_searches: ClassVar[SavedSearches | None] = None

    def __init__(self, spec: IslandSpec, ops):
        self.spec = spec
        self.ops = ops

    # ------------------------------------------------------------ what the planner asks of the class
    @classmethod
    def label(cls, spec: IslandSpec) -> str:
        """The algorithm's name in results and reports, for the island of ``spec``."""
        raise NotImplementedError

    @classmethod
    def ls_budget(cls, ga: GAParams, problem: Problem) -> int:
        """Local-search effort per child (:func:`~metaheur.islands.params.ls_budget`)."""
        return default_budget(ga, problem)

    @classmethod
    def sizes(cls, ga: GAParams) -> dict[str, int]:
        """The GA sizes the algorithm needs on an island whose parameters were ``ga`` (changes to
        its fields): one member and one child a generation and no restart for an island of
        continued local searches (:attr:`local_search_only`); 30 members and 10 children for a GA
        taking over from an automatic size (0); else none."""
        if cls.local_search_only:
            return {"population": 1, "offspring": 1, "restart_after": 0}
        if ga.population == 0:
            return {"population": 30, "offspring": 10}
        return {}

    @classmethod
    def most_members(cls, ga: GAParams) -> int:
        """The most members (and saved searches) an island of ``ga`` keeps: its population (the
        load balancer only grows it), or for an automatic size the algorithm's most."""
        return ga.population

    @classmethod
    def check_params(cls, params: IslandParams, problem: Problem) -> None:
        """Refuse parameters the algorithm cannot run on ``problem`` (none by default)."""

    @classmethod
    def accepts_migrants(cls, params: IslandParams, state: IslandState) -> bool:
        """Whether the island takes a migrant after this epoch (every island does unless its
        algorithm says otherwise)."""
        return True

    # ------------------------------------------------------------ the steps of an epoch
    def first_population(self, state: IslandState, deadline: float | None,
                         time_left: float | None) -> tuple[np.ndarray, np.ndarray]:
        """The island's first ``population`` members, each a local optimum of a random start; the
        warm starts (``spec.initial``, best first) seed the first of them."""
        return self.new_members(state, self.spec.params.ga.population, deadline, self.spec.initial)

    def begin(self, state: IslandState) -> None:
        """Called whenever the population was built or replaced as a whole (no-op by default)."""

    def generation(self, state: IslandState, deadline: float | None, progress: float | None) -> None:
        """One generation on ``state`` (in place), cut short at ``deadline``; ``progress``: how far
        the run is, in [0, 1], or None without a horizon."""
        raise NotImplementedError

    def may_restart(self, progress: float | None) -> bool:
        """Whether a stagnant population may restart now (always, by default)."""
        return True

    def restart(self, state: IslandState, deadline: float | None) -> None:
        """Replace every member but the best (``restart = "best"``) or every member (``"full"``: the
        island's best stays in ``state.best``) by new improved random solutions."""
        size = state.population.shape[0]
        if self.spec.params.ga.restart == "full":
            state.population[:], state.costs[:] = self.new_members(state, size, deadline)
            state.cycle_best = int(np.min(state.costs))
        else:
            keep = int(np.argmin(state.costs))
            others = np.delete(np.arange(size), keep)
            state.population[others], state.costs[others] = self.new_members(state, size - 1, deadline)
        state.restarts += 1
        state.stale = 0
        state.spread = None

    # ------------------------------------------------------------ shared helpers
    def starts(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` starting solutions for new members (the operators' random solutions)."""
        return self.ops.random_solutions(count, rng)

    def new_members(self, state: IslandState, count: int, deadline: float | None, seeds: np.ndarray | None = None):
        """``count`` new members: random starts, or ``seeds`` (warm starts, which take the first
        places), brought to local optima (one random stream each); returns (solutions, exact
        costs). A seeded member is never worse than its seed: should the search return worse, the
        seed itself is kept."""
        starts, seeded = self.member_starts(state, count, seeds)
        keys = self.keys(state, count)
        sols, costs, iters = self.ops.improve(self.ops.device.asarray(starts, np.int32), keys,
                                              time_limit=seconds_to(deadline))
        state.ls_iterations += int(np.sum(iters))
        for j in range(seeded):
            seed_cost = self.ops.cost(seeds[j])
            if costs[j] > seed_cost:
                sols[j], costs[j] = seeds[j], seed_cost
        return sols, costs

    def member_starts(self, state: IslandState, count: int, seeds: np.ndarray | None) -> tuple[np.ndarray, int]:
        """The starting solutions of ``count`` new members (:meth:`starts`), the warm starts
        ``seeds`` in the first places; returns them and how many are warm starts."""
        starts = self.starts(count, self.rng(state, 1))
        seeded = 0 if seeds is None else min(count, len(seeds))
        if seeded:
            starts[:seeded] = seeds[:seeded]
        return starts, seeded

    def keys(self, state: IslandState, count: int) -> np.ndarray:
        """The next ``count`` random-stream keys of the island (one per child or search)."""
        ids = np.arange(state.streams, state.streams + count, dtype=np.uint64)
        state.streams += count
        return stream_key(np.uint64(self.spec.seed), ids)

    def rng(self, state: IslandState, salt: int) -> np.random.Generator:
        """A host generator for this generation's choices (``salt`` tells the uses apart)."""
        return np.random.default_rng([self.spec.seed, state.generation, state.restarts, salt])
