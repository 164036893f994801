"""Problem data on a device and the defines that specialise the kernels for an instance.

``qap`` and ``tsp`` turn an instance into the arrays and ``-D`` defines its kernels take;
:data:`COMPILE_VARIANTS` lists every (kernel source, defines) pair they can ask for, which is
what the compile check builds.
"""

from metaheur.device_data.qap import QAPData, qap_data
from metaheur.device_data.tsp import WEIGHT_CODES, TSPData, neighbours, tsp_data

_QAP = [{}, {"MH_QAP_SYMMETRIC": 1}]
_TSP = [{"MH_TSP_WEIGHT": code} for code in sorted(set(WEIGHT_CODES.values()))]
COMPILE_VARIANTS: dict[str, list[dict]] = {
    "qap_moves.cu": _QAP,
    "qap_tabu.cu": _QAP + [d | {"MH_QAP_DELTA32": 1} for d in _QAP],
    "tsp_moves.cu": _TSP,
    "tsp_ils.cu": _TSP,
    "tsp_construct.cu": _TSP,
    "tsp_knn.cu": [{}],
    "qap_ga.cu": [{}],
    "tsp_ga.cu": [{}],
    "tsp_eax.cu": _TSP,
    "perm_eval.cu": [{}],  # a user problem's kernels, compiled alone with kernels/mh_user_problem.cuh
    "perm_search.cu": [{}, {"MH_USER_DELTA32": 1}],
}

__all__ = ["COMPILE_VARIANTS", "WEIGHT_CODES", "QAPData", "TSPData", "neighbours", "qap_data", "tsp_data"]
