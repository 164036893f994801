"""The island model: memetic islands (a GA whose offspring are improved by local search) on CPU
cores and GPUs, migration between them, load balancing, and execution on loky or Dask."""
