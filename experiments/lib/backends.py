"""Worker pools and backends of the experiment scripts: in-process islands on one thread, the
warm loky pool, and cpu-islands through loky against Dask.

* worker pools are started before the timed runs (:func:`warm_pool`): a timed run does not pay
  for starting Python processes, but its workers still build the instance's operators in it.
* in-process islands (``cpu-serial``, and ``cpu-islands`` with one island) run their CPU kernels
  on one OpenMP thread here (``set_cpu_threads(1)``, what worker islands do): the solver leaves
  them on every core, which makes "one core" use all of them (and on a busy machine run up to 10x
  slower).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import replace

from metaheur.devices import cpu_count, gpu_devices
from metaheur.engine import set_cpu_threads
from metaheur.islands.params import GAParams

from .instances import problem
from .report import log
from .runs import Run, reference, rounded, solve_run, summarise


def one_thread_in_process() -> None:
    """In-process CPU islands on one OpenMP thread (see the module docstring)."""
    set_cpu_threads(1)


def warm_pool(workers: int) -> None:
    """Start joblib's reusable loky pool with ``workers`` processes (a 0.2 s solve of a tiny
    generated instance, not recorded), so that a timed run does not pay for starting Python
    processes; each worker still builds its instance's operators inside the timed run."""
    if workers < 2:
        return
    from metaheur import SolveParams, solve

    solve("gen:qap:12", params=SolveParams(strategy="cpu-islands", islands=workers, epoch_seconds=0.1),
          time_limit=0.2)


def auto_workers() -> int:
    """Worker processes of the default strategy: a CPU island per core not driving a GPU."""
    return max(1, cpu_count() - len(gpu_devices()))


BACKEND_COLUMNS = ["instance", "n", "problem", "config", "status", "budget_s", "seeds", "islands", "time_s",
                   "ls_per_s", "busy_ls_per_s", "ratio_to_loky", "mean_gap_%", "best_gap_%", "note"]
DASK_LOCAL = "dask_local (new cluster per run)"
DASK_WARM = "dask scheduler (started cluster)"


def steady_workload(prob) -> GAParams | None:
    """The GA parameters of a throughput comparison (scaling with cores, Dask against loky): the
    default, except that a TSP island keeps a population of 100 and never restarts. With an
    automatic size and restarts, the rate of EAX children (a TSP island's search steps) depends on
    when each run converged and rebuilt its population (a rebuild's descents count for less), not
    on the executor."""
    if prob is None or prob.kind != "tsp":
        return None
    return replace(prob.default_params().ga, population=100, restart_after=0)


def compare_backends(names: list[str], seeds: int, seconds_for: Callable[[object], float], workers: int,
                     epoch_seconds: float = 1.0, warm_dask: bool = True) -> tuple[list[dict], list[Run]]:
    """cpu-islands on ``workers`` islands through joblib's loky pool (started beforehand) and
    through Dask: ``solve(..., params=SolveParams(dask_local=workers))``, whose local cluster starts (outside the search
    time) for every run, so its workers import and load the kernels inside the first epoch; and,
    with ``warm_dask``, through ``solve(..., params=SolveParams(scheduler=ADDRESS))`` on one local cluster started and
    warmed up beforehand (the steady state of a cluster); TSP islands with a fixed workload
    (``steady_workload``). Returns (summary rows, runs)."""
    one_thread_in_process()
    has_dask = importlib.util.find_spec("distributed") is not None
    missing = "absent: Dask not installed (pip install 'metaheur[dask]')"
    cluster = None
    if has_dask and warm_dask:
        # --dask-local's cluster: a default one would leave Dask's MALLOC_TRIM_THRESHOLD_ in this
        # process's environment, for the loky workers started later to inherit
        from metaheur.solver import local_cluster

        cluster = local_cluster(workers)
    rows, runs = [], []
    try:
        if cluster is not None:  # warm-up; a failure shows again in the timed runs' rows
            solve_run("gen:qap:12", config="dask warm-up", islands=workers, seconds=0.3, seed=0, epoch_seconds=0.1,
                      scheduler=cluster.scheduler_address)
        for name in names:
            prob = problem(name)
            seconds = seconds_for(prob)
            log(f"backends: {name} (n = {prob.n}), {seconds} s per run, {workers} islands, epochs of "
                f"{epoch_seconds} s")
            warm_pool(workers)
            ga = steady_workload(prob)
            groups = [[solve_run(name, config="loky", islands=workers, seconds=seconds, seed=s, ga=ga,
                                 epoch_seconds=epoch_seconds) for s in range(seeds)]]
            for label, kwargs in ((DASK_LOCAL, {"dask_local": workers}),
                                  (DASK_WARM, {"scheduler": cluster.scheduler_address} if cluster else None)):
                if label == DASK_WARM and not warm_dask:
                    continue
                if not has_dask or kwargs is None:
                    groups.append([Run(name, prob.n, prob.kind.upper(), label, "cpu-islands", workers, 0, seconds,
                                       status=missing)])
                    continue
                groups.append([solve_run(name, config=label, islands=workers, seconds=seconds, seed=s, ga=ga,
                                         epoch_seconds=epoch_seconds, **kwargs) for s in range(seeds)])
            ref, kind = reference([r for g in groups for r in g])
            base = None
            for rs in groups:
                row = summarise(rs, ref, kind, None)
                if rs is groups[0]:
                    base = row.get("ls_per_s")
                row["ratio_to_loky"] = rounded(row["ls_per_s"] / base, 3) if base and row.get("ls_per_s") else None
                rows.append(row)
                runs += rs
    finally:
        if cluster is not None:
            cluster.close()
    return rows, runs
