"""The engine's genetic operators: crossovers and mutations on batches of parents (one kernel block
per child) of permutations as assignments (perm_ga.py) and as orders (order_ga.py)."""
