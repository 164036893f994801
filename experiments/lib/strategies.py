"""The strategy comparison: every strategy configuration on every instance, side by side over seeds,
with the speedup against cpu-serial and its plot."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from metaheur.devices import cpu_count, gpu_devices
from metaheur.islands.params import GAParams

from .backends import auto_workers, one_thread_in_process, warm_pool
from .instances import problem
from .report import log
from .runs import TARGET_GAP, Run, reference, rounded, solve_run, summarise


@dataclass(frozen=True)
class StrategyConfig:
    label: str
    strategy: str
    islands: int | None
    cores: int  # CPU cores it uses (a GPU island is driven by the main process)
    gpus: int


def strategy_configs(cores: int | None = None, gpus: int | None = None, max_cores: int | None = None,
                     islands: list[int] | None = None) -> list[StrategyConfig]:
    """cpu-serial; cpu-islands with k cores (islands = k) for each k of ``islands`` (default 1 ..
    all cores, capped by ``max_cores``); gpu; hybrid (Van Luong et al. 2012)."""
    cores = cores or cpu_count()
    gpus = len(gpu_devices()) if gpus is None else gpus
    ks = islands or range(1, min(cores, max_cores or cores) + 1)
    out = [StrategyConfig("cpu-serial", "cpu-serial", None, 1, 0)]
    out += [StrategyConfig(f"cpu-islands x{k}", "cpu-islands", k, k, 0) for k in ks]
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
            row["speedup"] = rounded(row["ls_per_s"] / base, 3) if base and row.get("ls_per_s") else None
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
