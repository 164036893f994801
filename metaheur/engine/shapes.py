"""Block shapes of the engine's own GPU launches (a problem's own are in its kernel table,
:meth:`Problem.kernel_table <metaheur.problem.Problem.kernel_table>`), and :func:`threads`.

On the CPU build every launch uses one thread a block (the fast mode ignores the block shape).
"""

from __future__ import annotations

SERIAL = (1,)  # kernels whose block has one working thread (their launchers pass 1)
PERM = (64,)  # a user problem's generic kernels: one block a search, block-stride rows
WARP = (32,)  # the generic kernels' warp variant (PermSearchParams(kernel="warp")): one warp a search


def threads(block) -> int:
    """Threads of a block shape (an int or a tuple)."""
    dims = (block,) if isinstance(block, int) else tuple(block)
    out = 1
    for d in dims:
        out *= int(d)
    return out
