"""Genetic operators and drivers: crossovers on batches of parents (one kernel block per child)."""
