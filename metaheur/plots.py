"""Plots of a result (matplotlib, Agg backend: they work headless). One function per plot, each
drawing on a given ``ax`` (or a new figure), and a combined figure for ``--plot`` and
``metaheur plot RESULT.json``."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from metaheur.outputs import figure_format
from metaheur.problems import QAP, TSP
from metaheur.result import Result

FIGURE_SIZE = (12.0, 8.0)
DPI = 100


def _axes(ax):
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4), dpi=DPI)
    return ax


def plot_convergence(result: Result, ax=None):
    """Best cost against time for every island, with a mark where migrants arrived."""
    ax = _axes(ax)
    rows = result.history
    islands = sorted({r["island"] for r in rows})
    for isl in islands:
        mine = [r for r in rows if r["island"] == isl and r["best_cost"] is not None]
        if not mine:
            continue
        t = [r["time_s"] for r in mine]
        c = [r["best_cost"] for r in mine]
        line, = ax.step(t, c, where="post", label=f"island {isl} ({mine[0]['device']})")
        arrived = [(r["time_s"], r["best_cost"]) for r in mine if r.get("migrants_in")]
        if arrived:
            ax.plot(*zip(*arrived, strict=True), "v", color=line.get_color(), markersize=5)
    if result.best_known is not None:
        ax.axhline(result.best_known, color="black", linestyle="--", linewidth=0.8, label="best known")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("best cost")
    ax.set_title(f"{result.instance}: convergence (▼ migrants in)")
    if islands:
        ax.legend(fontsize="small")
    return ax


def plot_tour(tsp: TSP, tour, ax=None, title: str | None = None):
    """The tour drawn on the instance's (display) coordinates."""
    ax = _axes(ax)
    if tsp.display is None:
        ax.text(0.5, 0.5, "no coordinates to draw", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return ax
    xy = tsp.display[np.append(tour, tour[0])]
    ax.plot(xy[:, 0], xy[:, 1], "-", linewidth=0.6 if tsp.n > 1000 else 1.0, color="tab:blue")
    if tsp.n <= 2000:
        ax.plot(tsp.display[:, 0], tsp.display[:, 1], ".", markersize=2, color="tab:red")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(title or f"{tsp.name}: tour")
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def plot_assignment(qap: QAP, permutation, ax=None):
    """The cost contribution a_ij * b_p(i)p(j) of every pair of units, units ordered by location:
    where the flow meets long distances."""
    ax = _axes(ax)
    p = np.asarray(permutation)
    order = np.argsort(p)  # units by the location they occupy
    contrib = qap.flow[np.ix_(order, order)] * qap.distance[np.ix_(p[order], p[order])]
    im = ax.imshow(contrib, cmap="viridis", interpolation="nearest")
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    ax.set_title(f"{qap.name}: cost of each pair (by location)")
    ax.set_xlabel("location")
    ax.set_ylabel("location")
    return ax


def plot_devices(result: Result, ax=None):
    """Local-search throughput and idle time per device."""
    ax = _axes(ax)
    loads = result.device_loads or _loads_from_history(result)
    names = [d["device"] for d in loads]
    rates = [d["ls_iterations_per_s"] for d in loads]
    idle = [d["idle_s"] for d in loads]
    x = np.arange(len(names))
    ax.bar(x - 0.2, rates, width=0.4, label="ls iterations / s", color="tab:green")
    ax.set_xticks(x, names)
    ax.set_ylabel("local-search iterations per second")
    twin = ax.twinx()
    twin.bar(x + 0.2, idle, width=0.4, label="idle s", color="tab:gray")
    twin.set_ylabel("idle seconds")
    ax.set_title("devices: throughput and idle time")
    return ax


def _loads_from_history(result: Result) -> list[dict]:
    """Per-device loads computed from the epoch rows (results of runs without a balancer)."""
    out: dict[str, dict] = {}
    epochs: dict[int, float] = {}
    for r in result.history:
        epochs[r["epoch"]] = max(epochs.get(r["epoch"], 0.0), r["busy_s"])
    for r in result.history:
        d = out.setdefault(r["device"], {"device": r["device"], "busy_s": 0.0, "idle_s": 0.0, "ls_iterations": 0})
        d["busy_s"] += r["busy_s"]
        d["idle_s"] += max(0.0, epochs[r["epoch"]] - r["busy_s"])
        d["ls_iterations"] += r["ls_iterations"]
    for d in out.values():
        d["ls_iterations_per_s"] = d["ls_iterations"] / d["busy_s"] if d["busy_s"] else 0.0
    return list(out.values())


def result_figure(result: Result, problem: QAP | TSP | None = None):
    """The combined figure: convergence, devices, and the tour (TSP) or assignment (QAP)."""
    fig, axes = plt.subplots(2, 2, figsize=FIGURE_SIZE, dpi=DPI)
    plot_convergence(result, axes[0, 0])
    plot_devices(result, axes[0, 1])
    if isinstance(problem, TSP):
        gs = axes[1, 0].get_gridspec()
        for a in axes[1, :]:
            a.remove()
        plot_tour(problem, result.solution, fig.add_subplot(gs[1, :]))
    elif isinstance(problem, QAP):
        plot_assignment(problem, result.solution, axes[1, 0])
        axes[1, 1].set_axis_off()
        axes[1, 1].text(0.0, 0.5, _caption(result), va="center", family="monospace", fontsize=9)
    else:
        for a in axes[1, :]:
            a.set_axis_off()
        axes[1, 0].text(0.0, 0.5, _caption(result), va="center", family="monospace", fontsize=9)
    fig.tight_layout()
    return fig


def _caption(result: Result) -> str:
    gap = "-" if result.gap_percent is None else f"{result.gap_percent:.3f} %"
    return (f"{result.instance} ({result.problem}, n = {result.n})\ncost {result.cost}\nbest known "
            f"{result.best_known}\ngap {gap}\n{result.strategy} on {', '.join(result.devices)}\n"
            f"{result.time_s:.1f} s, {result.search_iterations:,} ls iterations")


def save_result_figure(result: Result, path: str | os.PathLike, problem: QAP | TSP | None = None,
                       fmt: str | None = None) -> None:
    """Write the combined figure (1200 x 800 pixels) in format ``fmt``, by default the one the
    path's extension names (PNG, SVG, PDF, JPEG: :func:`metaheur.outputs.figure_format`)."""
    fig = result_figure(result, problem)
    fig.savefig(path, format=fmt or figure_format(os.fspath(path)))
    plt.close(fig)
