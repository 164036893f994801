"""One memetic island and its epoch, a pure function of (spec, state, budget).

An epoch runs generations until its budget (generations, or seconds in time mode) is spent:
parents by binary tournament, crossover, mutation, local search of every child (one batched
kernel launch), then replacement with diversity control: a child that duplicates a member is
dropped; otherwise it replaces, among the members worse than it, the one closest to it when that
one is nearer than n/10, else the worst (a distance-aware steady-state replacement). An island
whose population's best has not improved for ``restart_after`` generations keeps its best and
refills the rest with new improved random solutions, or with ``restart = "full"`` replaces
every member (the island's best stays in its state). With ``crossover = "none"`` the island is
a multistart of local searches: for the QAP each member is the best of one robust tabu search
that goes on, tabu memory and all, from generation to generation and epoch to epoch (the saved
searches travel in the state), as Taillard's searches run for as long as they are given; for
the TSP each child continues one member's iterated local search and replaces it when not worse.

The state holds plain numpy arrays and counters, so an epoch can run in any process on any
machine; with generation budgets the result does not depend on where or when it ran.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass, field, replace

import numpy as np

from metaheur.engine import set_cpu_threads
from metaheur.engine.rng import stream_key
from metaheur.islands import eax
from metaheur.islands.operators import operators_for
from metaheur.islands.params import IslandParams
from metaheur.problems import QAP, TSP
from metaheur.search.qap_tabu import SAVED_SEARCH


@dataclass(frozen=True)
class IslandSpec:
    """What does not change between epochs: the problem, the device, the parameters."""

    index: int
    problem: QAP | TSP
    problem_key: str
    device: str
    params: IslandParams
    seed: int  # this island's 64-bit seed (from a numpy SeedSequence)
    target: int | None = None
    cpu_threads: int = 1
    owner_pid: int = 0  # the process running the model (a "worker" that is that process keeps Ctrl-C)
    initial: np.ndarray | None = field(default=None, compare=False)  # k x n warm starts, best first


@dataclass
class IslandState:
    """An island between epochs (plain data: picklable, comparable)."""

    index: int
    population: np.ndarray | None = None  # P x n
    costs: np.ndarray | None = None  # P
    generation: int = 0
    streams: int = 0  # random streams used so far (one per child)
    stale: int = 0  # generations since the best improved
    best: np.ndarray | None = None
    best_cost: int | None = None
    ls_iterations: int = 0  # tabu iterations (QAP), ILS kicks (TSP), EAX children built (EAX islands)
    restarts: int = 0
    walks: dict | None = None  # QAP local-search-only islands: the saved tabu searches (QAPTabuBatch.snapshot)
    cycle_best: int | None = None  # after a full restart: the population's best cost since (else None)

    def __getstate__(self) -> dict:
        """Pickled (sent to or from a worker every epoch) with the solutions in the narrowest
        integer type that holds them: a population of 2,392-city tours travels in int16, a
        quarter of the bytes; unpickling restores the type."""
        return {k: _narrow(v) if k in _SOLUTIONS else v for k, v in self.__dict__.items()}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update({k: _widen(v) if k in _SOLUTIONS else v for k, v in state.items()})


_SOLUTIONS = ("population", "best")


def _narrow(a: np.ndarray | None):
    if a is None or a.size == 0:
        return a
    lo, hi = int(a.min()), int(a.max())
    for dtype in (np.int16, np.int32):
        info = np.iinfo(dtype)
        if a.dtype.itemsize > info.bits // 8 and info.min <= lo and hi <= info.max:
            return a.astype(dtype), a.dtype.str
    return a


def _widen(v):
    return v[0].astype(v[1]) if isinstance(v, tuple) else v


@dataclass
class EpochStats:
    """What one epoch of one island did; ``improvements``: (seconds into the epoch, new best)."""

    index: int
    device: str
    generations: int
    ls_iterations: int
    seconds: float
    best_cost: int | None
    improved: bool
    restarts: int
    improvements: list = field(default_factory=list)
    pid: int = field(default_factory=os.getpid)


def warm_up(spec: IslandSpec) -> int:
    """Build this island's operators (imports, kernels) in the calling worker process before a
    run's clock starts; returns the process id."""
    operators_for(spec.problem, spec.device, spec.params, spec.problem_key, spec.index)
    return os.getpid()


def warm_up_all(specs: list[IslandSpec]) -> int:
    """:func:`warm_up` of every island in ``specs`` in this process (a Dask worker); returns its id."""
    for spec in specs:
        warm_up(spec)
    return os.getpid()


def _keys(spec: IslandSpec, state: IslandState, count: int) -> np.ndarray:
    ids = np.arange(state.streams, state.streams + count, dtype=np.uint64)
    return stream_key(np.uint64(spec.seed), ids)


def _rng(spec: IslandSpec, state: IslandState, salt: int) -> np.random.Generator:
    return np.random.default_rng([spec.seed, state.generation, state.restarts, salt])


def _seconds_to(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.perf_counter())


def _new_members(ops, spec: IslandSpec, state: IslandState, count: int, deadline: float | None,
                 seeds: np.ndarray | None = None):
    """``count`` new members, each improved by the local search from a random start, or from one
    of ``seeds`` (warm starts, which take the first places). A seeded member is never worse
    than its seed: should the search return worse, the seed itself is kept."""
    starts = ops.random_solutions(count, _rng(spec, state, 1))
    seeded = 0 if seeds is None else min(count, len(seeds))
    if seeded:
        starts[:seeded] = seeds[:seeded]
    keys = _keys(spec, state, count)
    state.streams += count
    sols, costs, iters = ops.improve(ops.device.asarray(starts, np.int32), keys, time_limit=_seconds_to(deadline))
    state.ls_iterations += int(np.sum(iters))
    for j in range(seeded):
        seed_cost = ops.cost(seeds[j])
        if costs[j] > seed_cost:
            sols[j], costs[j] = seeds[j], seed_cost
    return sols, costs


def _replace(ops, state: IslandState, children: np.ndarray, costs: np.ndarray) -> None:
    pop, pc = state.population, state.costs
    near = max(1, ops.n // 10)
    for c in np.argsort(costs, kind="stable"):
        child, cost = children[c], int(costs[c])
        dist = ops.distances(child, pop)
        if (dist == 0).any():
            continue
        worse = np.flatnonzero(pc > cost)
        if worse.size == 0:
            continue
        closest = worse[np.argmin(dist[worse])]
        victim = closest if dist[closest] < near else worse[np.argmax(pc[worse])]
        pop[victim], pc[victim] = child, cost


def _first_population(ops, spec: IslandSpec, state: IslandState, deadline: float | None,
                      time_left: float | None):
    """The island's first members: ``population`` of them, or for an automatic (EAX) size a first
    few, timed, then as many more as the time budget affords (metaheur/islands/eax.py). The
    warm starts (``spec.initial``, best first) seed the first members."""
    size = spec.params.ga.population
    if size:
        return _new_members(ops, spec, state, size, deadline, spec.initial)
    (pop, costs), per = eax.timed(lambda k: _new_members(ops, spec, state, k, deadline, spec.initial),
                                  eax.MIN_POPULATION)
    more = eax.population_size(per, time_left, eax.MIN_POPULATION) - eax.MIN_POPULATION
    if more > 0 and (deadline is None or time.perf_counter() < deadline):
        extra, extra_costs = _new_members(ops, spec, state, more, deadline)
        pop, costs = np.concatenate([pop, extra]), np.concatenate([costs, extra_costs])
    return pop, costs


def _progress(state: IslandState, t0: float, elapsed: float, limit: float | None,
              generation_limit: int | None) -> float | None:
    """How far the run is, in [0, 1] (time, else generations), or None without a horizon."""
    if limit:
        return min(1.0, (elapsed + time.perf_counter() - t0) / limit)
    if generation_limit:
        return min(1.0, state.generation / generation_limit)
    return None


def _generation(ops, spec: IslandSpec, state: IslandState, deadline: float | None, progress: float | None) -> None:
    ga = spec.params.ga
    pop_size = state.population.shape[0]
    if ga.crossover == "eax":
        keys = _keys(spec, state, pop_size)
        state.streams += pop_size
        eax.eax_generation(ops, state, keys, _rng(spec, state, 2).permutation(pop_size), progress)
        return
    if walks_in(spec):
        _walk_generation(ops, spec, state, deadline)
        return
    count = ga.offspring
    keys = _keys(spec, state, count)
    state.streams += count
    if ga.crossover == "none":
        source = (state.generation * count + np.arange(count)) % pop_size
        children = ops.device.asarray(state.population[source], np.int32)
    else:
        rng = _rng(spec, state, 2)
        a = rng.integers(0, pop_size, size=(count, 2))
        b = rng.integers(0, pop_size, size=(count, 2))
        pick = lambda t: np.where(state.costs[t[:, 0]] <= state.costs[t[:, 1]], t[:, 0], t[:, 1])  # noqa: E731
        pairs = np.stack([pick(a), pick(b)], axis=1)
        children = ops.crossover(state.population, pairs, keys)
        ops.mutate(children, keys)
    sols, costs, iters = ops.improve(children, keys, time_limit=_seconds_to(deadline))
    state.ls_iterations += int(np.sum(iters))
    if ga.crossover == "none":
        better = costs <= state.costs[source]
        state.population[source[better]] = sols[better]
        state.costs[source[better]] = costs[better]
    else:
        _replace(ops, state, sols, costs)


def _walk_generation(ops, spec: IslandSpec, state: IslandState, deadline: float | None) -> None:
    """Every member's tabu search goes on for ``ls_budget`` iterations. A member that is not the
    best of a saved search (the first members, a migrant, members added by the load balancer)
    starts a new search from itself."""
    pop, saved = state.population, state.walks
    owner = np.full(len(pop), -1)
    if saved is not None:
        for i, member in enumerate(pop):
            same = [j for j in np.flatnonzero((saved["best"] == member[None, :]).all(axis=1)) if j not in owner]
            owner[i] = same[0] if same else -1  # each saved search goes on once, even for equal members
    new = np.flatnonzero(owner < 0)
    keys = _keys(spec, state, new.size)
    state.streams += new.size
    walks = saved
    if new.size:  # the new searches come after the saved ones, taken in the members' order
        fresh = ops.new_walks(pop[new], keys)
        known = 0 if saved is None else len(saved["keys"])
        owner[new] = known + np.arange(new.size)
        walks = {k: fresh[k] if saved is None else np.concatenate([saved[k], fresh[k]]) for k in SAVED_SEARCH}
    walks = {k: v[owner] for k, v in walks.items()}
    state.walks, best, costs, iters = ops.walk(walks, time_limit=_seconds_to(deadline))
    state.population, state.costs = best.astype(pop.dtype), costs
    state.ls_iterations += int(np.sum(iters))


def walks_in(spec: IslandSpec) -> bool:
    """Whether the island is a QAP local-search-only island, whose members are continued tabu searches."""
    return spec.params.ga.crossover == "none" and isinstance(spec.problem, QAP)


def ls_only(spec: IslandSpec) -> bool:
    """Whether the island runs local searches only (``crossover = "none"``: QAP tabu walks, TSP
    ILS chains): its generations are steps of those searches, counted apart from GA generations."""
    return spec.params.ga.crossover == "none"


def run_counters(specs: list[IslandSpec], states: list[IslandState]) -> dict[str, int]:
    """What a run's islands did, each counter meaning one thing: ``generations``, GA generations
    per island (the most of any GA island); ``walk_steps``, steps per local-search-only island
    (the most of any); ``search_iterations``, local-search iterations of all islands together
    (population building included)."""
    ga = [st.generation for sp, st in zip(specs, states, strict=True) if not ls_only(sp)]
    walks = [st.generation for sp, st in zip(specs, states, strict=True) if ls_only(sp)]
    return {"generations": max(ga, default=0), "walk_steps": max(walks, default=0),
            "search_iterations": sum(st.ls_iterations for st in states)}


def closed_to_migrants(specs: list[IslandSpec], states: list[IslandState]) -> frozenset[int]:
    """Islands that take no migrant now: a tabu-search island while its best still improves
    within ``restart_after`` generations (0: never), since a migrant restarts one of its searches
    and loses that search's memory."""
    return frozenset(spec.index for spec, state in zip(specs, states, strict=True)
                     if walks_in(spec) and (not spec.params.ga.restart_after
                                            or state.stale < spec.params.ga.restart_after))


def _update_best(state: IslandState) -> bool:
    k = int(np.argmin(state.costs))
    if state.best_cost is None or state.costs[k] < state.best_cost:
        state.best, state.best_cost = state.population[k].copy(), int(state.costs[k])
        return True
    return False


def _update_cycle_best(state: IslandState) -> bool:
    """Whether the population's best improved on its best since the last full restart (none yet: False)."""
    low = int(np.min(state.costs))
    if state.cycle_best is None or low >= state.cycle_best:
        return False
    state.cycle_best = low
    return True


def _restart(ops, spec: IslandSpec, state: IslandState, deadline: float | None) -> None:
    """Replace every member but the best (``restart = "best"``) or every member (``"full"``: the
    island's best stays in ``state.best``) by new improved random solutions."""
    size = state.population.shape[0]
    if spec.params.ga.restart == "full":
        state.population[:], state.costs[:] = _new_members(ops, spec, state, size, deadline)
        state.cycle_best = int(np.min(state.costs))
    else:
        keep = int(np.argmin(state.costs))
        others = np.delete(np.arange(size), keep)
        state.population[others], state.costs[others] = _new_members(ops, spec, state, size - 1, deadline)
    state.restarts += 1
    state.stale = 0


def run_epoch(spec: IslandSpec, state: IslandState, *, generations: int | None = None, seconds: float | None = None,
              time_left: float | None = None, elapsed: float = 0.0, limit: float | None = None,
              generation_limit: int | None = None, in_worker: bool = False) -> tuple[IslandState, EpochStats]:
    """Advance ``state`` by ``generations`` generations or, in time mode, until ``seconds`` pass
    (at least one generation, unless building the first population already took the ``seconds``:
    a slow build then leaves its first generation to the next epoch, so that islands of other
    kinds do not wait for it); returns the new state and what was done.

    ``time_left``: the run's remaining time, a hard cap that also bounds the local searches (a
    generation cut short by it keeps what its searches found). ``elapsed``, ``limit`` (seconds)
    and ``generation_limit`` say how far the whole run is, for algorithms that change with it
    (EAX's selection). ``in_worker``: running in a worker process, which leaves Ctrl-C to the
    parent. CPU kernels run on ``spec.cpu_threads`` OpenMP threads (one: an island is one core's
    work)."""
    if in_worker and os.getpid() != spec.owner_pid and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's (Dask runs tasks in threads)
    set_cpu_threads(spec.cpu_threads)
    t0 = time.perf_counter()
    ops = operators_for(spec.problem, spec.device, spec.params, spec.problem_key, spec.index)
    state = replace(state, population=None if state.population is None else state.population.copy(),
                    costs=None if state.costs is None else state.costs.copy())
    start_best, start_iters, done = state.best_cost, state.ls_iterations, 0
    improvements: list[tuple[float, int]] = []
    deadline = None if time_left is None else t0 + time_left
    size = spec.params.ga.population
    built = state.population is None
    if built:
        state.population, state.costs = _first_population(ops, spec, state, deadline, time_left)
        _update_best(state)
        improvements.append((time.perf_counter() - t0, state.best_cost))
    elif size == 0:  # an automatic size is kept once chosen
        pass
    elif state.population.shape[0] < size:  # resized by the load balancer: add members
        extra, extra_costs = _new_members(ops, spec, state, size - state.population.shape[0], deadline)
        state.population = np.concatenate([state.population, extra])
        state.costs = np.concatenate([state.costs, extra_costs])
        if _update_best(state):
            state.stale = 0
            improvements.append((time.perf_counter() - t0, state.best_cost))
    elif state.population.shape[0] > size:  # keep the best
        keep = np.argsort(state.costs, kind="stable")[:size]
        state.population, state.costs = state.population[keep], state.costs[keep]
    target = spec.target
    if spec.params.ga.crossover == "eax":
        ops.eax_begin(state.population)
    while True:
        now = time.perf_counter()
        if target is not None and state.best_cost is not None and state.best_cost <= target:
            break
        if generations is not None and done >= generations:
            break
        if seconds is not None and (done > 0 or built) and now - t0 >= seconds:
            break
        if deadline is not None and now >= deadline:
            break
        _generation(ops, spec, state, deadline, _progress(state, t0, elapsed, limit, generation_limit))
        state.generation += 1
        done += 1
        cycle_improved = _update_cycle_best(state)
        if _update_best(state):
            state.stale = 0
            improvements.append((time.perf_counter() - t0, state.best_cost))
        elif cycle_improved:
            state.stale = 0
        else:
            state.stale += 1
        restart_after = spec.params.ga.restart_after
        if (restart_after and state.stale >= restart_after and state.population.shape[0] > 1
                and (spec.params.ga.crossover != "eax"
                     or eax.may_restart(_progress(state, t0, elapsed, limit, generation_limit)))):
            _restart(ops, spec, state, deadline)
            if _update_best(state):
                improvements.append((time.perf_counter() - t0, state.best_cost))
            if spec.params.ga.crossover == "eax":
                ops.eax_begin(state.population)
    improved = start_best is None or (state.best_cost is not None and state.best_cost < start_best)
    stats = EpochStats(spec.index, spec.device, done, state.ls_iterations - start_iters,
                       time.perf_counter() - t0, state.best_cost, improved, state.restarts, improvements)
    return state, stats

