"""Plain numpy versions of what the kernels compute: the tests' oracle, and the numpy rows of
experiments/bench_kernels.py (which imports them from here).

Each function states the kernel it mirrors. They favour clarity (and vectorisation where the
benchmark compares against them) over speed; every result is an exact integer.
"""
