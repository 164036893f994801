"""The EAX island: the GA of Nagata and Kobayashi ("A powerful genetic algorithm
using edge assembly crossover for the traveling salesman problem", INFORMS J. Computing 25(2),
2013), on the island's population.

Each generation visits the members in a random order; member ``order[i]`` is parent A and
``order[i + 1]`` parent B; the best of ``tries`` EAX children (one AB-cycle each, all of a pair in
one kernel block, all pairs in one launch) replaces A when it is shorter. Children are chosen by
Nagata's entropy-preserving rule (the largest length gain per unit of edge entropy lost) for the
first 70% of the run, then greedily (the shortest), so that the population converges before the
end; without a time or generation horizon, greedy selection starts once the island stagnates.
A stagnant island rebuilds its population (keeping its best) only before that last 30%, or with
``restart = "ils"`` (the default from 50,000 cities) goes on as an iterated local search of its
best for the rest of the run (docs/decisions/tsp-ils-continuation.md).
The population starts from random tours (on large instances with coordinates and on a GPU,
space-filling-curve tours) brought to local optima, as many as a share of the time budget builds
(between 4 and 300) when its size is automatic: 30%, or 10% for curve starts on the CPU, whose
members and restarts are cheap enough that a small population that restarts often ends shorter
(docs/decisions/tsp-start.md).
"""

from __future__ import annotations

import time
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from metaheur import live
from metaheur.errors import MetaheurError
from metaheur.islands.base import Island, seconds_to
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems.tsp.params import EAXParams

if TYPE_CHECKING:
    from metaheur.islands.island import IslandSpec
    from metaheur.problem.interface import Problem

EAX_QUADRANT = 2  # quadrant neighbours per quadrant in the candidate lists of EAX islands
GREEDY_AT = 0.7  # share of the run after which children are chosen greedily
INIT_SHARE = 0.3  # share of the time budget that builds an automatic population
CURVE_INIT_SHARE = 0.1  # the same for curve starts on the CPU (docs/decisions/tsp-start.md)
MIN_POPULATION, MAX_POPULATION, DEFAULT_POPULATION = 4, 300, 100
ILS_KICK_CITIES = 10  # restart = "ils": n / 10 kicks a generation (about a second at 85,900 cities on a core)
STALE_GREEDY = 20  # without a horizon: generations without progress before greedy selection


def population_size(per_member: float, time_limit: float | None, built: int, share: float = INIT_SHARE) -> int:
    """Members of an automatic population, given the seconds one took, the run's time limit and
    the share of it that builds them."""
    if time_limit is None:
        return max(built, DEFAULT_POPULATION)
    return int(min(MAX_POPULATION, max(built, MIN_POPULATION, share * time_limit / max(per_member, 1e-6))))


def init_share(eax: EAXParams, curve_starts: bool, on_gpu: bool) -> float:
    """The share of the time budget that builds an automatic population: ``eax.init_share``, else
    ``CURVE_INIT_SHARE`` for curve starts on the CPU, else ``INIT_SHARE``."""
    if eax.init_share is not None:
        return eax.init_share
    return CURVE_INIT_SHARE if curve_starts and not on_gpu else INIT_SHARE


def selection(progress: float | None, stale: int) -> str:
    if progress is None:
        return "greedy" if stale >= STALE_GREEDY else "entropy"
    return "greedy" if progress >= GREEDY_AT else "entropy"


def ils_kicks(eax: EAXParams, n: int) -> int:
    """Kicks a generation of an island that continues as an ILS: ``eax.ils_kicks``, else
    ``n // ILS_KICK_CITIES`` (at least 50)."""
    return eax.ils_kicks or max(50, n // ILS_KICK_CITIES)


def may_restart(progress: float | None) -> bool:
    """Whether a stagnant island may rebuild its population: only while the run has the time to
    bring a new one to convergence, i.e. before its greedy last 30%."""
    return progress is None or progress < GREEDY_AT


class EAXIsland(Island):
    """The GA of Nagata and Kobayashi (2013) on a TSP island (crossover ``eax``)."""

    # EAX merges sub-tours over the candidate lists: quadrant candidates (Helsgaun 2000) connect
    # the clusters of clustered instances, which nearest neighbours alone leave apart
    operator_options = MappingProxyType({"quadrant": EAX_QUADRANT})
    automatic_population = True
    restarts = ("ils",)

    @classmethod
    def label(cls, spec: IslandSpec) -> str:
        return "GA (eax)"

    @classmethod
    def ls_budget(cls, ga: GAParams, problem: Problem) -> int:
        """No kicks (a descent) for the members that start the population, unless given."""
        return 0 if ga.ls_budget is None else ga.ls_budget

    @classmethod
    def sizes(cls, ga: GAParams) -> dict[str, int]:
        """An automatic population (0), every member a parent each generation (one child)."""
        return {"population": 0, "offspring": 1}

    @classmethod
    def most_members(cls, ga: GAParams) -> int:
        """An automatic population (0) has at most :data:`MAX_POPULATION` members."""
        return ga.population or MAX_POPULATION

    @classmethod
    def check_params(cls, params: IslandParams, problem: Problem) -> None:
        """Curve starts need city coordinates."""
        if params.search(EAXParams).starts == "curve" and getattr(problem, "coords", None) is None:
            raise MetaheurError(f"starts = 'curve' needs city coordinates, which {problem.name} has not: "
                                "use 'random' or 'auto'")

    def starts(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """Random or curve tours (:meth:`TSPOperators.random_tours`): EAX needs a diverse population."""
        return self.ops.random_tours(count, rng)

    def first_population(self, state, deadline: float | None, time_left: float | None):
        """``population`` members, or for an automatic size (0) a first few, timed, then as many
        more as the build's share of the time budget affords (:func:`population_size`,
        :func:`init_share`); the warm starts seed the first."""
        if self.spec.params.ga.population:
            return super().first_population(state, deadline, time_left)
        (pop, costs), per = timed(lambda k: self.new_members(state, k, deadline, self.spec.initial), MIN_POPULATION)
        share = init_share(self.spec.params.search(EAXParams), self.ops.curve_starts, self.ops.device.is_gpu)
        more = population_size(per, time_left, MIN_POPULATION, share) - MIN_POPULATION
        if more > 0 and (deadline is None or time.perf_counter() < deadline) and not live.stop_requested():
            extra, extra_costs = self.new_members(state, more, deadline)
            pop, costs = np.concatenate([pop, extra]), np.concatenate([costs, extra_costs])
        return pop, costs

    def begin(self, state) -> None:
        """The edge-frequency table of the entropy-preserving selection is built from the population."""
        self.ops.eax.begin(state.population)

    @property
    def goes_on_as_ils(self) -> bool:
        """Whether a converged island goes on as an ILS of its best: ``restart = "ils"`` on the
        CPU (a GPU island's local search is its descent with reversal kicks, a round a launch:
        it rebuilds as ``best``)."""
        return self.spec.params.ga.restart == "ils" and not self.ops.device.is_gpu

    def may_restart(self, progress: float | None) -> bool:
        """Going on as an ILS: at any time (the island goes on from its best); other restarts only
        before the greedy last 30 % (:func:`may_restart`)."""
        return self.goes_on_as_ils or may_restart(progress)

    def restart(self, state, deadline: float | None) -> None:
        """``restart = "ils"``: the converged island goes on as an iterated local search of its
        best (:meth:`generation`, one restart for the whole run); other restarts:
        :meth:`Island.restart`."""
        if not self.goes_on_as_ils:
            return super().restart(state, deadline)
        state.restarts += not self.continues_as_ils(state)
        state.stale = 0

    def continues_as_ils(self, state) -> bool:
        """Whether the island converged and now searches its best by ILS (``restart = "ils"``)."""
        return self.goes_on_as_ils and state.restarts > 0

    def generation(self, state, deadline: float | None, progress: float | None) -> None:
        """Every member is parent A once, in a random order; once the island continues as an ILS
        (:meth:`continues_as_ils`), :func:`ils_kicks` kicks of the search of its best."""
        if self.continues_as_ils(state):
            return self.ils_generation(state, deadline)
        size = state.population.shape[0]
        keys = self.keys(state, size)
        eax_generation(self.ops, state, keys, self.rng(state, 2).permutation(size), progress)

    def ils_generation(self, state, deadline: float | None) -> None:
        """The ILS of the best member, from it (a local optimum: no first descent); the result
        replaces it when not longer."""
        b = int(np.argmin(state.costs))
        kicks = ils_kicks(self.spec.params.search(EAXParams), self.ops.n)
        tours, lengths, iters = self.ops.improve(self.ops.device.asarray(state.population[b:b + 1], np.int32),
                                                 self.keys(state, 1), time_limit=seconds_to(deadline),
                                                 kicks=kicks, descended=True)
        state.ls_iterations += int(np.sum(iters))
        if lengths[0] <= state.costs[b]:
            state.population[b], state.costs[b] = tours[0], lengths[0]


def eax_generation(ops, state, keys: np.ndarray, order: np.ndarray, progress: float | None) -> None:
    """One generation on ``state`` (in place): member ``order[i]`` is parent A once."""
    select = selection(progress, state.stale)
    lengths, built = ops.eax.children(state.population, state.costs, order, keys, select)
    state.ls_iterations += built  # an EAX island's search steps are the children it builds
    better = lengths < state.costs[order]
    if not better.any():
        return
    idx = order[better]
    state.population[idx] = ops.eax.accept(np.flatnonzero(better), idx, state.population)
    state.costs[idx] = lengths[better]


def timed(build, count: int):
    """``build(count)`` and the seconds it took per member."""
    t0 = time.perf_counter()
    out = build(count)
    return out, (time.perf_counter() - t0) / max(count, 1)
