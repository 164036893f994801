"""Which kernel files the package compiles, with which defines, and with which block shapes it
launches their kernels on a GPU: the engine's own table (:data:`ENGINE`) and each registered
problem's (:meth:`Problem.kernel_table <metaheur.problem.Problem.kernel_table>`), merged by
:func:`kernel_tables`. The compile checks (tests/engine/test_compile_check.py) build every variant
and hold every shape against the kernel's registers, shared memory and launch bounds on an H200;
experiments/kernel_resources.py writes the resource table from it (docs/gpu-model.md).

Files are named by their path under ``kernels/`` (``qap/qap_tabu.cu``), as the loader takes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from metaheur.engine.shapes import PERM, SERIAL, WARP


@dataclass(frozen=True)
class KernelTable:
    """``variants``: kernel file -> the define sets (``{"MH_X": 1}``) it is compiled with;
    ``launches``: (kernel file, kernel) -> the block shapes it is launched with on a GPU;
    ``not_launched``: kernels of those files the package does not launch itself (components for
    a search of one's own, the benchmarks and the tests)."""

    variants: Mapping[str, tuple[Mapping[str, int], ...]]
    launches: Mapping[tuple[str, str], tuple[tuple[int, ...], ...]]
    not_launched: frozenset[tuple[str, str]] = field(default_factory=frozenset)

    def __or__(self, other: KernelTable) -> KernelTable:
        """Both tables in one (a file or kernel in both keeps this table's entry)."""
        return KernelTable({**other.variants, **self.variants}, {**other.launches, **self.launches},
                           self.not_launched | other.not_launched)


def launched(file: str, blocks: tuple[tuple[int, ...], ...], *kernels: str) -> dict:
    """``{(file, kernel): blocks}`` for each of ``kernels``: a table's launches, a file's kernels
    of the same shapes at a time."""
    return {(file, kernel): blocks for kernel in kernels}


_PERM_EVAL = ("perm_cost", "perm_pair", "perm_row", "perm_prepare", "perm_update", "perm_partial", "perm_insert_best",
              "perm_neh")
#: The define of the generic kernels' warp variant (``PermSearchParams(kernel="warp")``).
PERM_WARP = {"MH_PS_WARP": 1}
#: The define of the classic layout's scans by several rows at once, a warp each
#: (``PermSearchParams(scan="warps")``).
PERM_ROWS = {"MH_PS_ROWS": 1}

#: The engine's kernels: the generic permutation engine that runs a user's device code (compiled
#: alone with the stand-in kernels/engine/mh_user_problem.cuh) and the permutation GA's operators.
ENGINE = KernelTable(
    variants={
        "engine/perm_eval.cu": ({}, PERM_WARP),
        "engine/perm_search.cu": ({}, {"MH_USER_DELTA32": 1}, PERM_WARP, {"MH_USER_DELTA32": 1, **PERM_WARP},
                                  PERM_ROWS, {"MH_USER_DELTA32": 1, **PERM_ROWS}),
        "engine/perm_ga.cu": ({},),
        "engine/order_ga.cu": ({},),
    },
    launches=launched("engine/perm_search.cu", (PERM, WARP), "perm_tabu", "perm_ils", "perm_ig")
    | launched("engine/perm_search.cu", (SERIAL,), "perm_best_values")
    | launched("engine/perm_eval.cu", (PERM, WARP), *_PERM_EVAL)
    | launched("engine/perm_ga.cu", (SERIAL,), "perm_crossover", "perm_mutate")
    | launched("engine/order_ga.cu", (SERIAL,), "order_crossover", "order_reversals"),
)


def kernel_tables() -> KernelTable:
    """The engine's table and every registered problem's, merged (once a registry, as the
    framework reads every registered problem: :func:`~metaheur.problem.registry.per_registry`)."""
    from metaheur.problem.registry import per_registry

    return per_registry(_merged)


def _merged(classes: tuple) -> KernelTable:
    out = ENGINE
    for table in (cls.kernel_table() for cls in classes):
        out = out if table is None else out | table
    return out
