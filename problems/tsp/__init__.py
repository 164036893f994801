"""The symmetric travelling salesman problem (TSP), in one package: the instance and exact lengths
(``problem``, distances in ``distances``), TSPLIB files (``tsplib``), the generators
(``generators``), TSPLIB's best-known values (``best_known``), its data on a device
(``device_data``), its searches (the iterated local search ``ils`` with its parameters in
``params``, the GPU descent ``descent``, EAX ``eax``, curve starts ``starts``), the islands'
operators and the EAX island (``operators``, ``eax_island``, edge distances ``tour_edges``), the
decisions of how it is solved (``solving``), its kernels' table (``kernels``; the sources are in
kernels/tsp/) and its picture (``picture``). The ATSP (problems/atsp/) is searched through it."""

from metaheur.problems.tsp import best_known as _best_known  # noqa: F401  (registers TSPLIB's table)
from metaheur.problems.tsp.generators import clustered_tsp, uniform_tsp
from metaheur.problems.tsp.params import EAXParams, ILSParams
from metaheur.problems.tsp.problem import MATRIX_BUDGET, TSP, TourProblem, canonical_tours
from metaheur.problems.tsp.tsplib import read_city_list, read_tour, read_tsplib, write_tour

__all__ = ["MATRIX_BUDGET", "TSP", "EAXParams", "ILSParams", "TourProblem", "canonical_tours", "clustered_tsp",
           "read_city_list", "read_tour", "read_tsplib", "uniform_tsp", "write_tour"]
