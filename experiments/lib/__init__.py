"""Shared by the experiment scripts, which import it from their own folder (``from lib.runs import
solve_run``): report (tables, headers), instances, runs (one solve and its measures), strategies,
ablation, backends (worker pools, loky against Dask) and yardstick (rots.c)."""
