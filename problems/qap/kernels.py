"""The QAP's kernel files (kernels/qap/): the defines they are compiled with and the block shapes
of their launches (:class:`~metaheur.engine.catalogue.KernelTable`)."""

from __future__ import annotations

from metaheur.engine.catalogue import KernelTable, launched

TABU_SMALL = (32, 4)  # the tabu kernels for n < TABU_WIDE_N: columns x rows of the pair scan
TABU = (32, 8)  # the tabu kernels for n >= TABU_WIDE_N
TABU_WIDE_N = 128

_SYMMETRY = ({}, {"MH_QAP_SYMMETRIC": 1})

TABLE = KernelTable(
    variants={
        "qap/qap_tabu.cu": tuple(d | e | t for t in ({}, {"MH_QAP_TABLES_SHARED": 1})
                                 for e in ({}, {"MH_QAP_DELTA32": 1}) for d in _SYMMETRY),
    },
    launches=launched("qap/qap_tabu.cu", (TABU_SMALL, TABU), "qap_tabu_run", "qap_tabu_stream"),
)
