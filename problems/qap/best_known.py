"""Best-known values of QAPLIB's instances (Burkard, Karisch and Rendl, "QAPLIB - A quadratic
assignment problem library", J. Global Optim. 10, 1997, with the library's later updates), in
best_known.csv. Caveat kept from the source: ``tai100a``'s published ``.sln`` holds an older
21052466, the table 21044752.
"""

from __future__ import annotations

from metaheur.problem.best_known import read_table, register_table

register_table("qap", read_table(__package__))
