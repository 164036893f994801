"""Shared by the experiment scripts (strategies.py, quality.py, peers.py, ablation.py,
bench_hybrid.py, and bench_search.py's rots.c helpers): running ``metaheur.solver.solve`` and
measuring a run (local-search iterations per second, gap, time to a target from the epoch
history), the strategy comparison, the ablation, the loky-vs-Dask comparison, the rots.c
yardstick, and the speedup plot. Scripts import it from their own folder, like benchlib.

Conventions of every table made here:

* ``ls_per_s`` = ``result.search_iterations / result.time_s``: local-search iterations (QAP: tabu
  iterations, TSP: ILS kicks) of all islands per second of the solver's search time. That time
  starts before the worker processes have started and built their operators, so short runs of
  worker-process strategies are penalised by their start-up; ``busy_ls_per_s`` (the sum over
  islands of iterations / seconds spent inside their epochs, from ``result.history``) shows the
  rate while working.
* time to a target: the first ``time_s`` of ``result.history`` (the end of an epoch) at which
  ``global_best <= (1 + gap / 100) * reference``; it has the resolution of an epoch. Over seeds,
  the median with "not reached" counted as infinite ("not reached" when that median is).
* reference: the best-known value when the instance has one, else the best cost found by any run
  of the same instance in the same table ("best seen"), e.g. for generated ``gen:`` instances.
* worker pools are started before the timed runs (:func:`warm_pool`): a timed run does not pay
  for starting Python processes, but its workers still build the instance's operators in it.
* in-process islands (``cpu-serial``, and ``cpu-islands`` with one island) run their CPU kernels
  on one OpenMP thread here (``set_cpu_threads(1)``, what worker islands do): the solver leaves
  them on every core, which makes "one core" use all of them (and on a busy machine run up to 10x
  slower).
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import header

from metaheur.devices import cpu_count, gpu_devices
from metaheur.engine import set_cpu_threads
from metaheur.errors import MetaheurError
from metaheur.islands.migration import MigrationParams, default_migration
from metaheur.islands.params import GAParams, default_ga, with_crossover
from metaheur.problems import QAP, TSP, load_instance
from metaheur.result import Result
from metaheur.search.qap_tabu import yardstick_start

HERE = Path(__file__).resolve().parent
YARDSTICK = HERE.parents[0].parent / "shared" / "yardsticks" / "rots.c"
TARGET_GAP = {"qap": 1.0, "tsp": 2.0}  # default target gaps (%) for the time to target
NOT_REACHED = "not reached"


def log(message: str) -> None:
    """Progress line on stderr (tables go to stdout)."""
    print(message, file=sys.stderr, flush=True)


def one_thread_in_process() -> None:
    """In-process CPU islands on one OpenMP thread (see the module docstring)."""
    set_cpu_threads(1)


def run_header(settings: str) -> list[str]:
    """benchlib's header plus the settings, the devices and the load average at the start (a busy
    machine makes every rate here noisy)."""
    gpus = ", ".join(f"{g.name} {g.label}" for g in gpu_devices()) or "none"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return [*header(settings), f"devices: {cpu_count()} CPU cores; GPUs: {gpus}; load average at start: {load}"]


def need_instances(script: str) -> Path:
    """The folder named by METAHEUR_INSTANCES; exits with a message when it is not set."""
    value = os.environ.get("METAHEUR_INSTANCES")
    if not value or not Path(value).expanduser().is_dir():
        sys.exit(f"{script}: set METAHEUR_INSTANCES to the folder of the benchmark libraries (qaplib/, tsplib/)")
    return Path(value).expanduser()


def split_names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def names_arg(given: str | None, full: list[str], quick_default: list[str], quick: bool) -> list[str]:
    """Instance names from a comma-separated option (an empty string: none), else the defaults of
    the mode."""
    if given is not None:
        return split_names(given)
    return list(quick_default if quick else full)


_PROBLEMS: dict[str, object] = {}


def problem(name: str):
    """The instance named ``name`` (library name, path or ``gen:`` name), loaded once; ``None``
    when it is not present."""
    if name not in _PROBLEMS:
        try:
            _PROBLEMS[name] = load_instance(name)
        except MetaheurError:
            _PROBLEMS[name] = None
    return _PROBLEMS[name]


def present(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """(names found, names missing) — generated ``gen:`` instances are always found."""
    found, missing = [], []
    for name in names:
        (found if problem(name) is not None else missing).append(name)
    if missing:
        log(f"skipped (not present under METAHEUR_INSTANCES): {', '.join(missing)}")
    return found, missing


def budget_seconds(kind: str, n: int, base: float) -> float:
    """Time budget scaled by size: QAP ``base * n / 50``, TSP ``base * n / 1000``, clipped to
    ``[base / 2, 10 * base]``."""
    scale = n / 50 if kind == "qap" else n / 1000
    return round(float(min(10 * base, max(base / 2, base * scale))), 2)


# ------------------------------------------------------------------------------------ one run
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
              walk_islands: int | None = None, epoch_seconds: float = 1.0, dask_local: int | None = None,
              scheduler: str | None = None, target=None, group: str = "", quiet: bool = False) -> Run:
    """solve() with a time limit, taken in full (no stop at a proven optimum, so that the runs of a
    table are alike; a ``target`` still ends a run); a MetaheurError (no GPU, not enough memory,
    no Dask) becomes the run's status instead of an exception."""
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
        params = SolveParams(strategy=strategy, islands=islands, ga=ga, walk_islands=walk_islands,
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


def time_to_cost(result: Result, cost: float) -> float | None:
    """First end-of-epoch time at which the run's best was <= cost (None: never)."""
    times = [row.time_s for row in result.history if row.global_best is not None and row.global_best <= cost]
    return min(times) if times else None


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
    """(reference cost, "bks" or "best seen") for runs of one instance."""
    done = [r for r in runs if r.ok]
    if not done:
        return None, ""
    if done[0].result.best_known is not None:
        return done[0].result.best_known, "bks"
    return min(r.result.cost for r in done), "best seen"


def gap_to(cost: float, ref: float | None) -> float | None:
    if ref is None:
        return None
    if ref == 0:
        return 0.0 if cost == 0 else None
    return 100.0 * (cost - ref) / abs(ref)


def _r(x, digits=4):
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
            gap = gap_to(r.cost, ref)
            limit = None if ref is None else (1 + target_gap[r.problem.lower()] / 100) * ref
            ttt = time_to_cost(r, limit) if limit is not None else None
            row.update({"time_s": r.time_s, "cost": r.cost, "reference": ref, "ref_kind": kind, "gap_%": _r(gap),
                        "ls_iterations": r.search_iterations, "ls_per_s": _r(ls_per_s(run), 1),
                        "busy_ls_per_s": _r(busy_ls_per_s(run), 1), "generations": r.generations,
                        "time_to_target_s": NOT_REACHED if ttt is None else round(ttt, 2),
                        "time_to_best_s": _r(time_to_best(r), 2), "device_split": device_split(r)})
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
    gaps = [gap_to(r.result.cost, ref) for r in done]
    gaps = [g for g in gaps if g is not None]
    rates = [ls_per_s(r) for r in done]
    busy = [b for b in (busy_ls_per_s(r) for r in done) if b is not None]
    row.update({
        "time_s": _r(statistics.mean(r.result.time_s for r in done), 2),
        "best_cost": min(r.result.cost for r in done), "reference": ref, "ref_kind": ref_kind,
        "mean_gap_%": _r(statistics.mean(gaps)) if gaps else None, "best_gap_%": _r(min(gaps)) if gaps else None,
        "sd_gap_%": _r(statistics.stdev(gaps)) if len(gaps) > 1 else None,
        "ls_per_s": _r(statistics.mean(rates), 1), "busy_ls_per_s": _r(statistics.mean(busy), 1) if busy else None,
        "generations": round(statistics.mean(r.result.generations for r in done)),
        "time_to_best_s": _mean(time_to_best(r.result) for r in done),
        "device_split": device_split(done[0].result),
    })
    if target_gap is not None and ref is not None:
        limit = (1 + target_gap / 100) * ref
        times = [time_to_cost(r.result, limit) for r in done]
        row.update({"target_gap_%": target_gap, "reached": f"{sum(t is not None for t in times)}/{len(done)}",
                    "time_to_target_s": median_time(times)})
    return row


# --------------------------------------------------------------------------- strategy comparison
@dataclass(frozen=True)
class StrategyConfig:
    label: str
    strategy: str
    islands: int | None
    cores: int  # CPU cores it uses (a GPU island is driven by the main process)
    gpus: int


def strategy_configs(cores: int | None = None, gpus: int | None = None, max_cores: int | None = None
                     ) -> list[StrategyConfig]:
    """cpu-serial; cpu-islands with 1..all cores (islands = k); gpu; hybrid (Van Luong et al. 2012)."""
    cores = cores or cpu_count()
    gpus = len(gpu_devices()) if gpus is None else gpus
    top = min(cores, max_cores or cores)
    out = [StrategyConfig("cpu-serial", "cpu-serial", None, 1, 0)]
    out += [StrategyConfig(f"cpu-islands x{k}", "cpu-islands", k, k, 0) for k in range(1, top + 1)]
    out += [StrategyConfig("gpu", "gpu", None, 1, gpus), StrategyConfig("hybrid", "hybrid", None, cores, gpus)]
    return out


STRATEGY_COLUMNS = ["instance", "n", "problem", "config", "cores", "gpus", "status", "budget_s", "seeds", "time_s",
                    "ls_per_s", "busy_ls_per_s", "speedup", "best_cost", "reference", "ref_kind", "mean_gap_%",
                    "best_gap_%", "target_gap_%", "reached", "time_to_target_s", "device_split"]


def compare_strategies(names: list[str], seeds: int, seconds_for: Callable[[object], float],
                       target_gap: dict[str, float] | None = None, epoch_seconds: float = 1.0,
                       configs: list[StrategyConfig] | None = None, warm: bool = True,
                       ga_for: Callable[[object], GAParams | None] | None = None) -> tuple[list[dict], list[Run]]:
    """Every configuration on every instance for ``seeds`` seeds, the configurations taking turns
    within each seed (side by side, so that a shared machine's drift over minutes falls on all of
    them); returns (summary rows, runs). ``speedup`` = ls_per_s / ls_per_s of cpu-serial on the
    same instance (means over seeds).
    ``warm``: start the worker pool of a configuration before each of its runs (:func:`warm_pool`).
    ``ga_for``: the GA parameters for an instance (e.g. :func:`steady_workload`; None: the default)."""
    target_gap = target_gap or TARGET_GAP
    configs = configs or strategy_configs()
    one_thread_in_process()
    rows, runs = [], []
    for name in names:
        prob = problem(name)
        seconds = seconds_for(prob)
        log(f"strategies: {name} (n = {prob.n}), {seconds} s per run")
        ga = ga_for(prob) if ga_for else None
        mine: dict[StrategyConfig, list[Run]] = {cfg: [] for cfg in configs}
        for s in range(seeds):
            for cfg, done in mine.items():
                if done and not done[0].ok and done[0].status.startswith("absent"):
                    continue  # one row says why it is absent
                if warm and cfg.strategy != "gpu" and (cfg.strategy != "hybrid" or gpu_devices()):
                    warm_pool(cfg.islands or auto_workers())
                done.append(solve_run(name, config=cfg.label, strategy=cfg.strategy, islands=cfg.islands,
                                      seconds=seconds, seed=s, ga=ga, epoch_seconds=epoch_seconds))
        ref, kind = reference([r for rs in mine.values() for r in rs])
        base = None
        for cfg, rs in mine.items():
            row = summarise(rs, ref, kind, target_gap[prob.kind])
            row.update({"cores": cfg.cores, "gpus": cfg.gpus, "seeds": len(rs)})
            if cfg.strategy == "cpu-serial":
                base = row.get("ls_per_s")
            row["speedup"] = _r(row["ls_per_s"] / base, 3) if base and row.get("ls_per_s") else None
            rows.append(row)
            runs.extend(rs)
    return rows, runs


def plot_speedup(rows: list[dict], path: Path, title: str) -> Path | None:
    """Speedup (ls/s against cpu-serial) against cores: one line per instance for cpu-islands,
    GPU and hybrid points where they ran, the ideal line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    top = 1
    for name in dict.fromkeys(r["instance"] for r in rows):
        mine = [r for r in rows if r["instance"] == name and r.get("speedup") is not None]
        line = sorted((r["cores"], r["speedup"]) for r in mine if r["config"].startswith("cpu-islands"))
        if not line:
            continue
        top = max(top, line[-1][0])
        (h,) = ax.plot(*zip(*line, strict=True), marker="o", label=f"{name} (n = {mine[0]['n']})")
        for r in mine:
            if r["config"] in ("gpu", "hybrid"):
                ax.plot([r["cores"]], [r["speedup"]], marker="*" if r["config"] == "hybrid" else "s", ms=10,
                        color=h.get_color(), linestyle="none")
    ax.plot([1, top], [1, top], "k--", lw=0.8, label="ideal")
    ax.set_xlabel("CPU cores (cpu-islands, islands = cores)")
    ax.set_ylabel("speedup of local-search iterations/s vs cpu-serial")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")
    return path


# ------------------------------------------------------------------------------------ ablation
ABLATION_GROUPS = ("hybridisation", "crossover", "topology", "interval", "restart")
RESTART_AFTER = (30, 100, 0)  # the restart group: generations without a new best before a restart (0: never)


@dataclass(frozen=True)
class Variant:
    group: str
    name: str
    ga: GAParams
    migration: MigrationParams | None = None  # solve()'s default for the instance when None
    skip: str = ""
    walk_islands: int | None = None  # solve()'s default when None


def ablation_variants(prob: QAP | TSP, groups: Iterable[str] = ABLATION_GROUPS) -> list[Variant]:
    """One factor at a time off the default for ``prob`` (GA + local search, default crossover,
    ring every epoch, or no migration on uniformly random QAP instances: ``default_migration``).
    LS-only is what the CLI's ``--crossover none`` runs (QAP: one robust tabu search per island for
    the whole run; TSP: one iterated local search chain); GA-only is ``ls_budget = 0``; for the QAP,
    "GA+LS islands only" has no tabu-walk islands (``walk_islands = 0``; the default makes half of
    the CPU islands tabu walks). The restart group restarts a GA island's population after
    ``RESTART_AFTER`` generations without a new best in it, or never, and tries the other restart
    (``best`` keeps the population's best, ``full`` replaces every member; the default decides by
    the instance's class). The topology group migrates every epoch where the default does not
    migrate."""
    kind = prob.kind
    base = default_ga(prob)
    mig = default_migration(prob)
    moving = mig if mig.interval else MigrationParams()
    out = []
    for group in groups:
        if group == "hybridisation":
            out += [Variant(group, "GA+LS (default)", base),
                    Variant(group, "LS-only multistart", with_crossover(base, "none")),
                    Variant(group, "GA-only (ls_budget=0)", replace(base, ls_budget=0))]
            if kind == "qap":
                out.append(Variant(group, "GA+LS islands only (walk_islands=0)", base, walk_islands=0))
        elif group == "crossover":
            ops = ("ux", "cx", "pmx") if kind == "qap" else ("ox", "eax")
            for op in ops:
                out.append(Variant(group, op + (" (default)" if op == base.crossover else ""),
                                   with_crossover(base, op)))
        elif group == "topology":
            out += [Variant(group, t + (" (default)" if mig.interval and t == mig.topology else ""), base,
                            replace(moving, topology=t)) for t in ("ring", "complete", "random")]
        elif group == "interval":
            out += [Variant(group, (f"every {k} epoch{'s' if k > 1 else ''}" if k else "no migration")
                            + (" (default)" if k == mig.interval else ""), base, replace(moving, interval=k))
                    for k in (1, 3, 10, 0)]
        elif group == "restart":
            out += [Variant(group, (f"after {k} stale generations" if k else "never")
                            + (" (default)" if k == base.restart_after else ""), replace(base, restart_after=k))
                    for k in RESTART_AFTER]
            other = "best" if base.restart == "full" else "full"
            out.append(Variant(group, f"after {base.restart_after} stale generations, restart={other}",
                               replace(base, restart=other)))
        else:
            raise ValueError(f"unknown ablation group {group!r}")
    return out


ABLATION_COLUMNS = ["instance", "n", "problem", "group", "config", "status", "budget_s", "seeds", "islands",
                    "best_cost", "reference", "ref_kind", "mean_gap_%", "best_gap_%", "sd_gap_%", "ls_per_s",
                    "generations", "time_to_best_s", "note"]


def run_ablation(names: list[str], seeds: int, seconds_for: Callable[[object], float], islands: int,
                 groups: Iterable[str] = ABLATION_GROUPS, epoch_seconds: float = 1.0) -> tuple[list[dict], list[Run]]:
    """Every variant on every instance, cpu-islands with ``islands`` islands, equal time; the same
    configuration appearing in several groups (the default) runs once. Returns (summary rows, runs)."""
    one_thread_in_process()
    groups = tuple(groups)
    rows, runs = [], []
    for name in names:
        prob = problem(name)
        seconds = seconds_for(prob)
        log(f"ablation: {name} (n = {prob.n}), {seconds} s per run, {islands} islands")
        warm_pool(islands)
        done: dict[tuple, list[Run]] = {}
        table: list[tuple[Variant, list[Run]]] = []
        for v in ablation_variants(prob, groups):
            if v.skip:
                skipped = Run(name, prob.n, prob.kind.upper(), v.name, "cpu-islands", islands, 0, seconds,
                              status=v.skip, group=v.group)
                table.append((v, [skipped]))
                continue
            migration = v.migration or default_migration(prob)
            key = (v.ga, migration, v.walk_islands)
            if key not in done:
                done[key] = [solve_run(name, config=v.name, strategy="cpu-islands", islands=islands,
                                       seconds=seconds, seed=s, ga=v.ga, migration=migration,
                                       walk_islands=v.walk_islands, epoch_seconds=epoch_seconds, group=v.group)
                             for s in range(seeds)]
                runs.extend(done[key])
            table.append((v, done[key]))
        ref, kind = reference([r for _, rs in table for r in rs])
        for v, rs in table:
            row = summarise(rs, ref, kind, None)
            row.update({"group": v.group, "config": v.name})
            if v.skip:
                row.update({"status": "skipped", "note": v.skip.removeprefix("skipped: ")})
            rows.append(row)
    return rows, runs


# ------------------------------------------------------------------------------ loky vs Dask
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
    return replace(default_ga(prob), population=100, restart_after=0)


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
                row["ratio_to_loky"] = _r(row["ls_per_s"] / base, 3) if base and row.get("ls_per_s") else None
                rows.append(row)
                runs += rs
    finally:
        if cluster is not None:
            cluster.close()
    return rows, runs


# ------------------------------------------------------------------------------- rots.c yardstick
def find_yardstick() -> Path | None:
    """shared/yardsticks/rots.c (or $METAHEUR_YARDSTICK) when present."""
    source = Path(os.environ.get("METAHEUR_YARDSTICK", YARDSTICK))
    return source if source.is_file() else None


def build_rots(workdir: Path) -> Path:
    source = find_yardstick()
    if source is None:
        sys.exit(f"{Path(sys.argv[0]).stem}: yardstick {os.environ.get('METAHEUR_YARDSTICK', YARDSTICK)} not found "
                 "(set METAHEUR_YARDSTICK)")
    exe = workdir / "rots"
    subprocess.run(["gcc", "-O3", "-march=native", "-o", str(exe), str(source)], check=True)
    return exe


rots_start = yardstick_start  # the yardstick's start (kept under the name the scripts use)


def run_rots(exe: Path, path: str, iterations: int, seed: int) -> dict:
    out = subprocess.run([str(exe), path, str(iterations), str(seed)], capture_output=True, text=True, check=True)
    values = dict(re.findall(r"(\w+)=([\d.]+)", out.stdout))
    return {"best": int(values["best"]), "iters": int(values["iters"]), "seconds": float(values["seconds"])}


def rots_best_of_cores(exe: Path, path: str, seconds: float, seed: int, cores: int | None = None) -> dict:
    """rots.c once per core at the same time (seeds cores*seed+1 ...), each with the iterations it
    does in ``seconds`` at its measured speed (a 5000-iteration probe); the best of them."""
    from concurrent.futures import ThreadPoolExecutor

    cores = cores or cpu_count()
    probe = run_rots(exe, path, 5000, 1)
    iterations = max(1000, int(seconds * probe["iters"] / max(probe["seconds"], 1e-6)))
    t0 = time.perf_counter()
    with ThreadPoolExecutor(cores) as pool:
        seeds = [cores * seed + 1 + i for i in range(cores)]
        runs = list(pool.map(lambda s: run_rots(exe, path, iterations, s), seeds))
    wall = time.perf_counter() - t0
    return {"best": min(r["best"] for r in runs), "iters": sum(r["iters"] for r in runs), "wall_s": wall,
            "iterations_each": iterations, "runs": len(runs)}


def have_gcc() -> bool:
    return shutil.which("gcc") is not None
