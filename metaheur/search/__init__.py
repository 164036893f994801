"""The engine's batched local searches on a device: the generic searches of a user's problem
(tabu search, descent and kicks, iterated greedy; perm_search.py) and what every batched search
shares (batch.py). One kernel block runs one search; a batch runs many at once. A built-in
problem's own searches are in its package (problems/qap/tabu.py, problems/tsp/ils.py, ...)."""
