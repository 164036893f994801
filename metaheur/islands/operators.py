"""Problem-specific operators of a memetic island: random solutions, crossover, mutation, local
search of children, distance between solutions, exact cost. One class per problem, each backed
by the batched kernels; instances of them are cached per process (a worker builds them once)."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import numpy as np

from metaheur import live
from metaheur.device_data import neighbours, tsp_data
from metaheur.devices import Device, parse_device, to_host
from metaheur.ga.qap_ga import QAPCrossover
from metaheur.ga.tsp_eax import EAXGenerations
from metaheur.ga.tsp_ga import TSPCrossover
from metaheur.islands.params import IslandParams, default_ls_budget
from metaheur.islands.tour_edges import edge_keys, missing_edges
from metaheur.problems import QAP, TSP
from metaheur.problems.atsp import TwinTSP
from metaheur.search.qap_tabu import ITER, QAPTabuBatch, fresh_searches
from metaheur.search.tsp_descent import TSPDescentBatch
from metaheur.search.tsp_ils import TSPILSBatch, greedy_tour
from metaheur.search.tsp_starts import curve_tours

KICK_REVERSALS, KICK_WINDOW = 3, 50  # the kick of a GPU island's parallel local search
CURVE_START_N = 10_000  # from this size CPU EAX members start from curve tours (docs/decisions/tsp-start.md)


def is_out_of_memory(exc: BaseException) -> bool:
    """True for a device or host allocation failure (CuPy's OutOfMemoryError, MemoryError)."""
    return isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError"


def split_on_oom(improve, children: np.ndarray, keys: np.ndarray, time_limit: float | None):
    """Run ``improve(children, keys, time_limit)``; when the device runs out of memory, run the two
    halves of the batch one after the other (recursively), so a batch too large for the device
    still completes. A single child that does not fit re-raises."""
    try:
        return improve(children, keys, time_limit)
    except Exception as exc:
        if not is_out_of_memory(exc) or len(keys) < 2:
            raise
    half = len(keys) // 2
    a = split_on_oom(improve, children[:half], keys[:half], time_limit)
    b = split_on_oom(improve, children[half:], keys[half:], time_limit)
    return tuple(np.concatenate([x, y]) for x, y in zip(a, b, strict=True))


def curve_starts(problem: TSP, device: Device, starts: str) -> bool:
    """Whether new EAX members start from Hilbert-curve tours (:func:`curve_tours`): for
    ``starts = "curve"``, or ``"auto"`` on an instance with coordinates (an ATSP's twin has none)
    on a GPU, whose parallel descent needs far fewer passes from them, or of at least
    ``CURVE_START_N`` cities, where the descent from a random tour is several times slower and
    ends no better (docs/decisions/tsp-start.md)."""
    if starts != "auto":
        return starts == "curve"
    return problem.coords is not None and (device.is_gpu or problem.n >= CURVE_START_N)


class _Operators:
    """What every problem's operators hold: the problem, the device, the island parameters, the
    batched crossovers (``crossovers``, of metaheur/ga/) and the local-search budget per child
    (``ls_budget``, chosen by the island's algorithm)."""

    kind = ""
    crossovers = None

    def __init__(self, problem: QAP | TSP, device: Device, params: IslandParams, ls_budget: int | None = None):
        self.problem = problem
        self.device = device
        self.params = params
        self.n = problem.n
        self.ga = self.crossovers(device, problem.n)
        self.ls_budget = default_ls_budget(params.ga, self.kind, problem.n) if ls_budget is None else ls_budget


class QAPOperators(_Operators):
    """Robust tabu search children for the QAP; crossovers of kernels/qap_ga.cu."""

    kind = "qap"
    crossovers = QAPCrossover

    def __init__(self, qap: QAP, device: Device, params: IslandParams, ls_budget: int | None = None,
                 quadrant: int | None = None):
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
            self._tabu = QAPTabuBatch(self.problem, self.device, starts=starts, keys=keys, params=self.params.tabu)
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


def canonical_tours(tours: np.ndarray) -> np.ndarray:
    """Each tour rotated to start at city 0 and turned so that its second city is smaller than
    its last: one array per cycle, so equal tours compare equal (migration, duplicates)."""
    tours = np.asarray(tours)
    n = tours.shape[1]
    start = np.argmax(tours == 0, axis=1)
    idx = (start[:, None] + np.arange(n)[None, :]) % n
    out = np.take_along_axis(tours, idx, axis=1)
    flip = out[:, 1] > out[:, -1]
    out[flip, 1:] = out[flip, 1:][:, ::-1]
    return out


class TSPOperators(_Operators):
    """Iterated-local-search children for the TSP, crossovers of kernels/tsp_ga.cu, and the EAX
    generations of kernels/tsp_eax.cu (``eax``, :class:`EAXGenerations`). Tours leave the operators
    in canonical form (:func:`canonical_tours`)."""

    kind = "tsp"
    crossovers = TSPCrossover

    def __init__(self, tsp: TSP, device: Device, params: IslandParams, ls_budget: int | None = None,
                 quadrant: int | None = None):
        """``quadrant``: quadrant neighbours of the candidate lists (None: the ILS parameters')."""
        super().__init__(tsp, device, params, ls_budget)
        ils = params.ils
        quadrant = ils.quadrant if quadrant is None else quadrant
        self.neigh = neighbours(tsp, ils.neighbours, device, quadrant=min(quadrant, ils.neighbours // 4,
                                                                          (tsp.n - 1) // 4))
        self.data = tsp_data(tsp, device)  # uploaded once: EXPLICIT instances carry their matrix
        self._descent = TSPDescentBatch(tsp, device, neigh=self.neigh) if device.is_gpu else None
        self._greedy = None
        self.curve_starts = curve_starts(tsp, device, params.ga.starts)
        self.eax = EAXGenerations(tsp, self.data, self.neigh, device, params.ga.tries)

    def random_tours(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """Diverse start tours, in canonical form (an EAX population needs their diversity):
        uniformly random ones, or where :func:`curve_starts` says so Hilbert-curve tours of
        randomly turned and shifted planes (:func:`curve_tours`), from which a descent needs far
        fewer moves; for an ATSP's twin instance, random tours of the ATSP in their twin form."""
        if isinstance(self.problem, TwinTSP):
            return canonical_tours(self.problem.random_tours(count, rng))
        if self.curve_starts:
            return canonical_tours(curve_tours(self.problem.coords, count, rng))
        return canonical_tours(np.array([rng.permutation(self.n) for _ in range(count)]))

    def random_solutions(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """Greedy-edge tours perturbed by random segment reversals (cheaper for the local search
        on large instances than random tours)."""
        if self._greedy is None:
            self._greedy = greedy_tour(self.problem, self.neigh, self.device)
        starts = np.tile(self._greedy, (count, 1))
        keys = rng.integers(0, 2**63, size=count, dtype=np.uint64)
        dev = self.device
        children = dev.asarray(starts, np.int32)
        self.ga.reverse_segments(children, dev.asarray(keys), max(1, self.n // 20), counters=dev.zeros(count, np.int64))
        return canonical_tours(to_host(children).astype(np.int64))

    def crossover(self, population: np.ndarray, pairs: np.ndarray, keys: np.ndarray):
        return self.ga.crossover(population, pairs, keys)

    def mutate(self, children, keys: np.ndarray) -> None:
        if self.params.ga.mutation > 0:
            self.ga.reverse_segments(children, self.device.asarray(keys), self.params.ga.mutation)

    def improve(self, children, keys: np.ndarray, time_limit: float | None = None, kicks: int | None = None,
                descended: bool = False):
        """Iterated local search from every child (``kicks`` kicks, default ``ls_budget``, cut
        short by ``time_limit``; ``descended``: the children are local optima already, the CPU
        search skips its first descent); returns (best tours, exact lengths, iterations: kicks and
        descent moves). A batch too large for the device's memory is split."""
        kicks = self.ls_budget if kicks is None else kicks
        improve = lambda c, k, t: self._improve(c, k, t, kicks, descended)  # noqa: E731
        return split_on_oom(improve, to_host(children).astype(np.int64), np.asarray(keys), time_limit)

    def _improve(self, starts: np.ndarray, keys: np.ndarray, time_limit: float | None, kicks: int,
                 descended: bool):
        if self._descent is not None:
            return self._improve_parallel(starts, keys, time_limit, kicks)
        seed = int(keys[0]) if len(keys) else 0
        batch = TSPILSBatch(self.problem, self.device, starts=starts, seed=seed, params=self.params.ils,
                            neigh=self.neigh, data=self.data, descended=descended)
        result = batch.run(kicks, time_limit=time_limit)
        # a search's iterations: its kicks and the improving moves of the descent that began it
        return canonical_tours(result.best), result.best_costs, result.iterations + result.extra["descent_moves"]

    def _improve_parallel(self, starts: np.ndarray, keys: np.ndarray, time_limit: float | None, rounds: int):
        """A GPU island's local search: the GPU evaluates neighbourhoods, the host drives (Luong,
        Melab and Talbi 2013). Every child descends by best-improvement 2-opt and Or-opt with one
        thread per candidate move (:class:`TSPDescentBatch`), then ``rounds`` rounds kick every
        child's best tour (random segment reversals from its own stream) and descend again; a
        child keeps a kicked tour that is not longer. The tours stay on the device from the first
        descent to the last. Returns (tours, exact lengths, iterations: kicks and the moves of the
        first descent, as :meth:`_improve` counts them)."""
        dev, count, descent = self.device, len(keys), self._descent
        t0 = time.perf_counter()
        left = lambda: None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - t0))  # noqa: E731
        best = dev.asarray(np.array([self.problem.check_tour(t) for t in starts]), np.int32)
        best_len = descent.lengths(best)
        kicks = descent.descend(best, best_len, time_limit=left()).iterations.astype(np.int64)
        d_keys, counters = dev.asarray(np.asarray(keys, dtype=np.uint64)), dev.zeros(count, np.int64)
        for _ in range(rounds):
            if (time_limit is not None and left() <= 0) or live.stop_requested():
                break
            live.beat()
            with dev.context():
                kicked = best.copy()
            self.ga.reverse_segments(kicked, d_keys, KICK_REVERSALS, KICK_WINDOW, counters)
            kicked_len = descent.lengths(kicked)
            descent.descend(kicked, kicked_len, time_limit=left())
            descent.keep_better(best, best_len, kicked, kicked_len)
            kicks += 1
        tours = to_host(best).astype(np.int64)
        return canonical_tours(tours), np.array([self.problem.tour_length(t) for t in tours]), kicks

    def distances(self, solution: np.ndarray, population: np.ndarray) -> np.ndarray:
        """Edges of ``solution`` missing from each member (0 for the same tour in any rotation or
        direction)."""
        return missing_edges(edge_keys(solution), edge_keys(population))[0]

    def distance_tables(self, children: np.ndarray, population: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`distances` of every child to every member (C x P) and to every child (C x C),
        each tour's edges keyed once (:mod:`metaheur.islands.tour_edges`)."""
        kids = edge_keys(children)
        return missing_edges(kids, edge_keys(population)), missing_edges(kids, kids)

    def cost(self, solution) -> int:
        return self.problem.tour_length(solution)


_CACHE: dict[tuple, object] = {}
_CACHE_SIZE = 8  # operators hold device buffers: keep those of the islands of one run
_CACHE_LOCK = threading.Lock()  # GPU islands' threads look up and build at the same time


def operators_for(problem: QAP | TSP, device: str | Device, params: IslandParams, key: str, *,
                  ls_budget: int | None = None, quadrant: int | None = None, island: int | None = None):
    """The operators of ``problem`` on ``device`` (cached in this process under ``key``, a
    fingerprint of the instance, and their owner). Islands that take turns in one thread (the
    epochs of a worker process) share them: an island sets up its searches from its own state at
    every epoch, so only buffers and instance data (neighbour lists, the instance on the device)
    are kept, once a process rather than once an island. Islands that run at the same time as
    threads of one process (Dask's threads) get their own. ``island``: the island that owns them
    instead of the calling thread (the model's own islands, GPU islands among them, whose epochs
    run on a new thread each: their warm-up's operators then serve every epoch). The generation
    size (population, offspring), which the balancer changes and the operators do not use, is
    not part of the key.
    ``ls_budget``: local-search effort per child (None: the GA parameters' or the size-based
    default, :func:`default_ls_budget`); ``quadrant``: TSP candidate lists' quadrant neighbours
    (None: the ILS parameters')."""
    dev = parse_device(device)
    owner = ("island", island) if island is not None else ("thread", threading.get_ident())
    shape_free = replace(params, ga=replace(params.ga, population=1, offspring=1))
    cache_key = (key, dev.name, shape_free, owner, ls_budget, quadrant)
    with _CACHE_LOCK:
        ops = _CACHE.get(cache_key)
    if ops is None:
        ops = problem.operators(dev, params, ls_budget, quadrant)
        with _CACHE_LOCK:
            if len(_CACHE) >= _CACHE_SIZE:
                _CACHE.pop(next(iter(_CACHE)))  # forget the oldest
            _CACHE[cache_key] = ops
    return ops
