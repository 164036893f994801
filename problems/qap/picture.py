"""The QAP's picture (:meth:`QAP.draw <metaheur.problems.qap.QAP.draw>`): the cost of each pair of
units, by location."""

from __future__ import annotations

import numpy as np

from metaheur.plots import axes_or_new


def plot_assignment(qap, permutation, ax=None):
    """The cost contribution a_ij * b_p(i)p(j) of every pair of units, units ordered by location:
    where the flow meets long distances."""
    ax = axes_or_new(ax)
    p = np.asarray(permutation)
    order = np.argsort(p)  # units by the location they occupy
    contrib = qap.flow[np.ix_(order, order)] * qap.distance[np.ix_(p[order], p[order])]
    im = ax.imshow(contrib, cmap="viridis", interpolation="nearest")
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    ax.set_title(f"{qap.name}: cost of each pair (by location)")
    ax.set_xlabel("location")
    ax.set_ylabel("location")
    return ax
