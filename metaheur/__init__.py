"""metaheur: hybrid metaheuristics for permutation problems (QAP, TSP, ATSP, a user's own
:class:`Problem`) on CPU cores, GPUs and Dask clusters.

``metaheur.solve(problem, stop, seed, params, initial)`` returns a :class:`Result`;
``metaheur.resume(checkpoint)`` continues a saved run. The problem layer is ``metaheur.problems``,
the kernel engine ``metaheur.engine``. See docs/api.md.
"""

from metaheur._version import __version__
from metaheur.callbacks import Callbacks
from metaheur.errors import InputFormatError, MetaheurError
from metaheur.islands.migration import MigrationParams
from metaheur.islands.params import GAParams
from metaheur.problems import (
    ATSP,
    QAP,
    TSP,
    PermutationProblem,
    Problem,
    ProblemFormats,
    SearchForm,
    best_known,
    check_problem,
    load_instance,
    load_solution,
    problem_class,
    read_qaplib,
    read_sln,
    read_tour,
    read_tsplib,
    write_sln,
    write_tour,
)
from metaheur.problems.qap.params import TabuParams
from metaheur.problems.tsp.params import ILSParams
from metaheur.result import DeviceRow, EpochRow, IslandRow, MigrationRow, Result, TracePoint
from metaheur.search.perm_search import PermSearchParams
from metaheur.solve_params import SolveParams
from metaheur.solver import resume, solve
from metaheur.stopping import (
    MaxGenerations,
    NoImprovement,
    Progress,
    ProvenOptimum,
    StopRules,
    Target,
    TimeLimit,
    stop_rules,
)

__all__ = [
    "ATSP",
    "QAP",
    "TSP",
    "Callbacks",
    "DeviceRow",
    "EpochRow",
    "GAParams",
    "ILSParams",
    "InputFormatError",
    "IslandRow",
    "MaxGenerations",
    "MetaheurError",
    "MigrationParams",
    "MigrationRow",
    "NoImprovement",
    "PermSearchParams",
    "PermutationProblem",
    "Problem",
    "ProblemFormats",
    "Progress",
    "ProvenOptimum",
    "Result",
    "SearchForm",
    "SolveParams",
    "StopRules",
    "TabuParams",
    "Target",
    "TimeLimit",
    "TracePoint",
    "__version__",
    "best_known",
    "check_problem",
    "load_instance",
    "load_solution",
    "problem_class",
    "read_qaplib",
    "read_sln",
    "read_tour",
    "read_tsplib",
    "resume",
    "solve",
    "stop_rules",
    "write_sln",
    "write_tour",
]
