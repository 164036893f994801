"""The TSP's kernel files (kernels/tsp/): the defines they are compiled with (one variant per
distance function, ``MH_TSP_WEIGHT``) and the block shapes of their launches
(:class:`~metaheur.engine.catalogue.KernelTable`). The ATSP's searches run on them too."""

from __future__ import annotations

from metaheur.engine.catalogue import KernelTable, launched
from metaheur.engine.shapes import SERIAL

#: ``MH_TSP_WEIGHT`` of kernels/tsp/tsp_dist.cuh: TSPLIB's distance functions, a matrix, and the
#: twin costs of an ATSP's transformation.
WEIGHT_CODES = {"MATRIX": 0, "EUC_2D": 1, "CEIL_2D": 2, "ATT": 3, "GEO": 4, "MAN_2D": 5, "MAX_2D": 6, "TWIN": 7}
DESCENT = (128,)  # the 2-opt / Or-opt kernels of TSPDescentBatch: one thread a candidate move
FULL_2OPT = (32, 8)  # the full 2-opt kernels of experiments/bench_kernels.py: columns x rows
KNN = (128,)  # neighbour lists: one thread a city
EAX_FREQ = (128,)  # tsp_eax_freq_accept: one thread a city (its rows of the edge-frequency table)
EAX_BLOCK = (128,)  # tsp_eax_block: a block a parent pair, its O(n) work spread over the threads

_WEIGHTS = tuple({"MH_TSP_WEIGHT": code} for code in sorted(set(WEIGHT_CODES.values())))
_DESCENT_KERNELS = ("tsp_2opt_full", "tsp_oropt_full", "tsp_2opt_cand", "tsp_oropt_cand", "tsp_positions",
                    "tsp_apply_best", "tsp_best_at", "tsp_apply_disjoint", "tsp_lengths", "tsp_keep_better",
                    "tsp_cache_tour", "tsp_2opt_cached", "tsp_oropt_cached", "tsp_best_of_parts", "tsp_dlb_best_at",
                    "tsp_dlb_apply")

TABLE = KernelTable(
    variants={
        "tsp/tsp_moves.cu": _WEIGHTS,
        "tsp/tsp_ils.cu": _WEIGHTS,
        "tsp/tsp_construct.cu": _WEIGHTS,
        "tsp/tsp_knn.cu": ({},),
        "tsp/tsp_eax.cu": _WEIGHTS,
    },
    launches=launched("tsp/tsp_moves.cu", (DESCENT,), *_DESCENT_KERNELS)
    | launched("tsp/tsp_moves.cu", (DESCENT, FULL_2OPT), "tsp_2opt_full", "tsp_2opt_cached")
    | launched("tsp/tsp_knn.cu", (KNN,), "tsp_knn_grid", "tsp_knn_quadrant")
    | launched("tsp/tsp_ils.cu", (SERIAL,), "tsp_ils_run")
    | launched("tsp/tsp_construct.cu", (SERIAL,), "tsp_greedy")
    | launched("tsp/tsp_eax.cu", (SERIAL,), "tsp_eax", "tsp_eax_freq")
    | launched("tsp/tsp_eax.cu", (EAX_FREQ,), "tsp_eax_freq_accept")
    | launched("tsp/tsp_eax.cu", (EAX_BLOCK,), "tsp_eax_block"),
)
