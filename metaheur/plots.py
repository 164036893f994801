"""Plots of a result (matplotlib, Agg backend: they work headless). One function per plot, each
drawing on a given ``ax`` (or a new figure), and a combined figure for ``--plot`` and
``metaheur plot RESULT.json`` whose right column is the problem's picture (:meth:`~ProblemDomain.draw`;
the built-in problems draw theirs in problems/<name>/)."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter

from metaheur.outputs import figure_format
from metaheur.problem.domain import ProblemDomain
from metaheur.result import DeviceRow, Result

FIGURE_SIZE = (12.0, 8.0)
DPI = 100


def axes_or_new(ax: Axes | None) -> Axes:
    """``ax``, or the axes of a new figure (6 x 4 inches)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4), dpi=DPI)
    return ax


def plot_convergence(result: Result, ax=None, log_time: bool = False):
    """Best cost (a maximisation's best value) against search time for every island, from each
    island's first solution (the result's trace of island bests; the epoch history for results
    without one), the run's best as a thick line, a mark where migrants arrived and a line at the
    best-known value. ``log_time``: a logarithmic time axis, which spreads out the first seconds."""
    ax = axes_or_new(ax)
    curves = _island_curves(result)
    end = max([result.time_s] + [t for times, _ in curves.values() for t in times])
    devices = {d.island: d.device for d in result.islands}
    for isl, (times, costs) in sorted(curves.items()):
        device = devices.get(isl, "?")
        line, = ax.step([*times, end], [*costs, costs[-1]], where="post", linewidth=1.0,
                        label=f"island {isl} ({device})")
        arrived = [(r.time_s, r.best_cost) for r in result.history
                   if r.island == isl and r.migrants_in and r.best_cost is not None]
        if arrived:
            ax.plot(*zip(*arrived, strict=True), "v", color=line.get_color(), markersize=5)
    if curves:
        times, costs = _run_best(curves, _better(result))
        ax.step([*times, end], [*costs, costs[-1]], where="post", color="black", linewidth=4.0, alpha=0.25,
                zorder=1, label="run best")
    if result.best_known is not None:
        ax.axhline(result.best_known, color="tab:red", linestyle="--", linewidth=1.0,
                   label=f"best known {result.best_known:,}")
    first = min((times[0] for times, _ in curves.values()), default=0.0)
    if log_time:
        ax.set_xscale("log")
        first = first if first > 0 else min(1e-3, end)
        plain = FuncFormatter(lambda value, _: f"{value:g}")
        ax.xaxis.set_major_formatter(plain)
        # label the 2..9 ticks as well when the axis spans little more than a decade
        ax.xaxis.set_minor_formatter(plain if end < 30 * first else FuncFormatter(lambda value, _: ""))
    if end > first:
        ax.set_xlim(first, end)
    ax.set_xlabel("search time (s, log scale)" if log_time else "search time (s)")
    ax.set_ylabel("best value" if result.sense == "max" else "best cost")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    ax.set_title(f"{result.instance}: convergence (▼ migrants in)")
    if curves or result.best_known is not None:
        ax.legend(fontsize="small")
    return ax


def _island_curves(result: Result) -> dict[int, tuple[list[float], list[int]]]:
    """Per island, the times and costs of its successive bests (better in the result's sense): the
    trace when the result has one, else the best at the end of each epoch."""
    points = [(p.island, p.time_s, p.cost) for p in result.trace]
    if not points:
        points = [(r.island, r.time_s, r.best_cost) for r in result.history if r.best_cost is not None]
    better = _better(result)
    curves: dict[int, tuple[list[float], list[int]]] = {}
    for isl, t, cost in sorted(points, key=lambda p: (p[0], p[1])):
        times, costs = curves.setdefault(isl, ([], []))
        if not costs or better(cost, costs[-1]):
            times.append(t)
            costs.append(cost)
    return curves


def _better(result: Result):
    """``better(a, b)``: whether value ``a`` is better than ``b`` in the result's sense."""
    return (lambda a, b: a > b) if result.sense == "max" else (lambda a, b: a < b)


def _run_best(curves: dict[int, tuple[list[float], list[int]]], better=lambda a, b: a < b):
    """The best over all islands at every time one of them improved (``better``: the result's sense)."""
    times, costs = [], []
    for t, cost in sorted((t, c) for ts, cs in curves.values() for t, c in zip(ts, cs, strict=True)):
        if not costs or better(cost, costs[-1]):
            times.append(t)
            costs.append(cost)
    return times, costs


def plot_devices(result: Result, ax=None):
    """One bar per device: the share of the run its islands were busy (the rest they waited for
    the epoch's slowest island), with its islands, local-search throughput and idle seconds
    written on the bar."""
    ax = axes_or_new(ax)
    loads = result.device_loads or _loads_from_history(result)
    y = np.arange(len(loads))
    busy = [100.0 * d.utilisation for d in loads]
    ax.barh(y, busy, color="tab:green", height=0.6, label="busy")
    ax.barh(y, [100.0 - b for b in busy], left=busy, color="lightgray", height=0.6, label="idle")
    for i, d in enumerate(loads):
        islands = f"{d.islands} island{'s' if d.islands != 1 else ''}, "
        ax.text(2, i, f"{islands}{_rate(d.ls_iterations_per_s)} ls it/s, {busy[i]:.0f} % busy, "
                f"idle {d.idle_s:.1f} s", va="center", fontsize=9)
    ax.set_yticks(y, [d.device for d in loads])
    ax.set_ylim(max(len(loads), 2) - 0.5, -0.5)  # bars of one thickness, the first device on top
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of the run (%)")
    ax.set_title("devices: busy and idle")
    return ax


def _rate(per_s: float) -> str:
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if per_s >= scale:
            return f"{per_s / scale:.3g} {unit}"
    return f"{per_s:.3g}"


def _loads_from_history(result: Result) -> list[DeviceRow]:
    """Per-device loads computed from the epoch rows (results of runs without a balancer)."""
    out: dict[str, DeviceRow] = {}
    islands: dict[str, set[int]] = {}
    epochs: dict[int, float] = {}
    for r in result.history:
        epochs[r.epoch] = max(epochs.get(r.epoch, 0.0), r.busy_s)
    for r in result.history:
        d = out.setdefault(r.device, DeviceRow(r.device, 0, 0.0, 0.0, 0.0, 0, 0.0))
        islands.setdefault(r.device, set()).add(r.island)
        d.busy_s += r.busy_s
        d.idle_s += max(0.0, epochs[r.epoch] - r.busy_s)
        d.ls_iterations += r.ls_iterations
    for d in out.values():
        d.islands = len(islands[d.device])
        d.ls_iterations_per_s = d.ls_iterations / d.busy_s if d.busy_s else 0.0
        d.utilisation = d.busy_s / (d.busy_s + d.idle_s) if d.busy_s + d.idle_s else 0.0
    return list(out.values())


def result_figure(result: Result, problem: ProblemDomain | None = None, *, log_time: bool = False):
    """The combined figure: convergence and devices on the left; on the right the problem's
    picture (:meth:`~ProblemDomain.draw`): in the whole column (``picture_column``: the TSP's tour) or
    above a caption (the QAP's assignment), or the caption alone without a picture."""
    fig = plt.figure(figsize=FIGURE_SIZE, dpi=DPI)
    grid = fig.add_gridspec(2, 2, height_ratios=(5, 2))
    plot_convergence(result, fig.add_subplot(grid[0, 0]), log_time=log_time)
    plot_devices(result, fig.add_subplot(grid[1, 0]))
    picture = problem is not None and problem.picture is not None
    if picture and problem.picture_column:
        problem.draw(fig.add_subplot(grid[:, 1]), np.asarray(result.permutation))
    else:
        if picture:
            problem.draw(fig.add_subplot(grid[0, 1]), np.asarray(result.permutation))
        caption = fig.add_subplot(grid[1, 1] if picture else grid[:, 1])
        caption.set_axis_off()
        caption.text(0.0, 0.5, _caption(result), va="center", family="monospace", fontsize=9)
    fig.tight_layout()
    return fig


def _caption(result: Result) -> str:
    maximise = result.sense == "max"
    gap = "-" if result.gap_percent is None else f"{result.gap_percent:.3f} %" + (" below" if maximise else "")
    return (f"{result.instance} ({result.problem}, n = {result.n})\n{'value' if maximise else 'cost'} "
            f"{result.cost}\nbest known {result.best_known}\ngap {gap}\n"
            f"{result.strategy} on {', '.join(result.devices)}\n"
            f"{result.time_s:.1f} s, {result.search_iterations:,} ls iterations")


def save_result_figure(result: Result, path: str | os.PathLike, problem: ProblemDomain | None = None,
                       fmt: str | None = None, *, log_time: bool = False) -> None:
    """Write the combined figure (1200 x 800 pixels) in format ``fmt``, by default the one the
    path's extension names (PNG, SVG, PDF, JPEG: :func:`metaheur.outputs.figure_format`)."""
    fig = result_figure(result, problem, log_time=log_time)
    fig.savefig(path, format=fmt or figure_format(os.fspath(path)))
    plt.close(fig)
