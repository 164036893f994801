"""QAP instance data for the kernels: int32 matrices on a device and the symmetric-case define."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaheur.devices import Device, parse_device
from metaheur.engine.source import kernel_constant
from metaheur.errors import MetaheurError
from metaheur.problems.qap.problem import QAP

#: Kernels rank moves with category offsets (MH_TS_BIG of kernels/qap/qap_tabu.cu's int64 build, as
#: experiments/kernels/qap/qap_moves.cu's MH_QAP_CATEGORY): deltas must stay below half of one.
DELTA_LIMIT = kernel_constant("qap/qap_tabu.cu", "MH_TS_DELTA_LIMIT")
#: Below this bound (:func:`delta_bound`) the tabu search keeps int32 deltas (kernels/qap/qap_tabu.cu).
DELTA32_LIMIT = kernel_constant("qap/qap_tabu.cu", "MH_TS_DELTA32_LIMIT")
#: Up to this size the stream tabu kernel keeps the flow matrix and its transpose in shared memory.
TABLES_SHARED_N = kernel_constant("qap/qap_tabu.cu", "MH_TSS_TABLE_N")


@dataclass
class QAPData:
    """Flow ``a``, its transpose ``at`` and distance ``b`` as int32 on ``device``."""

    device: Device
    n: int
    a: object
    at: object
    b: object
    symmetric: bool
    delta32: bool = False

    @property
    def defines(self) -> dict:
        return {"MH_QAP_SYMMETRIC": 1} if self.symmetric else {}

    @property
    def tabu_defines(self) -> dict:
        """The defines of kernels/qap/qap_tabu.cu: also int32 deltas when they fit, and the flow
        tables in shared memory when they fit (MH_QAP_TABLES_SHARED: n <= TABLES_SHARED_N)."""
        return (self.defines | ({"MH_QAP_DELTA32": 1} if self.delta32 else {})
                | ({"MH_QAP_TABLES_SHARED": 1} if self.n <= TABLES_SHARED_N else {}))


def delta_bound(qap: QAP) -> int:
    """A bound on |delta| of every swap, and on the tabu search's intermediate sums: in Taillard's
    O(n) formula the sum over k is at most 2 max|b| (4 max abs row or column sum of a), or the same
    with a and b exchanged (the dual swap of locations); the corrections and the O(1) update add
    less than 64 max|a| max|b|."""
    a, b = np.abs(qap.flow).astype(np.int64), np.abs(qap.distance).astype(np.int64)
    sums = [int(max(m.sum(axis=0).max(), m.sum(axis=1).max())) for m in (a, b)]
    amax, bmax = int(a.max()), int(b.max())
    return min(8 * bmax * sums[0], 8 * amax * sums[1]) + 64 * amax * bmax


def qap_data(qap: QAP, device: str | Device = "cpu") -> QAPData:
    """Upload ``qap`` for the kernels; too large values are a clear :class:`MetaheurError`."""
    dev = parse_device(device)
    if qap.n < 2:
        raise MetaheurError(f"{qap.name}: a QAP search needs n >= 2")
    if not qap.fits_int32:
        raise MetaheurError(f"{qap.name}: matrix entries exceed the 32-bit range of the kernels")
    for label, m in (("flow", qap.flow), ("distance", qap.distance)):
        if int(m.max()) - int(m.min()) > 2**31 - 1:
            raise MetaheurError(f"{qap.name}: {label} entries span more than 2^31 - 1; the kernels subtract "
                                "entries in 32-bit ints")
    bound = int(np.abs(qap.flow).max()) * int(np.abs(qap.distance).max()) * qap.n * qap.n * 4
    if bound >= DELTA_LIMIT:
        raise MetaheurError(f"{qap.name}: costs may exceed 2^60, beyond the kernels' exact 64-bit range")
    a = qap.flow.astype(np.int32)
    b = qap.distance.astype(np.int32)
    symmetric = bool(np.array_equal(a, a.T) and np.array_equal(b, b.T))
    delta32 = delta_bound(qap) < DELTA32_LIMIT
    return QAPData(dev, qap.n, dev.asarray(a), dev.asarray(np.ascontiguousarray(a.T)), dev.asarray(b), symmetric,
                   delta32)
