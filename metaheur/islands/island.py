"""An island's epoch, a pure function of (spec, state, budget), and the island's plain-data state.

An epoch runs generations of the island's algorithm (:func:`island_class`: one class per
algorithm, see metaheur/islands/base.py) until its budget (generations, or seconds in time mode)
is spent. An island whose population's best has not improved for ``restart_after`` generations
restarts (:meth:`Island.restart`): it keeps its best and refills the rest with new improved
random solutions, or with ``restart = "full"`` replaces every member (the island's best stays in
its state).

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

from metaheur import live, signals
from metaheur.engine import set_cpu_threads
from metaheur.islands.base import Island, seconds_to
from metaheur.islands.operators import operators_for
from metaheur.islands.params import GAParams, IslandParams, crossover_island
from metaheur.problem.interface import Problem


@dataclass(frozen=True)
class IslandSpec:
    """What does not change between epochs: the problem, the device, the parameters."""

    index: int
    problem: Problem  # what the islands search (the search form's problem)
    fingerprint: str  # problem.fingerprint(), computed once
    device: str
    params: IslandParams
    seed: int  # this island's 64-bit seed (from a numpy SeedSequence)
    target: int | None = None
    cpu_threads: int = 1
    owner_pid: int = 0  # the process running the model (a "worker" that is that process keeps Ctrl-C)
    live_folder: str | None = None  # the run's stop request and progress reports (metaheur.live.Board)
    initial: np.ndarray | None = field(default=None, compare=False)  # k x n warm starts, best first

    @property
    def algorithm(self) -> type[Island]:
        """The island's algorithm class (:func:`island_class`)."""
        return island_class(self.problem, self.params.ga)


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
    searches: dict | None = None  # tabu islands: the saved tabu searches (QAPTabuBatch.snapshot); ILS islands of
    # chains that go on from where they stood: each slot's current solution and the member it left
    cycle_best: int | None = None  # after a full restart: the population's best cost since (else None)
    spread: float | None = None  # bnp replacement: the members' mean distance when the population was built

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
    """What one epoch of one island did; ``improvements``: (seconds into the epoch, new best);
    ``build_seconds``: the part of ``seconds`` spent building members (the first population, a
    resized one, restarts) rather than in generations."""

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
    build_seconds: float = 0.0


def island_class(problem: Problem, ga: GAParams) -> type[Island]:
    """The algorithm of an island of ``problem`` with GA parameters ``ga``: the class the problem
    names for the crossover (:meth:`Problem.island_algorithms`: the tabu island of the QAP or the
    ILS island of the TSP without crossover, the EAX GA of the TSP for ``eax``), else the memetic
    GA (:func:`~metaheur.islands.params.crossover_island`)."""
    return crossover_island(ga.crossover, problem)


def island_for(spec: IslandSpec) -> Island:
    """The island's algorithm on its operators (built once per process, see :func:`operators_for`;
    in the model's own process once per island, whose epochs run on a new thread each)."""
    cls = spec.algorithm
    ga = spec.params.ga
    ops = operators_for(spec.problem, spec.device, spec.params, spec.fingerprint,
                        ls_budget=cls.ls_budget(ga, spec.problem),
                        options=cls.operator_options,
                        island=spec.index if os.getpid() == spec.owner_pid else None)
    return cls(spec, ops)


def leave_stop_signals_to_owner(spec: IslandSpec) -> None:
    """In a worker process (not the run's own, ``spec.owner_pid``), ignore the stop signals
    (Ctrl-C, SIGTERM, SIGHUP: a terminal, ``kill -TERM -PGID`` and a batch scheduler send them to
    the whole process group): they are the run's, which then asks the islands to stop; a worker
    ends with the run (:func:`metaheur.signals.watch_parent`). Dask runs tasks in threads, which
    keep them."""
    if os.getpid() != spec.owner_pid and threading.current_thread() is threading.main_thread():
        for signum in signals.STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)


def warm_up(spec: IslandSpec) -> int:
    """Build this island's operators (imports, kernels) in the calling worker process before a
    run's clock starts; returns the process id."""
    island_for(spec)
    return os.getpid()


def warm_up_all(specs: list[IslandSpec]) -> int:
    """:func:`warm_up` of every island in ``specs`` in this process (a Dask worker); returns its id."""
    for spec in specs:
        warm_up(spec)
    return os.getpid()


def refusing_migrants(specs: list[IslandSpec], states: list[IslandState]) -> frozenset[int]:
    """The islands that take no migrant after this epoch (:meth:`Island.accepts_migrants`)."""
    return frozenset(spec.index for spec, state in zip(specs, states, strict=True)
                     if not spec.algorithm.accepts_migrants(spec.params, state))


def _progress(state: IslandState, t0: float, elapsed: float, limit: float | None,
              generation_limit: int | None) -> float | None:
    """How far the run is, in [0, 1] (time, else generations), or None without a horizon."""
    if limit:
        return min(1.0, (elapsed + time.perf_counter() - t0) / limit)
    if generation_limit:
        return min(1.0, state.generation / generation_limit)
    return None


def ls_only(spec: IslandSpec) -> bool:
    """Whether the island runs local searches only (:attr:`Island.local_search_only`: tabu and ILS
    islands): its generations are steps of those searches, counted apart from GA generations."""
    return spec.algorithm.local_search_only


def run_counters(specs: list[IslandSpec], states: list[IslandState]) -> dict[str, int]:
    """What a run's islands did, each counter meaning one thing: ``generations``, GA generations
    per island (the most of any GA island); ``search_steps``, steps per local-search-only island
    (the most of any); ``search_iterations``, local-search iterations of all islands together
    (population building included)."""
    ga = [st.generation for sp, st in zip(specs, states, strict=True) if not ls_only(sp)]
    steps = [st.generation for sp, st in zip(specs, states, strict=True) if ls_only(sp)]
    return {"generations": max(ga, default=0), "search_steps": max(steps, default=0),
            "search_iterations": sum(st.ls_iterations for st in states)}


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
    (EAX's selection); no island goes past ``generation_limit``. ``in_worker``: running in a
    worker process, which leaves Ctrl-C to the parent. CPU kernels run on ``spec.cpu_threads``
    OpenMP threads (one: an island is one core's work). The run's stop request ends the epoch
    within a kernel launch, keeping what was found, and the island reports its progress while it
    runs (:mod:`metaheur.live`)."""
    if in_worker:
        leave_stop_signals_to_owner(spec)
    set_cpu_threads(spec.cpu_threads)
    t0 = time.perf_counter()
    island = island_for(spec)
    state = replace(state, population=None if state.population is None else state.population.copy(),
                    costs=None if state.costs is None else state.costs.copy())
    deadline = None if time_left is None else t0 + time_left
    with live.island_epoch(spec.live_folder, spec.index, state, deadline):
        out = _epoch(spec, island, state, t0, generations, seconds, deadline, elapsed, limit, generation_limit)
        live.beat(final=True)  # the epoch's best reported, should the run give up waiting for its result
        return out


def _epoch(spec: IslandSpec, island: Island, state: IslandState, t0: float, generations: int | None,
           seconds: float | None, deadline: float | None, elapsed: float, limit: float | None,
           generation_limit: int | None) -> tuple[IslandState, EpochStats]:
    """The body of :func:`run_epoch` on the epoch's own copy of the state."""
    start_best, start_iters = state.best_cost, state.ls_iterations
    improvements: list[tuple[float, int]] = []
    built = state.population is None
    if built:
        state.population, state.costs = island.first_population(state, deadline, seconds_to(deadline))
        _update_best(state)
        improvements.append((time.perf_counter() - t0, state.best_cost))
    elif _resize(island, state, deadline):
        improvements.append((time.perf_counter() - t0, state.best_cost))
    build_seconds = time.perf_counter() - t0
    island.begin(state)
    progress = lambda: _progress(state, t0, elapsed, limit, generation_limit)  # noqa: E731
    done = 0
    while _may_go_on(spec, state, done, built, t0, generations, seconds, deadline, generation_limit):
        island.generation(state, deadline, progress())
        state.generation += 1
        done += 1
        if _after_generation(state):
            improvements.append((time.perf_counter() - t0, state.best_cost))
        live.beat()
        restart_after = spec.params.ga.restart_after
        if (restart_after and state.stale >= restart_after and state.population.shape[0] > 1
                and island.may_restart(progress()) and not live.stop_requested()):
            t_restart = time.perf_counter()
            island.restart(state, deadline)
            if _update_best(state):
                improvements.append((time.perf_counter() - t0, state.best_cost))
            island.begin(state)
            build_seconds += time.perf_counter() - t_restart
    improved = start_best is None or (state.best_cost is not None and state.best_cost < start_best)
    stats = EpochStats(spec.index, spec.device, done, state.ls_iterations - start_iters,
                       time.perf_counter() - t0, state.best_cost, improved, state.restarts, improvements,
                       build_seconds=build_seconds)
    return state, stats


def _resize(island: Island, state: IslandState, deadline: float | None) -> bool:
    """Bring a population resized by the load balancer to its new size: new improved members, or
    the best ones kept (an automatic size, 0, is kept once chosen); returns whether the best improved."""
    size, have = island.spec.params.ga.population, state.population.shape[0]
    if size and have < size:
        extra, extra_costs = island.new_members(state, size - have, deadline)
        state.population = np.concatenate([state.population, extra])
        state.costs = np.concatenate([state.costs, extra_costs])
        if _update_best(state):
            state.stale = 0
            return True
    elif size and have > size:
        keep = np.argsort(state.costs, kind="stable")[:size]
        state.population, state.costs = state.population[keep], state.costs[keep]
    return False


def _may_go_on(spec: IslandSpec, state: IslandState, done: int, built: bool, t0: float,
               generations: int | None, seconds: float | None, deadline: float | None,
               generation_limit: int | None) -> bool:
    """Whether the epoch runs another generation: not at the target, within its generations, its
    seconds (at least one generation unless this epoch built the population), the run's
    generation limit (``--generations``: no island goes past it, whatever its epochs), the run's
    deadline and its stop request."""
    now = time.perf_counter()
    if live.stop_requested():
        return False
    if generation_limit is not None and state.generation >= generation_limit:
        return False
    if spec.target is not None and state.best_cost is not None and state.best_cost <= spec.target:
        return False
    if generations is not None and done >= generations:
        return False
    if seconds is not None and (done > 0 or built) and now - t0 >= seconds:
        return False
    return deadline is None or now < deadline


def _after_generation(state: IslandState) -> bool:
    """Update the best and the generations without progress (a new best, or a new best of the
    population since its last full restart, resets them); returns whether the best improved."""
    cycle_improved = _update_cycle_best(state)
    if _update_best(state):
        state.stale = 0
        return True
    if cycle_improved:
        state.stale = 0
    else:
        state.stale += 1
    return False
