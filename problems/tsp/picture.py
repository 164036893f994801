"""The TSP's picture (:meth:`TourProblem.draw <metaheur.problems.tsp.TourProblem.draw>`): a tour on
the cities, with arrows for an ATSP's direction."""

from __future__ import annotations

import numpy as np

from metaheur.plots import axes_or_new


def plot_tour(tsp, tour, ax=None, title: str | None = None):
    """The tour drawn on the instance's (display) coordinates; an ATSP tour with arrows in its
    direction (up to 2000 cities)."""
    ax = axes_or_new(ax)
    if tsp.display is None:
        ax.text(0.5, 0.5, "no coordinates to draw", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return ax
    xy = tsp.display[np.append(tour, tour[0])]
    ax.plot(xy[:, 0], xy[:, 1], "-", linewidth=0.6 if tsp.n > 1000 else 1.0, color="tab:blue")
    if tsp.directed and tsp.n <= 2000:
        mid, step = (xy[:-1] + xy[1:]) / 2, xy[1:] - xy[:-1]
        ax.quiver(mid[:, 0], mid[:, 1], step[:, 0], step[:, 1], angles="xy", pivot="mid", color="tab:blue",
                  scale=None, width=0.002, headwidth=6, headlength=6, minlength=0)
    if tsp.n <= 2000:
        ax.plot(tsp.display[:, 0], tsp.display[:, 1], ".", markersize=2, color="tab:red")
    ax.set_aspect("equal", adjustable="box")  # the box takes the cities' shape, so the tour fills it
    ax.set_title(title or f"{tsp.name}: tour")
    ax.set_xticks([])
    ax.set_yticks([])
    return ax
