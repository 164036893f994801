"""The QAP's kernel files (kernels/qap/): the defines they are compiled with and the block shapes
of their launches (:class:`~metaheur.engine.catalogue.KernelTable`)."""

from __future__ import annotations

from metaheur.engine.catalogue import KernelTable, launched

TABU_SMALL = (32, 4)  # qap_tabu_run for n < TABU_WIDE_N: columns x rows of the pair scan
TABU = (32, 8)  # qap_tabu_run for n >= TABU_WIDE_N
TABU_WIDE_N = 128

_SYMMETRY = ({}, {"MH_QAP_SYMMETRIC": 1})

TABLE = KernelTable(
    variants={
        "qap/qap_moves.cu": _SYMMETRY,
        "qap/qap_tabu.cu": _SYMMETRY + tuple(d | {"MH_QAP_DELTA32": 1} for d in _SYMMETRY),
    },
    launches=launched("qap/qap_tabu.cu", (TABU_SMALL, TABU), "qap_tabu_run"),
    not_launched=frozenset({("qap/qap_moves.cu", "qap_delta_full"), ("qap/qap_moves.cu", "qap_delta_update"),
                            ("qap/qap_moves.cu", "qap_best_move")}),
)
