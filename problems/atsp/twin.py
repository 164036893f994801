"""The symmetric form of an ATSP that the TSP's islands search: :func:`jonker_volgenant` turns an
ATSP of n cities into a symmetric TSP of 2n (Jonker and Volgenant, "Transforming asymmetric into
symmetric traveling salesman problems", Operations Research Letters 2(4), 1983; the form LKH-3
uses), :class:`TwinTSP` holds it in a quarter of its matrix, :class:`JVTransform` maps tours both
ways."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problem.arrays import INT32_MAX
from metaheur.problem.fingerprint import fingerprint
from metaheur.problems.tsp.problem import TSP

if TYPE_CHECKING:
    from metaheur.problems.atsp.problem import ATSP


@dataclass(frozen=True, eq=False)
class TwinTSP(TSP):
    """The symmetric instance of :func:`jonker_volgenant`: cities ``i`` and ``i + n/2`` are twins.

    Its distances are computed, never stored as an n x n matrix: ``block`` (n/2 x n/2 int32) holds
    ``block[i, j] = d(i + n/2, j)``, the twin edge ``-M`` on its diagonal, and ``forbidden`` is the
    cost of every edge joining two cities or two twins: a quarter of the memory of the matrix, and
    what the kernels read (``MH_TSP_WEIGHT`` 7, ``TWIN``, of kernels/tsp/tsp_dist.cuh). Built here, not
    given by a user, so it skips the checks of user matrices; every value fits int32 by
    construction."""

    block: np.ndarray | None = None
    forbidden: int = 0

    def __post_init__(self) -> None:
        b = np.ascontiguousarray(self.block, dtype=np.int32)
        b.setflags(write=False)
        object.__setattr__(self, "block", b)
        object.__setattr__(self, "forbidden", int(self.forbidden))

    def fingerprint(self) -> str:
        return fingerprint(f"{self.kind}:{self.name}:{self.n}:{self.weight_type}:{self.forbidden}", (self.block,))

    def default_params(self):
        from metaheur.problems.atsp.solving import twin_default_params

        return twin_default_params(self)

    @property
    def n(self) -> int:
        return 2 * int(self.block.shape[0])

    def dist(self, i, j) -> np.ndarray:
        """Exact distances as int64, computed from ``block`` and ``forbidden``."""
        i, j = np.broadcast_arrays(np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64))
        half = self.block.shape[0]
        cross = (i >= half) != (j >= half)
        row = np.where(cross, np.maximum(i, j) - half, 0)  # the twin's ATSP city
        col = np.where(cross, np.minimum(i, j), 0)
        return np.where(i == j, 0, np.where(cross, self.block[row, col].astype(np.int64), self.forbidden))

    def kernel_costs(self) -> np.ndarray:
        """What the kernels take as ``mat`` for ``TWIN``: ``block`` row by row, then ``forbidden``
        (int32; built when uploaded, not cached, so that it does not travel with the instance)."""
        return np.append(self.block.ravel(), np.int32(self.forbidden)).astype(np.int32)

    def arc_costs(self) -> np.ndarray:
        """The n/2 x n/2 block ``[i, j] = d(i + n/2, j)``: arc i -> j plus M (forbidden: the
        forbidden value, also on the diagonal)."""
        block = self.block.astype(np.int64)
        np.fill_diagonal(block, self.forbidden)
        return block

    def duals(self) -> tuple[np.ndarray, np.ndarray]:
        """:func:`assignment_duals` of :meth:`arc_costs` (cached, and shipped with the instance to
        the islands' worker processes: O(n^2) to O(n^3) time, O(n) memory)."""
        if "duals" not in self._cache:
            self._cache["duals"] = assignment_duals(self.arc_costs())
        return self._cache["duals"]

    def reduced_costs(self) -> np.ndarray:
        """The reduced costs ``c(i, j) - u_i - v_j`` of :meth:`arc_costs` under the optimal duals of
        :meth:`duals` (n/2 x n/2 int64, all >= 0)."""
        u, v = self.duals()
        return self.arc_costs() - u[:, None] - v[None, :]

    def tied_arcs(self) -> np.ndarray:
        """For each of the n cities (its incoming arcs, first n/2) and twins (outgoing arcs), how
        many of its arcs have zero reduced cost: the ties that rank first in :meth:`candidates`."""
        zero = self.reduced_costs() == 0
        np.fill_diagonal(zero, False)
        return np.concatenate([zero.sum(axis=0), zero.sum(axis=1)])

    def candidates(self, k: int) -> np.ndarray:
        """Candidate lists (n x k int32): a city's twin, then its k - 1 edges of least reduced cost
        in the assignment relaxation of the ATSP (arc i -> j: ``c(i, j) - u_i - v_j`` with the
        optimal duals of :func:`assignment_duals`; ties by cost, then index), each list sorted by
        distance as the kernels expect. Reduced costs pick the arcs of good tours far better than
        costs on instances with many equal arcs (rbg323, rbg358: 6% of their arcs cost 0), and
        the assignment bound is often tight for the ATSP (Johnson, Gutin, McGeoch et al.,
        "Experimental analysis of heuristics for the ATSP", 2002)."""
        half = self.n // 2
        k = int(min(k, self.n - 1, half))
        block, reduced = self.arc_costs(), self.reduced_costs()
        # tie-breaking keys: reduced cost, then cost, then index (all exact int64; costs < 2^31)
        order_out = np.lexsort((np.broadcast_to(np.arange(half), block.shape), block, reduced), axis=1)
        order_in = np.lexsort((np.broadcast_to(np.arange(half)[:, None], block.shape), block, reduced), axis=0).T
        out = np.empty((self.n, k), dtype=np.int64)
        idx = np.arange(half)
        out[:half, 0], out[half:, 0] = idx + half, idx
        out[half:, 1:] = order_out[:, : k - 1]  # twin i + n/2 meets city j over arc i -> j
        out[:half, 1:] = order_in[:, : k - 1] + half  # city j meets twin i + n/2 over arc i -> j
        dist = self.dist(np.arange(self.n)[:, None], out)
        order = np.lexsort((out, dist), axis=1)
        return np.ascontiguousarray(np.take_along_axis(out, order, axis=1), dtype=np.int32)

    def random_tours(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` tours that keep every twin edge, in random order: random directed tours of the
        ATSP (a random permutation of all 2n cities would break most twin edges, and local search
        repairs those slowly: each one costs 2M)."""
        half = self.n // 2
        cities = np.array([rng.permutation(half) for _ in range(count)]).reshape(count, half)
        return np.stack([cities, cities + half], axis=2).reshape(count, self.n)


@dataclass(frozen=True)
class JVTransform:
    """The symmetric instance of an ATSP (Jonker and Volgenant 1983), costs chosen so that every
    symmetric tour of a directed tour has exactly the directed length.

    City ``i`` gets a twin ``i + n``. Costs: ``d(i, i + n) = -M`` (twin edge); ``d(i + n, j) =
    c(i, j) + M`` for an allowed arc ``i -> j``; ``forbidden`` for a forbidden arc and for every
    edge between two cities or two twins. A directed tour ``t`` becomes ``t0, t0+n, t1, t1+n, ...``
    whose length is ``sum c - n M + n M``: the ATSP length itself.

    With ``UB`` the length of some feasible directed tour (:func:`upper_bound`), ``M = UB // 2 + 1``
    and ``forbidden = UB + M + 1``, every optimal symmetric tour is the image of an optimal
    directed tour: a tour with t < n twin edges and no forbidden edge has length
    ``2 (n - t) M + (its arcs) >= 2M > UB``; a tour with k >= 1 forbidden edges has length at least
    ``k (forbidden - M) > UB``. Both values must fit the kernels' int32, so UB must stay below
    about 1.4e9 (docs/decisions/atsp-method.md).
    """

    atsp: ATSP
    tsp: TwinTSP
    big_m: int
    forbidden: int

    def to_symmetric(self, tour) -> np.ndarray:
        """The symmetric tour (2n cities) of a directed tour."""
        t = self.atsp.check_tour(tour)
        return np.stack([t, t + self.atsp.n], axis=1).ravel()

    def to_directed(self, tour) -> np.ndarray:
        """The directed tour of a symmetric tour that keeps every twin edge: read in the direction
        in which each city is followed by its twin. Raises if a twin edge is missing."""
        n = self.atsp.n
        t = self.tsp.check_tour(tour)
        start = int(np.flatnonzero(t < n)[0])
        t = np.roll(t, -start)  # a city first
        if np.all(t[1::2] == t[0::2] + n):
            return t[0::2].copy()
        r = np.roll(t[::-1], 1)  # the other direction, still a city first
        if np.all(r[1::2] == r[0::2] + n):
            return r[0::2].copy()
        raise MetaheurError(f"{self.atsp.name}: internal error: a symmetric tour does not keep every twin edge")


def assignment_duals(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Optimal dual potentials ``u, v`` of the assignment problem on the square int64 ``cost``:
    ``cost - u[:, None] - v[None, :] >= 0``, zero on an optimal assignment, whose cost is
    ``u.sum() + v.sum()``. Shortest augmenting paths with potentials (the Hungarian method of
    Kuhn 1955 in the O(n^3) form of Jonker and Volgenant 1987, without their initialisation),
    the inner scan vectorised."""
    n = cost.shape[0]
    big = np.iinfo(np.int64).max // 4
    u, v = np.zeros(n + 1, np.int64), np.zeros(n + 1, np.int64)
    row_of = np.zeros(n + 1, np.int64)  # row_of[j]: the row (1-based) matched to column j; column 0 is the root
    way = np.zeros(n + 1, np.int64)
    for i in range(1, n + 1):
        row_of[0], j0 = i, 0
        minv = np.full(n + 1, big, np.int64)
        used = np.zeros(n + 1, dtype=bool)
        while True:
            used[j0] = True
            i0 = row_of[j0]
            cur = cost[i0 - 1] - u[i0] - v[1:]
            free = ~used[1:]
            better = free & (cur < minv[1:])
            minv[1:][better] = cur[better]
            way[1:][better] = j0
            masked = np.where(free, minv[1:], big)
            j1 = int(masked.argmin()) + 1
            delta = masked[j1 - 1]
            u[row_of[used]] += delta
            v[used] -= delta
            minv[~used] -= delta
            j0 = j1
            if row_of[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            row_of[j0] = row_of[j1]
            j0 = j1
    return u[1:], v[1:]


def upper_bound(atsp: ATSP) -> int:
    """Length of a feasible directed tour: the shorter of a nearest-neighbour tour from city 0
    (when it finds one over allowed arcs) and the sum over cities of their dearest allowed arc."""
    ok = atsp.allowed()
    if not ok.any(axis=1).all():
        k = int(np.flatnonzero(~ok.any(axis=1))[0])
        raise MetaheurError(f"{atsp.name}: city {k + 1} has no allowed outgoing arc, so no tour exists")
    bound = int(np.where(ok, atsp.matrix, 0).max(axis=1).sum())
    cost = np.where(ok, atsp.matrix, np.iinfo(np.int64).max)
    seen = np.zeros(atsp.n, dtype=bool)
    city, length = 0, 0
    for _ in range(atsp.n - 1):
        seen[city] = True
        row = np.where(seen, np.iinfo(np.int64).max, cost[city])
        nxt = int(row.argmin())
        if row[nxt] == np.iinfo(np.int64).max:
            return bound
        length += int(row[nxt])
        city = nxt
    if not ok[city, 0]:
        return bound
    return min(bound, length + int(atsp.matrix[city, 0]))


def jonker_volgenant(atsp: ATSP) -> JVTransform:
    """The symmetric instance of ``atsp`` (see :class:`JVTransform` for the costs)."""
    ub = upper_bound(atsp)
    big_m = ub // 2 + 1
    forbidden = ub + big_m + 1
    ok = atsp.allowed()
    top = int(atsp.matrix[ok].max()) + big_m if ok.any() else big_m
    if forbidden > INT32_MAX or top > INT32_MAX:
        raise MetaheurError(f"{atsp.name}: arc costs too large for the transformation to 32-bit costs (a tour of "
                            f"length {ub} is known; it must stay below {(2 * INT32_MAX) // 3}): scale them down")
    block = np.where(ok, atsp.matrix + big_m, forbidden)  # block[i, j]: edge (i + n, j), arc i -> j
    np.fill_diagonal(block, -big_m)  # the twin edges
    tsp = TwinTSP(f"{atsp.name}-jv", "TWIN", comment=f"Jonker-Volgenant transformation of {atsp.name}",
                  source=atsp.source, block=block, forbidden=forbidden)
    tsp.duals()  # before the instance travels to worker processes
    return JVTransform(atsp, tsp, big_m, forbidden)
