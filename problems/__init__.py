"""Problem layer: the problem interface (:class:`Problem`), the registry of problems (built-in
ones and installed plug-ins, both through the entry-point group ``metaheur.problems``), the
generic :class:`PermutationProblem` of a user's own problem with :func:`check_problem`, and what
every problem shares (instances and solutions by name or file, best-known tables, text and array
checks). Each built-in problem is one package here: ``qap``, ``tsp``, ``atsp``, ``pfsp``, ``lop``.

Installed as ``metaheur.problems``. Every cost here is an exact integer computed from scratch.
"""

from metaheur.problems.atsp import ATSP, asymmetric_tsp, read_atsp
from metaheur.problems.best_known import BestKnown, best_known
from metaheur.problems.generators import parse_generated
from metaheur.problems.instances import load_instance, load_solution, resolve_instance
from metaheur.problems.interface import LoadedSolution, Problem, ProblemFormats, SearchForm
from metaheur.problems.lop import LOP
from metaheur.problems.permutation import PermutationProblem
from metaheur.problems.permutation_check import check_problem
from metaheur.problems.pfsp import PFSP
from metaheur.problems.qap import QAP, QAPSolution, random_qap, read_qaplib, read_sln, write_sln
from metaheur.problems.registry import problem_class, registered
from metaheur.problems.tsp import TSP, clustered_tsp, read_tour, read_tsplib, uniform_tsp, write_tour

__all__ = [
    "ATSP",
    "LOP",
    "PFSP",
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
