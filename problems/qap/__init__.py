"""The quadratic assignment problem (QAP), in one package: the instance and its exact cost
(``problem``), QAPLIB files (``qaplib``), the generator (``generator``), QAPLIB's best-known values
(``best_known``), its data on a device (``device_data``), the batched robust tabu search
(``tabu``, parameters in ``params``), the islands' operators and its tabu island (``operators``,
``tabu_island``), the decisions of how it is solved (``solving``), its kernels' table
(``kernels``; the sources are in kernels/qap/) and its picture (``picture``)."""

from metaheur.problems.qap import best_known as _best_known  # noqa: F401  (registers QAPLIB's table)
from metaheur.problems.qap.generator import random_qap
from metaheur.problems.qap.params import TabuParams
from metaheur.problems.qap.problem import QAP, UNIFORM_DOMINANCE, matrix_dominance
from metaheur.problems.qap.qaplib import QAPSolution, read_assignment, read_qaplib, read_sln, write_sln

__all__ = ["QAP", "UNIFORM_DOMINANCE", "QAPSolution", "TabuParams", "matrix_dominance", "random_qap",
           "read_assignment", "read_qaplib", "read_sln", "write_sln"]
