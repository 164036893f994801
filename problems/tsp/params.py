"""The parameters of the TSP's own searches, apart from the searches so that the problem declares
them without loading its kernels: the iterated local search (:class:`ILSParams`, section ``ils``)
and the EAX islands' GA (:class:`EAXParams`, section ``eax``); their limits are read from the
kernels (kernels/tsp/tsp_knn.cu, tsp_ils_lk.cuh)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from metaheur.engine.source import kernel_constant, kernel_constants
from metaheur.engine.variants import check_variant, register_variants
from metaheur.errors import MetaheurError
from metaheur.problem.arrays import INT32_MAX

#: Longest neighbour list (MH_KNN_MAX of kernels/tsp/tsp_knn.cu).
MAX_NEIGHBOURS = kernel_constant("tsp/tsp_knn.cu", "MH_KNN_MAX")
_LK = kernel_constants("tsp/tsp_ils_lk.cuh")
MAX_LK_DEPTH = min(_LK["MH_LK_DEPTH"], _LK["MH_LK3_DEPTH"])
MAX_LK_BREADTH = _LK["MH_LK_BREADTH"]
KICK_TYPES = {"segment-swap": 0, "shuffle": 1, "walk": 2, "double-bridge": 3, "near-bridge": 4}
LK_MOVES = {"2opt": 0, "3opt": 1}
#: How an EAX island's generation uses its device (problems/tsp/eax.py, EAXGenerations), the same
#: children and tables every way: ``classic``, the host groups the accepted children's changes by
#: city for ``tsp_eax_freq`` and reads back the table's overflow, every child and its length;
#: ``fused``, one ``tsp_eax_freq_accept`` launch updates the table from the EAX launch's own
#: buffers (greedy generations included), the population stays on the device, nothing is read
#: back but the launch's statistics and the accepted children; ``block``, ``fused`` with the
#: crossover's O(n) work spread over a block of threads a pair (``tsp_eax_block``). The default
#: stays ``classic`` until a GPU session measures them.
EAX_KERNELS = register_variants("eax_kernel", ("classic", "fused", "block"),
                                "how an EAX island's generations use the device ([ils] eax_kernel): classic, "
                                "fused (one frequency-update launch) or block (fused, a block of threads a pair)")
#: The TSP descent's kernels (problems/tsp/descent.py, TSPDescentBatch): the full neighbourhoods'
#: (``kernel``, the same moves either way) and the several-move pass's (``several_kernel``; ``dlb``
#: takes other moves, to a local optimum of the same neighbourhood).
DESCENT_KERNELS = register_variants("descent kernel", ("classic", "cached"),
                                    "the TSP descent's full-neighbourhood kernels: classic or cached (the tour's "
                                    "edge lengths cached per position, its coordinates in tour order)")
SEVERAL_KERNELS = register_variants("several_kernel", ("classic", "dlb"),
                                    "the TSP descent's several-move pass: classic or dlb (don't-look bits, moves "
                                    "selected by claims)")
#: The tours an EAX population starts from (:func:`~metaheur.problems.tsp.operators.curve_starts`).
STARTS = ("auto", "random", "curve")


@dataclass(frozen=True)
class ILSParams:
    """Parameters of the iterated local search (kernels/tsp/tsp_ils.cu describes the moves).

    - ``neighbours``: candidate list length k (1..32); ``quadrant``: when > 0, the lists of
      coordinate instances hold the ``quadrant`` nearest cities of each quadrant around a city
      first (Helsgaun's quadrant candidates, for clustered instances; ``4 * quadrant <= neighbours``);
    - ``k5``: candidates tried for the second added edge of a 3-opt step;
    - ``lk_move``: ``3opt`` (Lin-Kernighan chains of sequential 3-opt steps, LKH style) or ``2opt``
      (a 3-opt search, then LK chains of 2-opt steps with ``lk_breadth1`` / ``lk_breadth2``
      alternatives at the first two steps); ``lk_depth``: longest chain (0: no LK, 3-opt only);
    - ``lk_breadth1`` / ``lk_breadth2``: the alternatives a ``2opt`` LK chain tries at its first
      and at its second step;
    - ``kick``: ``double-bridge`` (three consecutive segments of 1..``window`` cities, A B C D ->
      A D C B), ``near-bridge`` (cuts at a city and three of its ``window`` nearest),
      ``segment-swap`` (two adjacent segments of 1..``window`` cities swap: a 3-opt move),
      ``shuffle`` (a stretch of up to ``window`` cities in random order) or ``walk``;
    - ``window``: how far a kick reaches, in cities (its segments' longest, its near cities);
    - ``temperature``: accept a kick that lengthens the tour by less than
      ``temperature * u * length / n`` (u uniform in (0, 1]; 0: only kicks that do not lengthen it);
    - ``eax_kernel``: how the EAX islands' generations use the device (:data:`EAX_KERNELS`:
      ``classic``, ``fused`` or ``block``, the same results).

    The defaults are the configuration that ``experiments/bench_tsp_ils.py`` ranks first.
    """

    section: ClassVar[str] = "ils"  # its name in configuration files, results and checkpoints

    neighbours: int = 10
    quadrant: int = 0
    k5: int = 5
    lk_move: str = "3opt"
    lk_depth: int = 30
    lk_breadth1: int = 5
    lk_breadth2: int = 3
    kick: str = "double-bridge"
    window: int = 100
    temperature: float = 0.1
    eax_kernel: str = "classic"

    def __post_init__(self) -> None:
        if not 1 <= self.neighbours <= MAX_NEIGHBOURS:
            raise MetaheurError(f"neighbour lists hold 1 to {MAX_NEIGHBOURS} cities, got {self.neighbours}")
        if self.quadrant < 0 or 4 * self.quadrant > self.neighbours:
            raise MetaheurError(f"quadrant must be in 0..neighbours / 4, got {self.quadrant}")
        if self.window < 1:
            raise MetaheurError(f"kick window must be at least 1, got {self.window}")
        if self.k5 < 0:
            raise MetaheurError(f"k5 must be >= 0, got {self.k5}")
        if self.lk_move not in LK_MOVES:
            raise MetaheurError(f"lk_move must be one of {', '.join(LK_MOVES)}, got {self.lk_move!r}")
        if not 0 <= self.lk_depth <= MAX_LK_DEPTH:
            raise MetaheurError(f"lk_depth must be in 0..{MAX_LK_DEPTH}, got {self.lk_depth}")
        if not (1 <= self.lk_breadth1 <= MAX_LK_BREADTH and 1 <= self.lk_breadth2 <= MAX_LK_BREADTH):
            raise MetaheurError(f"LK breadths must be in 1..{MAX_LK_BREADTH}")
        if self.kick not in KICK_TYPES:
            raise MetaheurError(f"kick must be one of {', '.join(KICK_TYPES)}, got {self.kick!r}")
        if not self.temperature >= 0:
            raise MetaheurError(f"temperature must be >= 0, got {self.temperature}")
        check_variant("eax_kernel", self.eax_kernel)


@dataclass(frozen=True)
class EAXParams:
    """Parameters of the EAX islands (crossover ``eax``: the GA of Nagata and Kobayashi 2013).

    The island is :class:`~metaheur.problems.tsp.eax_island.EAXIsland`; the GA's own parameters
    (population, offspring, ``restart_after``, ``restart``) stay in ``[ga]``.

    - ``tries``: EAX children per pair of parents a generation;
    - ``starts``: the tours the search that builds the population starts from: ``random``
      permutations, ``curve`` (space-filling-curve tours, instances with coordinates) or ``auto``
      (curve tours on a GPU and from 10,000 cities,
      :func:`~metaheur.problems.tsp.operators.curve_starts`);
    - ``init_share``: the share of the time budget that builds an automatic population (None: 0.1
      for curve starts on the CPU, else 0.3; docs/decisions/tsp-start.md);
    - ``ils_kicks``: kicks a generation of a converged island that goes on as an iterated local
      search of its best (``[ga] restart = "ils"``; None: n / 10, at least 50).

    These keys were ``[ga]`` keys in earlier versions; a configuration file, a ``GAParams`` read
    from a checkpoint or a ``[ga]`` section that still holds them is read into this section
    (``moved_from``).
    """

    section: ClassVar[str] = "eax"  # its name in configuration files, results and checkpoints
    moved_from: ClassVar[dict[str, tuple[str, ...]]] = {"ga": ("tries", "starts", "init_share", "ils_kicks")}

    tries: int = 30
    starts: str = "auto"
    init_share: float | None = None
    ils_kicks: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.tries <= INT32_MAX:
            raise MetaheurError(f"tries must be from 1 to {INT32_MAX}, got {self.tries}")
        if self.starts not in STARTS:
            raise MetaheurError(f"unknown starts {self.starts!r}: use one of {', '.join(STARTS)}")
        if self.ils_kicks is not None and self.ils_kicks < 1:
            raise MetaheurError(f"ils_kicks must be at least 1, got {self.ils_kicks}")
        if self.init_share is not None and not 0 < self.init_share <= 1:
            raise MetaheurError(f"init_share must be in (0, 1], got {self.init_share}")
