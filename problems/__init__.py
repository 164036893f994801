"""The built-in problems, one package each: ``qap``, ``tsp``, ``atsp``, ``pfsp``, ``lop``. Each
registers through the entry-point group ``metaheur.problems`` exactly as a plug-in does
(pyproject.toml), and is imported only when a run or a user names it.

Installed as ``metaheur.problems``. The names below are re-exported lazily (PEP 562), so that
``import metaheur.problems.qap`` loads the QAP alone; the problem interface and what every
problem shares live in the framework (:mod:`metaheur.problem`), and are re-exported here for
the spellings of earlier versions (``from metaheur.problems import Problem``).
"""

from __future__ import annotations

from metaheur.lazy_names import lazy_names

#: name -> the module that defines it.
_LAZY = {
    **{name: "metaheur.problems.atsp" for name in ("ATSP", "asymmetric_tsp", "read_atsp")},
    "LOP": "metaheur.problems.lop",
    "PFSP": "metaheur.problems.pfsp",
    **{name: "metaheur.problems.qap" for name in ("QAP", "QAPSolution", "random_qap", "read_qaplib", "read_sln",
                                                  "write_sln")},
    **{name: "metaheur.problems.tsp" for name in ("TSP", "clustered_tsp", "read_tour", "read_tsplib", "uniform_tsp",
                                                  "write_tour")},
    **{name: "metaheur.problem" for name in ("BestKnown", "LoadedSolution", "PermutationProblem", "Problem",
                                             "ProblemFormats", "SearchForm", "best_known", "check_problem",
                                             "load_instance", "load_solution", "parse_generated", "problem_class",
                                             "registered", "resolve_instance")},
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_names(globals(), _LAZY)
