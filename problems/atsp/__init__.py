"""The asymmetric travelling salesman problem (ATSP), in one package: the instance, directed
lengths and TSPLIB ``TYPE: ATSP`` files (``problem``), the generator (``generator``), TSPLIB's
best-known values (``best_known``), the Jonker-Volgenant transformation that the TSP's islands
search (``twin``) and the decisions of how it is solved (``solving``). Its searches, operators,
kernels and picture are the TSP's (problems/tsp/)."""

from metaheur.problems.atsp import best_known as _best_known  # noqa: F401  (registers TSPLIB's ATSP table)
from metaheur.problems.atsp.generator import asymmetric_tsp
from metaheur.problems.atsp.problem import ATSP, check_arc_matrix, is_atsp_file, read_atsp
from metaheur.problems.atsp.twin import JVTransform, TwinTSP, assignment_duals, jonker_volgenant, upper_bound

__all__ = ["ATSP", "JVTransform", "TwinTSP", "assignment_duals", "asymmetric_tsp", "check_arc_matrix",
           "is_atsp_file", "jonker_volgenant", "read_atsp", "upper_bound"]
