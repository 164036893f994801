"""The best full 2-opt and Or-opt moves of a batch of tours by the ``cached`` kernels of
kernels/tsp/tsp_moves.cu (issue 62): ``tsp_cache_tour`` stores each tour's own edge lengths per
position and, for coordinate weights, its coordinates in tour order; ``tsp_2opt_cached`` and
``tsp_oropt_cached`` then compute only the distances a move adds (two a move), over ``parts``
blocks a tour, and ``tsp_best_of_parts`` reduces the parts to each tour's best move. The moves,
deltas and ties are those of ``tsp_2opt_full`` and ``tsp_oropt_full`` bit for bit.
"""

from __future__ import annotations

import numpy as np

from metaheur.devices import Device
from metaheur.problems.tsp.device_data import TSPData
from metaheur.problems.tsp.kernels import WEIGHT_CODES

#: Weight codes whose kernels read no coordinates (``MH_TSP_COORDS`` of kernels/tsp/tsp_dist.cuh).
COORDLESS = (WEIGHT_CODES["MATRIX"], WEIGHT_CODES["TWIN"])
MAX_PARTS = 64  # at most this many blocks share a tour's full neighbourhood
TAIL = 1.1  # waves launched over waves of work that parts_for accepts (the last wave's idle slots)
CACHED_KERNELS = {"2opt": "tsp_2opt_cached", "oropt": "tsp_oropt_cached"}


def parts_for(module, device: Device, batch: int, n: int, block,
              kernels: tuple[str, ...] = tuple(CACHED_KERNELS.values())) -> int:
    """Blocks that share each tour's full neighbourhood. On a GPU: at least enough that the
    ``batch`` tours fill every block slot of the device (multiprocessors x the resident blocks of
    the driver's occupancy query at ``block``, the fewest of ``kernels``; issue 62: 264 tours
    filled 2 of the 5 slots of an SM), then the fewest whose last wave is nearly full (the blocks
    of a tour do equal work, so waves launched / waves of work <= :data:`TAIL`; 264 tours on 660
    slots: 5 a tour, not 3, whose 792 blocks take two waves for 1.2 waves of work), else the least
    wasteful; at most :data:`MAX_PARTS` and n. 1 on the CPU, whose blocks already share its cores."""
    if not device.is_gpu:
        return 1
    slots = device.cores * min(module.kernel(name).resident_blocks(block) for name in kernels)
    most = max(1, min(MAX_PARTS, n))
    choices = range(min(most, -(-slots // batch)), most + 1)

    def tail(parts: int) -> float:
        return -(-batch * parts // slots) * slots / (batch * parts)

    return next((p for p in choices if tail(p) <= TAIL), min(choices, key=tail))


class TourCache:
    """The device buffers of the cached kernels for ``batch`` tours of ``data``'s instance and
    ``parts`` blocks a tour: the tour-order cache (``txy``, ``edge``) and each part's best move."""

    def __init__(self, data: TSPData, batch: int, parts: int = 1):
        dev, n = data.device, data.n
        self.data, self.batch, self.parts = data, batch, parts
        self.txy = dev.zeros(2 if data.weight_code in COORDLESS else (batch, n, 2), np.float64)
        self.edge = dev.zeros((batch, n), np.int32)
        self.part_move = dev.zeros((batch * parts, 4), np.int32)
        self.part_delta = dev.zeros(batch * parts, np.int64)
        self.unused = dev.zeros(1, np.int64)

    def launches(self, kinds: int) -> int:
        """Kernel launches of :meth:`best_moves` for ``kinds`` neighbourhoods."""
        return 1 + kinds * (2 if self.parts > 1 else 1)

    def best_moves(self, module, tours, block, outs: dict, *, threads: int | None = None) -> None:
        """The best move of every tour of ``tours`` (batch x n int32, on the device) in each
        neighbourhood of ``outs`` (``"2opt"``/``"oropt"`` -> (move, delta): batch x 4 int32 and
        batch int64 device arrays, written as ``tsp_2opt_full`` / ``tsp_oropt_full`` write them);
        ``block``: the launches' block, ``threads``: the CPU build's OpenMP threads."""
        d, n, batch, parts = self.data, self.data.n, self.batch, self.parts
        kernel = module.kernel
        kernel("tsp_cache_tour")(batch, block, (d.xy, d.mat, tours, n, self.txy, self.edge), threads=threads)
        for kind, (move, delta) in outs.items():
            out = (move, delta) if parts == 1 else (self.part_move, self.part_delta)
            kernel(CACHED_KERNELS[kind])(batch * parts, block, (d.xy, d.mat, tours, self.txy, self.edge, n, parts, 0,
                                                                self.unused, *out), threads=threads)
            if parts > 1:
                kernel("tsp_best_of_parts")(batch, block, (n, parts, int(kind == "oropt"), self.part_move,
                                                           self.part_delta, move, delta), threads=threads)
