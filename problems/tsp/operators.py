"""The TSP's operators for the memetic, EAX and ILS islands: start tours (random, Hilbert-curve or
greedy-edge ones), the order crossover and segment reversals (metaheur/ga/order_ga.py), the
iterated local search of children (problems/tsp/ils.py; on a GPU the parallel descent of
problems/tsp/descent.py), the EAX generations (problems/tsp/eax.py), edge distances, exact
lengths. Tours leave them in canonical form (:func:`canonical_tours`)."""

from __future__ import annotations

import time

import numpy as np

from metaheur import live
from metaheur.devices import Device, to_host
from metaheur.ga.order_ga import OrderGA
from metaheur.islands.operators import Operators, split_on_oom
from metaheur.islands.params import IslandParams
from metaheur.problems.tsp.descent import TSPDescentBatch
from metaheur.problems.tsp.device_data import neighbours, tsp_data
from metaheur.problems.tsp.eax import EAXGenerations
from metaheur.problems.tsp.ils import TSPILSBatch, greedy_tour
from metaheur.problems.tsp.params import EAXParams, ILSParams
from metaheur.problems.tsp.problem import TSP, canonical_tours
from metaheur.problems.tsp.starts import curve_tours
from metaheur.problems.tsp.tour_edges import edge_keys, missing_edges

KICK_REVERSALS, KICK_WINDOW = 3, 50  # the kick of a GPU island's parallel local search
CURVE_START_N = 10_000  # from this size CPU EAX members start from curve tours (docs/decisions/tsp-start.md)


def curve_starts(problem: TSP, device: Device, starts: str) -> bool:
    """Whether new EAX members start from Hilbert-curve tours (:func:`curve_tours`): for
    ``starts = "curve"``, or ``"auto"`` on an instance with coordinates (an ATSP's twin has none)
    on a GPU, whose parallel descent needs far fewer passes from them, or of at least
    ``CURVE_START_N`` cities, where the descent from a random tour is several times slower and
    ends no better (docs/decisions/tsp-start.md)."""
    if starts != "auto":
        return starts == "curve"
    return problem.coords is not None and (device.is_gpu or problem.n >= CURVE_START_N)


class TSPOperators(Operators):
    """Iterated-local-search children for the TSP, crossovers of kernels/engine/order_ga.cu, and the EAX
    generations of kernels/tsp/tsp_eax.cu (``eax``, :class:`EAXGenerations`). Tours leave the operators
    in canonical form (:func:`canonical_tours`)."""

    crossovers = OrderGA

    def __init__(self, tsp: TSP, device: Device, params: IslandParams, ls_budget: int | None = None,
                 quadrant: int | None = None):
        """``quadrant``: quadrant neighbours of the candidate lists (None: the ILS parameters')."""
        super().__init__(tsp, device, params, ls_budget)
        ils = params.search(ILSParams)
        quadrant = ils.quadrant if quadrant is None else quadrant
        self.neigh = neighbours(tsp, ils.neighbours, device, quadrant=min(quadrant, ils.neighbours // 4,
                                                                          (tsp.n - 1) // 4))
        self.data = tsp_data(tsp, device)  # uploaded once: EXPLICIT instances carry their matrix
        self._descent = TSPDescentBatch(tsp, device, neigh=self.neigh) if device.is_gpu else None
        self._greedy = None
        eax = params.search(EAXParams)
        self.curve_starts = curve_starts(tsp, device, eax.starts)
        self.eax = EAXGenerations(tsp, self.data, self.neigh, device, eax.tries, ils.eax_kernel)

    def random_tours(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """Diverse start tours, in canonical form (an EAX population needs their diversity):
        uniformly random ones, or where :func:`curve_starts` says so Hilbert-curve tours of
        randomly turned and shifted planes (:func:`curve_tours`), from which a descent needs far
        fewer moves; else the instance's random tours (:meth:`TSP.random_tours`: an ATSP's twin
        instance draws random tours of the ATSP in their twin form)."""
        if self.curve_starts:
            return canonical_tours(curve_tours(self.problem.coords, count, rng))
        return canonical_tours(self.problem.random_tours(count, rng))

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
        batch = TSPILSBatch(self.problem, self.device, starts=starts, seed=seed, params=self.params.search(ILSParams),
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
        first descent, as :meth:`_improve` counts them).

        The host waits on the device in a kick round only where it must decide: at the descent's
        looks at its deltas (whether a tour still improves). A round's descent is not waited for
        at its end nor read back (``descend(wait=False)``): its keep-better and the next round's
        kick, lengths and first passes queue behind it while the host checks the time and reports
        (issue 62). Purely a scheduling change, hence no switch: the same kernels are launched
        with the same arguments in the same order on one stream, so the tours are the same bit
        for bit (tests/gpu/test_kick_overlap.py)."""
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
            descent.descend(kicked, kicked_len, time_limit=left(), wait=False)
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
        each tour's edges keyed once (:mod:`metaheur.problems.tsp.tour_edges`)."""
        kids = edge_keys(children)
        return missing_edges(kids, edge_keys(population)), missing_edges(kids, kids)

    def cost(self, solution) -> int:
        return self.problem.tour_length(solution)
