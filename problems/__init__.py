"""Problem layer: the problem interface (:class:`Problem`) and its registry, QAP, TSP and ATSP
with readers and writers of QAPLIB and TSPLIB files, exact costs, generators.

Installed as ``metaheur.problems``. Every cost here is an exact integer computed from scratch.
"""

from metaheur.problems.atsp import ATSP, read_atsp
from metaheur.problems.best_known import BestKnown, best_known
from metaheur.problems.generators import asymmetric_tsp, clustered_tsp, parse_generated, random_qap, uniform_tsp
from metaheur.problems.instances import load_instance, load_solution, resolve_instance
from metaheur.problems.interface import LoadedSolution, Problem, ProblemFormats, SearchForm
from metaheur.problems.permutation import PermutationProblem
from metaheur.problems.permutation_check import check_problem
from metaheur.problems.qap import QAP, QAPSolution, read_qaplib, read_sln, write_sln
from metaheur.problems.registry import problem_class, registered
from metaheur.problems.tsp import TSP, read_tour, read_tsplib, write_tour

__all__ = [
    "ATSP",
    "QAP",
    "TSP",
    "BestKnown",
    "LoadedSolution",
    "PermutationProblem",
    "Problem",
    "ProblemFormats",
    "QAPSolution",
    "SearchForm",
    "asymmetric_tsp",
    "best_known",
    "check_problem",
    "clustered_tsp",
    "load_instance",
    "load_solution",
    "parse_generated",
    "problem_class",
    "random_qap",
    "read_atsp",
    "read_qaplib",
    "read_sln",
    "read_tour",
    "read_tsplib",
    "registered",
    "resolve_instance",
    "uniform_tsp",
    "write_sln",
    "write_tour",
]
