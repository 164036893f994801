"""Block shapes of the package's GPU launches, in one place: the launchers take their shapes from
here, and the resource check (tests/engine/test_compile_check.py, experiments/kernel_resources.py)
checks every shape of :data:`GPU_LAUNCHES` against the kernel's registers, shared memory and
launch bounds on an H200 (docs/gpu-model.md).

On the CPU build every launch uses one thread a block (the fast mode ignores the block shape).
"""

from __future__ import annotations

SERIAL = (1,)  # kernels whose block has one working thread (their launchers pass 1)
TABU_SMALL = (32, 4)  # qap_tabu_run for n < TABU_WIDE_N: columns x rows of the pair scan
TABU = (32, 8)  # qap_tabu_run for n >= TABU_WIDE_N
TABU_WIDE_N = 128
DESCENT = (128,)  # the 2-opt / Or-opt kernels of TSPDescentBatch: one thread a candidate move
KNN = (128,)  # neighbour lists: one thread a city
PERM = (64,)  # a user problem's generic kernels: one block a search, block-stride rows

_DESCENT_KERNELS = ("tsp_2opt_full", "tsp_oropt_full", "tsp_2opt_cand", "tsp_oropt_cand", "tsp_positions",
                    "tsp_apply_best", "tsp_best_at", "tsp_apply_disjoint", "tsp_lengths", "tsp_keep_better")

#: ``{(kernel file, kernel): block shapes the package launches it with on a GPU}``.
GPU_LAUNCHES: dict[tuple[str, str], tuple[tuple[int, ...], ...]] = {
    ("qap_tabu.cu", "qap_tabu_run"): (TABU_SMALL, TABU),
    **{("tsp_moves.cu", name): (DESCENT,) for name in _DESCENT_KERNELS},
    ("tsp_knn.cu", "tsp_knn_grid"): (KNN,),
    ("tsp_knn.cu", "tsp_knn_quadrant"): (KNN,),
    ("tsp_ils.cu", "tsp_ils_run"): (SERIAL,),
    ("tsp_construct.cu", "tsp_greedy"): (SERIAL,),
    ("tsp_eax.cu", "tsp_eax"): (SERIAL,),
    ("tsp_eax.cu", "tsp_eax_freq"): (SERIAL,),
    ("qap_ga.cu", "qap_crossover"): (SERIAL,),
    ("qap_ga.cu", "qap_mutate"): (SERIAL,),
    ("tsp_ga.cu", "tsp_ox"): (SERIAL,),
    ("tsp_ga.cu", "tsp_segment_mutation"): (SERIAL,),
    **{("perm_search.cu", name): (PERM,) for name in ("perm_tabu", "perm_ils", "perm_ig")},
    ("perm_search.cu", "perm_best_values"): (SERIAL,),
    **{("perm_eval.cu", name): (PERM,) for name in ("perm_cost", "perm_pair", "perm_row", "perm_prepare",
                                                     "perm_update", "perm_partial", "perm_insert_best")},
}

#: Kernels the package itself does not launch (standalone components, the benchmarks and tests).
NOT_LAUNCHED = {("qap_moves.cu", "qap_delta_full"), ("qap_moves.cu", "qap_delta_update"),
                ("qap_moves.cu", "qap_best_move")}


def threads(block) -> int:
    """Threads of a block shape (an int or a tuple)."""
    dims = (block,) if isinstance(block, int) else tuple(block)
    out = 1
    for d in dims:
        out *= int(d)
    return out
