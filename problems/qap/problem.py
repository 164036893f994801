"""The quadratic assignment problem (QAP): the instance and its exact cost.

Conventions (QAPLIB's; Burkard, Karisch and Rendl 1997):

* A ``.dat`` file holds ``n``, then matrix ``A`` (n x n, row-major), then matrix ``B``, as a stream
  of integers with any line breaks.
* ``A`` is called the *flow* matrix (between units i, j) and ``B`` the *distance* matrix (between
  locations), as QAPLIB's description does. Several families store the distances first (nug, sko,
  had, ...); the cost is the same either way, so we keep the file's order and names.
* A solution is a permutation ``p`` that puts unit ``i`` on location ``p[i]`` (0-based in Python,
  1-based in files). Its cost is ``sum_ij A[i, j] * B[p[i], p[j]]``, an exact integer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problem.arrays import INT32_MAX, exact_integers
from metaheur.problem.fingerprint import fingerprint
from metaheur.problem.interface import Problem, check_permutation
from metaheur.problems.qap.params import TabuParams

if TYPE_CHECKING:
    from metaheur.engine.catalogue import KernelTable
    from metaheur.islands.params import IslandParams

#: Dominance below which a QAP is of the uniformly random class (58 for uniform entries); none of
#: QAPLIB's 126 instances lies between 79 and 101.
UNIFORM_DOMINANCE = 80.0


def matrix_dominance(matrix: np.ndarray) -> float:
    """The dominance of a flow or distance matrix (Vollmann and Buffa 1966; Taillard 1995,
    "Comparison of iterative searches for the quadratic assignment problem"): 100 times the
    standard deviation of its entries over the absolute value of their mean (0 when the mean is
    0); uniformly random entries give 100 / sqrt(3) = 58."""
    m = np.asarray(matrix, dtype=np.float64)
    mean = abs(m.mean())
    return float(100.0 * m.std() / mean) if mean else 0.0


@dataclass(frozen=True, eq=False)
class QAP(Problem):
    """A QAP instance: ``flow`` (A) and ``distance`` (B), both n x n int64."""

    title = "quadratic assignment problem"
    crossovers = ("ux", "cx", "pmx", "none")
    search_params: ClassVar[tuple[type, ...]] = (TabuParams,)
    picture = "assignment"

    name: str
    flow: np.ndarray
    distance: np.ndarray
    source: str | None = None
    kind: str = field(default="qap", init=False)

    def __post_init__(self) -> None:
        a = exact_integers(self.flow, f"{self.name}: flow matrix")
        b = exact_integers(self.distance, f"{self.name}: distance matrix")
        if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape != b.shape:
            raise MetaheurError(f"{self.name}: flow and distance must be square matrices of one size")
        if a.shape[0] < 1:
            raise MetaheurError(f"{self.name}: a QAP needs n >= 1")
        object.__setattr__(self, "flow", a)
        object.__setattr__(self, "distance", b)
        self.flow.setflags(write=False)
        self.distance.setflags(write=False)

    def fingerprint(self) -> str:
        """A fingerprint of the instance's data (name, size and both matrices)."""
        return fingerprint(f"{self.kind}:{self.name}:{self.n}", (self.flow, self.distance))

    @property
    def n(self) -> int:
        return int(self.flow.shape[0])

    @property
    def cost_fits_int64(self) -> bool:
        """True when every cost and swap delta is guaranteed to fit a signed 64-bit integer."""
        bound = int(np.abs(self.flow).max()) * int(np.abs(self.distance).max()) * self.n * self.n * 4
        return bound < 2**63

    @property
    def fits_int32(self) -> bool:
        """True when both matrices fit int32 (what the kernels store)."""
        return all(int(np.abs(m).max()) <= INT32_MAX for m in (self.flow, self.distance))

    def properties(self) -> dict:
        """Matrix properties shown by ``metaheur info``."""
        out = {}
        for label, m in (("flow", self.flow), ("distance", self.distance)):
            out[f"{label}_symmetric"] = bool(np.array_equal(m, m.T))
            out[f"{label}_zero_diagonal"] = bool(not np.diagonal(m).any())
            out[f"{label}_min"] = int(m.min())
            out[f"{label}_max"] = int(m.max())
            out[f"{label}_dominance"] = round(matrix_dominance(m), 1)
        return out

    @classmethod
    def describe_lines(cls, props: dict) -> list[str]:
        lines = []
        for label in ("flow", "distance"):
            sym = "symmetric" if props[f"{label}_symmetric"] else "asymmetric"
            diag = "zero diagonal" if props[f"{label}_zero_diagonal"] else "non-zero diagonal"
            lines.append(f"{label:<11} {sym}, {diag}, entries {props[f'{label}_min']}..{props[f'{label}_max']}, "
                         f"dominance {props[f'{label}_dominance']}")
        return lines

    @property
    def dominance(self) -> float:
        """The larger of the two matrices' dominances (:func:`matrix_dominance`): 41-79 for uniformly
        random instances (tai*a, rou, had, lipa), 101-155 for nug, sko, tho and kra, 185-1,150
        for sparse real-life-like ones (tai*b, ste, esc, bur) among the 126 QAPLIB instances."""
        return max(matrix_dominance(self.flow), matrix_dominance(self.distance))

    @property
    def uniformly_random(self) -> bool:
        """Whether the instance is of the uniformly random class (tai*a, rou, had, lipa): its
        :attr:`dominance` below ``UNIFORM_DOMINANCE``, as Taillard (1995) tells QAPLIB's classes
        apart. The defaults that depend on the class ask this."""
        return self.dominance < UNIFORM_DOMINANCE

    def check_permutation(self, perm, source: str | None = None) -> np.ndarray:
        """``perm`` as a 0-based int64 array, or a :class:`MetaheurError` saying why it is not one."""
        return check_permutation(perm, self.n, source)

    def evaluate(self, perms: np.ndarray) -> np.ndarray:
        """Exact costs of a k x n batch (:meth:`cost` of each)."""
        return np.array([self.cost(p) for p in np.asarray(perms)], dtype=np.int64)

    def value(self, perm) -> int:
        return self.cost(perm)

    def cost(self, perm) -> int:
        """Exact ``sum_ij A[i, j] * B[p[i], p[j]]``, recomputed from scratch."""
        p = self.check_permutation(perm)
        permuted = self.distance[np.ix_(p, p)]
        if self.cost_fits_int64:
            return int(np.einsum("ij,ij->", self.flow, permuted, dtype=np.int64))
        return int(sum(int(x) for x in (self.flow.astype(object) * permuted.astype(object)).ravel()))

    def swap_delta(self, perm, r: int, s: int) -> int:
        """Exact cost change of swapping the locations of units ``r`` and ``s`` (reference formula)."""
        p = self.check_permutation(perm)
        q = p.copy()
        q[r], q[s] = q[s], q[r]
        return self.cost(q) - self.cost(p)

    # how the islands solve it (the decisions of problems/qap/solving.py)
    def default_params(self) -> IslandParams:
        from metaheur.problems.qap import solving

        return solving.default_params(self)

    def default_migration(self):
        from metaheur.problems.qap import solving

        return solving.default_migration(self)

    def default_ls_budget(self) -> int:
        """Tabu iterations per child: 50 n (docs/decisions/qap-ga-settings.md)."""
        return 50 * self.n

    def operators(self, device, params, ls_budget=None):
        from metaheur.problems.qap.operators import QAPOperators

        return QAPOperators(self, device, params, ls_budget)

    @classmethod
    def island_algorithms(cls) -> dict:
        """The tabu island without crossover (the others: the memetic GA)."""
        from metaheur.problems.qap.tabu_island import TabuIsland

        return {"none": TabuIsland}

    @classmethod
    def kernel_table(cls) -> KernelTable:
        """kernels/qap/: the tabu search and its standalone steps (problems/qap/kernels.py)."""
        from metaheur.problems.qap.kernels import TABLE

        return TABLE

    def wave_blocks_per_sm(self, device) -> int:
        """The tabu search's blocks a multiprocessor runs at once (its block follows n)."""
        from metaheur.problems.qap import tabu

        return tabu.wave_blocks_per_sm(self, device)

    def precompile(self, device) -> None:
        from metaheur.problems.qap import solving

        solving.precompile(self, device)

    def check_memory(self, devices) -> None:
        from metaheur.problems.qap import solving

        solving.check_memory(self, devices)

    def local_search_island(self, params: IslandParams) -> IslandParams:
        """A tabu island: one continued robust tabu search (:func:`~metaheur.islands.params.ls_island`)."""
        from metaheur.islands.params import ls_island_params

        return ls_island_params(params, self)

    def default_local_search_islands(self, cpu_islands: int) -> int:
        from metaheur.problems.qap import solving

        return solving.default_tabu_islands(cpu_islands)

    def draw(self, ax, perm) -> None:
        from metaheur.problems.qap.picture import plot_assignment

        plot_assignment(self, perm, ax)
