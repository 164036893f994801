"""How the islands solve an ATSP: those of the TSP on its symmetric transformation, with longer
candidate lists where its arcs tie (the decisions of :class:`~metaheur.problems.atsp.TwinTSP`'s
solving methods; docs/decisions/atsp-method.md)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from metaheur.islands.params import IslandParams
from metaheur.problems.tsp import solving
from metaheur.problems.tsp.params import ILSParams

if TYPE_CHECKING:
    from metaheur.problems.atsp.twin import TwinTSP

#: Candidate list length on an ATSP's transformation with many ties (docs/decisions/atsp-method.md).
TIED_ATSP_NEIGHBOURS = 16


def twin_default_params(twin: TwinTSP) -> IslandParams:
    """The TSP's defaults (:func:`metaheur.problems.tsp.solving.default_params`) with
    ``TIED_ATSP_NEIGHBOURS`` candidates when the median city has more arcs tied at zero reduced
    cost (:meth:`TwinTSP.tied_arcs`) than the default lists hold (stacker-crane instances such as
    rbg358): the arcs of an optimal tour are among those ties when the assignment bound is tight,
    and lists that cut them keep the search from it. Lists without such ties stay short, which
    makes each move cheaper (docs/decisions/atsp-method.md)."""
    params = solving.default_params(twin)
    ils = params.search(ILSParams)
    if np.median(twin.tied_arcs()) >= ils.neighbours - 1:
        return params.with_search(replace(ils, neighbours=TIED_ATSP_NEIGHBOURS))
    return params
