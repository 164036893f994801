"""The ablation: one factor of the default configuration at a time (hybridisation, crossover,
migration topology and interval, restarts), cpu-islands at equal time."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from metaheur.islands.migration import MigrationParams
from metaheur.islands.params import GAParams, with_crossover
from metaheur.problems import QAP, TSP

from .backends import one_thread_in_process, warm_pool
from .instances import problem
from .report import log
from .runs import Run, reference, solve_run, summarise

ABLATION_GROUPS = ("hybridisation", "crossover", "topology", "interval", "restart")
RESTART_AFTER = (30, 100, 0)  # the restart group: generations without a new best before a restart (0: never)


@dataclass(frozen=True)
class Variant:
    group: str
    name: str
    ga: GAParams
    migration: MigrationParams | None = None  # solve()'s default for the instance when None
    skip: str = ""
    ls_islands: int | None = None  # solve()'s default when None


def ablation_variants(prob: QAP | TSP, groups: Iterable[str] = ABLATION_GROUPS) -> list[Variant]:
    """One factor at a time off the default for ``prob`` (GA + local search, default crossover,
    ring every epoch, or no migration on uniformly random QAP instances: ``Problem.default_migration``).
    LS-only is what the CLI's ``--crossover none`` runs (QAP: one robust tabu search per island for
    the whole run; TSP: one iterated local search chain); GA-only is ``ls_budget = 0``; for the QAP,
    "GA+LS islands only" has no tabu islands (``ls_islands = 0``; the default makes half of
    the CPU islands tabu islands). The restart group restarts a GA island's population after
    ``RESTART_AFTER`` generations without a new best in it, or never, and tries the other restart
    (``best`` keeps the population's best, ``full`` replaces every member; the default decides by
    the instance's class). The topology group migrates every epoch where the default does not
    migrate."""
    kind = prob.kind
    base = prob.default_params().ga
    mig = prob.default_migration()
    moving = mig if mig.interval else MigrationParams()
    out = []
    for group in groups:
        if group == "hybridisation":
            out += [Variant(group, "GA+LS (default)", base),
                    Variant(group, "LS-only multistart", with_crossover(base, "none")),
                    Variant(group, "GA-only (ls_budget=0)", replace(base, ls_budget=0))]
            if kind == "qap":
                out.append(Variant(group, "GA+LS islands only (ls_islands=0)", base, ls_islands=0))
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
            migration = v.migration or prob.default_migration()
            key = (v.ga, migration, v.ls_islands)
            if key not in done:
                done[key] = [solve_run(name, config=v.name, strategy="cpu-islands", islands=islands,
                                       seconds=seconds, seed=s, ga=v.ga, migration=migration,
                                       ls_islands=v.ls_islands, epoch_seconds=epoch_seconds, group=v.group)
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
