"""One run of ``metaheur.solver.solve`` and its measures (local-search iterations per second, gap,
time to a target from the epoch history), one row per run and the summary over seeds.

Conventions of every table made here:

* ``ls_per_s`` = ``result.search_iterations / result.time_s``: local-search iterations (QAP: tabu
  iterations, TSP: ILS kicks) of all islands per second of the solver's search time. That time
  starts before the worker processes have started and built their operators, so short runs of
  worker-process strategies are penalised by their start-up; ``busy_ls_per_s`` (the sum over
  islands of iterations / seconds spent inside their epochs, from ``result.history``) shows the
  rate while working.
* sense: every cost here is a value in the problem's sense (``result.sense``: "min", or "max" for
  the linear ordering problem, whose ``cost`` and ``history`` rows are values to maximise); a
  gap is never negative short of the reference: ``100 * (cost - ref) / |ref|`` for a
  minimisation, ``100 * (ref - cost) / |ref|`` for a maximisation.
* time to a target: the first ``time_s`` of ``result.history`` (the end of an epoch) at which
  ``global_best`` was within the target gap of the reference (at most ``ref + gap / 100 * |ref|``
  for a minimisation, at least ``ref - gap / 100 * |ref|`` for a maximisation); it has the
  resolution of an epoch. Over seeds, the median with "not reached" counted as infinite ("not
  reached" when that median is).
* reference: the best-known value when the instance has one, else the best value found by any
  run of the same instance in the same table, in the problem's sense ("best seen"), e.g. for
  generated ``gen:`` instances.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

from metaheur.devices import gpu_devices
from metaheur.errors import MetaheurError
from metaheur.islands.migration import MigrationParams
from metaheur.islands.params import GAParams
from metaheur.problem.best_known import gap_percent
from metaheur.result import Result

from .instances import problem
from .report import log

TARGET_GAP = {"qap": 1.0, "tsp": 2.0, "pfsp": 1.0, "lop": 0.5}  # default target gaps (%) for the time to target
NOT_REACHED = "not reached"


@dataclass
class Run:
    """One call of solve() (or its reason for not running) and what it returned."""

    instance: str
    n: int | None
    problem: str
    config: str
    strategy: str
    islands: int | None
    seed: int
    budget_s: float
    status: str = "ok"
    result: Result | None = None
    wall_s: float = 0.0
    group: str = ""
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.result is not None


def solve_run(name: str, *, config: str, seconds: float, seed: int, strategy: str = "cpu-islands",
              islands: int | None = None, ga: GAParams | None = None, migration: MigrationParams | None = None,
              ls_islands: int | None = None, epoch_seconds: float = 1.0, dask_local: int | None = None,
              scheduler: str | None = None, target=None, group: str = "", quiet: bool = False,
              searches: tuple = ()) -> Run:
    """solve() with a time limit, taken in full (no stop at a proven optimum, so that the runs of a
    table are alike; a ``target`` still ends a run); a MetaheurError (no GPU, not enough memory,
    no Dask) becomes the run's status instead of an exception. ``searches``: the local searches'
    parameters (``SolveParams.searches``)."""
    prob = problem(name)
    run = Run(name, prob.n if prob else None, prob.kind.upper() if prob else "", config, strategy, islands, seed,
              seconds, group=group)
    if prob is None:
        run.status = "absent: instance not present"
        return run
    if strategy in ("gpu", "hybrid") and not gpu_devices():
        run.status = "absent: no GPU"
        return run
    from metaheur import SolveParams, solve

    t0 = time.perf_counter()
    try:
        params = SolveParams(strategy=strategy, islands=islands, ga=ga, ls_islands=ls_islands, searches=searches,
                             migration=migration, epoch_seconds=epoch_seconds, dask_local=dask_local,
                             scheduler=scheduler, stop_at_optimum=False)
        run.result = solve(prob, seed=seed, params=params, time_limit=seconds, target=target)
    except MetaheurError as exc:
        run.status = f"error: {exc}"
    except Exception as exc:  # a bug in a configuration must not end a long benchmark: it becomes its row
        run.status = f"error: {type(exc).__name__}: {exc}"
    run.wall_s = time.perf_counter() - t0
    if not quiet:
        if run.ok:
            r = run.result
            gap = "" if r.gap_percent is None else f" gap {r.gap_percent:.3f}%"
            log(f"  {name} {config} seed {seed}: cost {r.cost}{gap} in {r.time_s:.1f} s, "
                f"{ls_per_s(run):,.0f} ls/s")
        else:
            log(f"  {name} {config} seed {seed}: {run.status}")
    return run


def solve_in_wall_time(problem, budget: float, seed: int, **options) -> tuple[Result, float]:
    """``metaheur.solve(problem, seed=seed, **options)`` with ``budget`` seconds of wall time for
    setup and search together: the setup that runs before its time limit starts (worker start,
    transformations, candidate lists) is measured on a 1 s run first and taken off the limit. The
    measured run finds that setup done (workers and their caches are reused), so its own wall time
    is about the limit. Returns the result and the wall time of the measured call."""
    from metaheur import solve

    start = time.perf_counter()
    probe = solve(problem, time_limit=1.0, seed=seed, **options)
    setup = time.perf_counter() - start - probe.time_s
    start = time.perf_counter()
    result = solve(problem, time_limit=max(1.0, budget - setup), seed=seed, **options)
    return result, time.perf_counter() - start


def ls_per_s(run: Run) -> float | None:
    r = run.result
    return r.search_iterations / r.time_s if run.ok and r.time_s > 0 else None


def busy_ls_per_s(run: Run) -> float | None:
    """Sum over islands of (iterations / seconds inside the island's epochs)."""
    if not run.ok:
        return None
    its: dict[int, float] = {}
    busy: dict[int, float] = {}
    for row in run.result.history:
        its[row.island] = its.get(row.island, 0) + row.ls_iterations
        busy[row.island] = busy.get(row.island, 0.0) + row.busy_s
    return sum(its[i] / busy[i] for i in its if busy[i] > 0) or None


def as_good(value: float, bound: float, sense: str) -> bool:
    """Whether ``value`` is ``bound`` or better in the sense ("min": at most, "max": at least)."""
    return value <= bound if sense == "min" else value >= bound


def best_of(values, sense: str):
    """The best of ``values`` in the sense (the least for "min", the greatest for "max")."""
    return min(values) if sense == "min" else max(values)


def target_cost(ref: float, gap: float, sense: str) -> float:
    """The worst value within ``gap`` % of ``ref`` in the sense: above it for "min", below for "max"."""
    slack = gap / 100 * abs(ref)
    return ref + slack if sense == "min" else ref - slack


def time_to_cost(result: Result, cost: float) -> float | None:
    """First end-of-epoch time at which the run's best was ``cost`` or better in the problem's
    sense (None: never)."""
    times = [row.time_s for row in result.history
             if row.global_best is not None and as_good(row.global_best, cost, result.sense)]
    return min(times) if times else None


def time_to_target(result: Result, ref: float | None, gap: float | None) -> float | None:
    """First end-of-epoch time at which the run's best was within ``gap`` % of ``ref`` (None: never,
    or no reference or gap)."""
    if ref is None or gap is None:
        return None
    return time_to_cost(result, target_cost(ref, gap, result.sense))


def time_to_best(result: Result) -> float | None:
    return time_to_cost(result, result.cost)


def device_split(result: Result) -> str:
    """Share of local-search iterations per device (from the islands), with the load balancer's
    utilisation per device when it ran (hybrid)."""
    its: dict[str, int] = {}
    for island in result.islands:
        its[island.device] = its.get(island.device, 0) + island.ls_iterations
    total = sum(its.values())
    util = {d.device: d.utilisation for d in result.device_loads}
    parts = []
    for dev, k in sorted(its.items()):
        share = f"{100 * k / total:.0f}%" if total else "-"
        parts.append(f"{dev} {share}" + (f" (util {util[dev]:.2f})" if util.get(dev) is not None else ""))
    return ", ".join(parts)


def reference(runs: list[Run]) -> tuple[float | None, str]:
    """(reference value, "bks" or "best seen") for runs of one instance: the best-known value, else
    the best value of the runs in the problem's sense."""
    done = [r for r in runs if r.ok]
    if not done:
        return None, ""
    if done[0].result.best_known is not None:
        return done[0].result.best_known, "bks"
    return best_of([r.result.cost for r in done], done[0].result.sense), "best seen"


def gap_to(cost: float, ref: float | None, sense: str = "min") -> float | None:
    """Gap (%) of ``cost`` to ``ref`` in the sense, positive when worse (None: no reference, or
    it is 0 and the cost is not)."""
    return gap_percent(cost, ref, sense)


def rounded(x, digits=4):
    return None if x is None else round(float(x), digits)


def _mean(values, digits=2):
    values = [v for v in values if v is not None]
    return round(statistics.mean(values), digits) if values else None


def median_time(times: list[float | None]):
    """Median with None (not reached) as infinite; "not reached" when the median is."""
    if not times:
        return None
    med = statistics.median([math.inf if t is None else t for t in times])
    return NOT_REACHED if math.isinf(med) else round(med, 2)


RUN_COLUMNS = ["instance", "n", "problem", "group", "config", "seed", "status", "budget_s", "time_s", "cost",
               "reference", "ref_kind", "gap_%", "ls_iterations", "ls_per_s", "busy_ls_per_s", "generations",
               "time_to_target_s", "time_to_best_s", "device_split"]


def run_rows(runs: list[Run], target_gap: dict[str, float] | None = None) -> list[dict]:
    """One row per run (references per instance over all the runs given)."""
    target_gap = target_gap or TARGET_GAP
    names = dict.fromkeys(r.instance for r in runs)
    refs = {name: reference([r for r in runs if r.instance == name]) for name in names}
    rows = []
    for run in runs:
        ref, kind = refs[run.instance]
        row = {"instance": run.instance, "n": run.n, "problem": run.problem, "group": run.group, "config": run.config,
               "seed": run.seed, "status": run.status, "budget_s": run.budget_s}
        if run.ok:
            r = run.result
            gap = gap_to(r.cost, ref, r.sense)
            ttt = time_to_target(r, ref, target_gap.get(r.problem.lower()))
            row.update({"time_s": r.time_s, "cost": r.cost, "reference": ref, "ref_kind": kind, "gap_%": rounded(gap),
                        "ls_iterations": r.search_iterations, "ls_per_s": rounded(ls_per_s(run), 1),
                        "busy_ls_per_s": rounded(busy_ls_per_s(run), 1), "generations": r.generations,
                        "time_to_target_s": NOT_REACHED if ttt is None else round(ttt, 2),
                        "time_to_best_s": rounded(time_to_best(r), 2), "device_split": device_split(r)})
        rows.append(row)
    return rows


def summarise(runs: list[Run], ref: float | None, ref_kind: str, target_gap: float | None) -> dict:
    """Aggregate of the seeds of one configuration on one instance."""
    first = runs[0]
    done = [r for r in runs if r.ok]
    row = {"instance": first.instance, "n": first.n, "problem": first.problem, "group": first.group,
           "config": first.config, "strategy": first.strategy, "islands": first.islands,
           "budget_s": first.budget_s, "seeds": len(runs), "note": first.note}
    if not done:
        row["status"] = first.status
        return row
    row["status"] = "ok" if len(done) == len(runs) else f"{len(runs) - len(done)} failed: {runs[0].status}"
    gaps = [gap_to(r.result.cost, ref, r.result.sense) for r in done]
    gaps = [g for g in gaps if g is not None]
    rates = [ls_per_s(r) for r in done]
    busy = [b for b in (busy_ls_per_s(r) for r in done) if b is not None]
    row.update({
        "time_s": rounded(statistics.mean(r.result.time_s for r in done), 2),
        "best_cost": best_of([r.result.cost for r in done], done[0].result.sense),
        "reference": ref, "ref_kind": ref_kind,
        "mean_gap_%": rounded(statistics.mean(gaps)) if gaps else None,
        "best_gap_%": rounded(min(gaps)) if gaps else None,
        "sd_gap_%": rounded(statistics.stdev(gaps)) if len(gaps) > 1 else None,
        "ls_per_s": rounded(statistics.mean(rates), 1),
        "busy_ls_per_s": rounded(statistics.mean(busy), 1) if busy else None,
        "generations": round(statistics.mean(r.result.generations for r in done)),
        "time_to_best_s": _mean(time_to_best(r.result) for r in done),
        "device_split": device_split(done[0].result),
    })
    if target_gap is not None and ref is not None:
        times = [time_to_target(r.result, ref, target_gap) for r in done]
        row.update({"target_gap_%": target_gap, "reached": f"{sum(t is not None for t in times)}/{len(done)}",
                    "time_to_target_s": median_time(times)})
    return row
