"""Best-known values of TSPLIB's asymmetric instances (Reinelt's ATSP page; every value is a proven
optimum), in best_known.csv.
"""

from __future__ import annotations

from metaheur.problem.best_known import read_table, register_table

register_table("atsp", read_table(__package__))
