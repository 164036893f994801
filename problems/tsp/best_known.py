"""Best-known values of TSPLIB's symmetric instances (Reinelt's STSP page; every value is a proven
optimum), in best_known.csv. Caveat kept from the source: ``dsj1000`` is the CEIL_2D value.
"""

from __future__ import annotations

from metaheur.problem.best_known import read_table, register_table

register_table("tsp", read_table(__package__))
