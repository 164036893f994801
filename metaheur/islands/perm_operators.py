"""Operators of a user's permutation problem (metaheur/problem/permutation.py) for the memetic and
local-search islands: random solutions (an NEH start where the problem gives a construction key
and partial_insert_row), the permutation crossovers (kernels/engine/perm_ga.cu: pmx, cx, ux, the last
position-based for assignments; kernels/engine/order_ga.cu: ox for orders), swap mutation, the generic
local search (metaheur/search/perm_search.py), the problem's distances, exact costs. Costs are in the
engine's sense (``problem.engine_sign * value``)."""

from __future__ import annotations

import numpy as np

from metaheur import live
from metaheur.devices import Device, parse_device, to_host
from metaheur.engine.user_source import upload
from metaheur.ga.order_ga import CROSSOVER as ORDER_CROSSOVER
from metaheur.ga.order_ga import OrderGA
from metaheur.ga.perm_ga import PermGA
from metaheur.islands.operators import split_on_oom
from metaheur.islands.params import IslandParams
from metaheur.search.perm_search import KERNELS, PermSearchBatch, PermSearchParams


def default_perm_budget(method: str, n: int) -> int:
    """Local-search effort per child: tabu 10 n iterations, ILS and iterated greedy n / 2 kicks or
    iterations (at least 20)."""
    return 10 * n if method == "tabu" else max(20, n // 2)


def neh(problem, device: str | Device = "cpu", ties: bool = False, kernel: str = "classic") -> np.ndarray:
    """NEH (Nawaz, Enscore and Ham 1983) with the problem's ``construction_key``: elements in
    decreasing key order (stable), each inserted at its best position of the partial sequence
    (``partial_insert_row``; ties: the least ``partial_insert_tie`` where ``ties`` and the problem
    has one, then the first). Should the island's time be up (:func:`metaheur.live.time_up`), the
    elements not inserted yet follow in key order: a whole permutation, at once. ``kernel``
    (``PermSearchParams.kernel``): ``classic``, one launch and a read-back an element; ``warp``,
    the whole construction in one launch (:func:`neh_sequences`); the same sequence."""
    order = np.argsort(-np.asarray(problem.construction_key(), dtype=np.float64), kind="stable")
    if kernel != "classic":
        return neh_sequences(problem, order[None, :], device, ties)[0][0]
    dev, n = parse_device(device), problem.n
    code = problem.user_code()
    mod = code.module("engine/perm_eval.cu", dev)
    fields, arrays = problem.kernel_data()
    data = upload(fields, arrays, dev)
    seq = [int(order[0])]
    ws = problem.work_entries()
    kernel, rows, work = mod.kernel("perm_insert_best"), dev.zeros((1, n + 1), np.int64), dev.zeros((1, ws), np.int64)
    pos = dev.zeros(1, np.int64)
    buf = np.zeros((1, n), np.int32)
    for elem in order[1:]:
        if live.time_up():
            seq.extend(int(e) for e in order[len(seq):])
            break
        buf[0, :len(seq)] = seq
        kernel(1, 1, (dev.asarray(buf), dev.asarray(np.array([len(seq)], np.int32)),
                      dev.asarray(np.array([elem], np.int32)), 1, n, int(ties), work, ws, rows, pos, *data))
        seq.insert(int(to_host(pos)[0]), int(elem))
    return np.array(seq, dtype=np.int64)


def neh_sequences(problem, orders: np.ndarray, device: str | Device = "cpu",
                  ties: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """NEH from every row of ``orders`` (k x n element orders) in one launch of ``perm_neh``
    (kernels/engine/perm_eval.cu, the warp kernels: one warp a sequence on a GPU): (the k
    sequences, the elements each placed at its best position, n where the construction is whole;
    fewer where the island's time ran out, the rest following in their order)."""
    dev, n = parse_device(device), problem.n
    orders = np.ascontiguousarray(orders, dtype=np.int32).reshape(-1, n)
    k, ws = len(orders), problem.work_entries()
    defines, gpu_block = KERNELS["warp"]
    mod = problem.user_code().module("engine/perm_eval.cu", dev, defines)
    fields, arrays = problem.kernel_data()
    seqs, done = dev.zeros((k, n), np.int32), dev.zeros(k, np.int32)
    args = (dev.asarray(orders), k, n, int(ties), dev.zeros((k, ws), np.int64), ws, dev.zeros((k, n + 1), np.int64),
            seqs, done)
    mod.kernel("perm_neh")(k, gpu_block if dev.is_gpu else 1, (*args, *upload(fields, arrays, dev)))
    return to_host(seqs).astype(np.int64), to_host(done).astype(np.int64)


class PermCrossovers:
    """The GA's crossover (``params.ga.crossover``) and swap mutation of permutations."""

    def __init__(self, device: Device, n: int, params: IslandParams):
        self.device, self.n, self.params = device, n, params
        self.ga = PermGA(device, n)
        self._ox: OrderGA | None = None

    def crossover(self, population: np.ndarray, pairs: np.ndarray, keys: np.ndarray):
        kind = self.params.ga.crossover
        if kind == ORDER_CROSSOVER:
            if self._ox is None:
                self._ox = OrderGA(self.device, self.n)
            children = self._ox.crossover(population, pairs, keys)
            self.ga.counters = self._ox.counters  # the mutation draws on after the crossover
            return children
        return self.ga.crossover(population, pairs, keys, kind)

    def mutate(self, children, keys: np.ndarray) -> None:
        self.ga.mutate(children, keys, self.params.ga.mutation)


class PermOperators:
    """What the islands drive for a :class:`~metaheur.problem.permutation.PermutationProblem`."""

    def __init__(self, problem, device: Device, params: IslandParams, ls_budget: int | None = None):
        self.problem, self.device, self.params, self.n = problem, parse_device(device), params, problem.n
        self.method, _ = params.search(PermSearchParams).resolved(problem)
        self.ls_budget = (params.ga.ls_budget if params.ga.ls_budget is not None
                          else default_perm_budget(self.method, self.n)) if ls_budget is None else ls_budget
        self.ga = PermCrossovers(self.device, self.n, params)
        self._batch: PermSearchBatch | None = None
        self._neh: np.ndarray | None = None

    def random_solutions(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """Random permutations; the first is the NEH sequence where the problem has a construction key."""
        out = np.array([rng.permutation(self.n) for _ in range(count)], dtype=np.int64)
        code = self.problem.user_code()
        if count and code.has("partial_insert_row") and self.problem.construction_key() is not None:
            start = self._neh
            if start is None:
                search = self.params.search(PermSearchParams)
                start = neh(self.problem, self.device, search.ties, search.kernel)
                if not live.time_up():  # a whole NEH, not one cut short, is kept for later members
                    self._neh = start
            out[0] = start
        return out

    def crossover(self, population: np.ndarray, pairs: np.ndarray, keys: np.ndarray):
        return self.ga.crossover(population, pairs, keys)

    def mutate(self, children, keys: np.ndarray) -> None:
        self.ga.mutate(children, keys)

    @property
    def continues_chains(self) -> bool:
        """Whether a chain island's searches go on from where they stood rather than from their
        best (:class:`~metaheur.islands.ils.ILSIsland`): the iterated greedy's, whose temperature
        acceptance lets the current solution wander above the best, as in Ruiz and Stuetzle's
        uninterrupted runs (docs/decisions/pfsp-method.md)."""
        return self.method == "ig"

    def improve(self, children, keys: np.ndarray, time_limit: float | None = None):
        """The generic local search from every child (``ls_budget``, cut short by ``time_limit``);
        returns (best solutions, exact engine costs, iterations)."""
        return self.improve_chains(children, keys, time_limit)[:3]

    def improve_chains(self, starts, keys: np.ndarray, time_limit: float | None = None):
        """:meth:`improve`, with where each search stands at the end: (best solutions, exact engine
        costs, iterations, current solutions)."""
        return split_on_oom(self._improve, to_host(starts).astype(np.int64), np.asarray(keys), time_limit)

    def _improve(self, starts: np.ndarray, keys: np.ndarray, time_limit: float | None):
        if self._batch is None or self._batch.capacity < len(keys):
            self._batch = None
            self._batch = PermSearchBatch(self.problem, self.device, len(keys), self.params.search(PermSearchParams))
        result = self._batch.run(starts, keys, self.ls_budget, time_limit=time_limit)
        return result.best, result.best_costs, result.iterations, result.current

    def distances(self, solution: np.ndarray, population: np.ndarray) -> np.ndarray:
        """The problem's distances (:meth:`~metaheur.problem.permutation.PermutationProblem.distances`)."""
        return self.problem.distances(solution, population)

    def distance_table(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The problem's distances of every row of ``a`` to every row of ``b``
        (:meth:`~metaheur.problem.permutation.PermutationProblem.distance_table`)."""
        return self.problem.distance_table(a, b)

    def cost(self, solution) -> int:
        return self.problem.engine_sign * self.problem.value(solution)
