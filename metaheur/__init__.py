"""metaheur: hybrid metaheuristics for QAP and TSP on CPU cores, GPUs and Dask clusters.

``metaheur.solve(problem_or_path, ...)`` returns a :class:`~metaheur.result.Result`; the stop
rules (``TimeLimit``, ``MaxGenerations``, ``Target``, ``NoImprovement``, ``stop_rules``), the
parameter classes (``GAParams``, ``TabuParams``, ``ILSParams``, ``MigrationParams``) and
``Callbacks`` are importable from here too. Submodules load on first use, so ``import metaheur``
costs little: the problem layer is ``metaheur.problems``, the kernel engine ``metaheur.engine``.
"""

from metaheur._version import __version__
from metaheur.errors import MetaheurError

_LAZY = {
    "solve": ("metaheur.solver", "solve"),
    "ATSP": ("metaheur.problems", "ATSP"),
    "Result": ("metaheur.result", "Result"),
    "Callbacks": ("metaheur.islands.model", "Callbacks"),
    "GAParams": ("metaheur.islands.params", "GAParams"),
    "MigrationParams": ("metaheur.islands.migration", "MigrationParams"),
    "TabuParams": ("metaheur.search.qap_tabu", "TabuParams"),
    "ILSParams": ("metaheur.search.tsp_ils", "ILSParams"),
    "TimeLimit": ("metaheur.stopping", "TimeLimit"),
    "MaxGenerations": ("metaheur.stopping", "MaxGenerations"),
    "Target": ("metaheur.stopping", "Target"),
    "NoImprovement": ("metaheur.stopping", "NoImprovement"),
    "StopRules": ("metaheur.stopping", "StopRules"),
    "stop_rules": ("metaheur.stopping", "stop_rules"),
}

__all__ = ["MetaheurError", "__version__", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'metaheur' has no attribute {name!r}")
