"""How the islands solve a TSP (and an ATSP through its symmetric transformation): the default
parameters, the kernel variants and the island algorithms (the decisions of
:class:`~metaheur.problems.tsp.TSP`'s solving methods)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from metaheur.devices import Device
from metaheur.engine import load_module
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems.atsp import TwinTSP
from metaheur.problems.tsp import TSP

#: Candidate list length on an ATSP's transformation with many ties (docs/decisions/atsp-method.md).
TIED_ATSP_NEIGHBOURS = 16
#: From this size an instance with coordinates continues as ILS once converged (docs/decisions/tsp-ils-continuation.md).
ILS_CONTINUATION_N = 50_000


def default_params(tsp: TSP) -> IslandParams:
    """A population of ILS local optima recombined by EAX (Nagata and Kobayashi 2013), sized
    automatically; a population whose best has not improved for 30 generations has converged and
    restarts, keeping its best (docs/decisions/eax-restarts.md); from ``ILS_CONTINUATION_N`` cities
    with coordinates it goes on as an iterated local search of its best instead
    (``restart = "ils"``, docs/decisions/tsp-ils-continuation.md)."""
    large = tsp.n >= ILS_CONTINUATION_N and tsp.coords is not None
    return IslandParams(ga=GAParams(population=0, offspring=1, crossover="eax", restart_after=30,
                                    restart="ils" if large else "best"))


def twin_default_params(twin: TwinTSP) -> IslandParams:
    """:func:`default_params` with ``TIED_ATSP_NEIGHBOURS`` candidates when the median city has more
    arcs tied at zero reduced cost (:meth:`TwinTSP.tied_arcs`) than the default lists hold
    (stacker-crane instances such as rbg358): the arcs of an optimal tour are among those ties when
    the assignment bound is tight, and lists that cut them keep the search from it. Lists without
    such ties stay short, which makes each move cheaper (docs/decisions/atsp-method.md)."""
    params = default_params(twin)
    if np.median(twin.tied_arcs()) >= params.ils.neighbours - 1:
        return replace(params, ils=replace(params.ils, neighbours=TIED_ATSP_NEIGHBOURS))
    return params


def island_algorithms() -> dict:
    """The ILS island without crossover, the EAX GA for ``eax``."""
    from metaheur.islands.eax import EAXIsland
    from metaheur.islands.ils import ILSIsland

    return {"none": ILSIsland, "eax": EAXIsland}


def precompile(tsp: TSP, device: Device) -> None:
    """The TSP's searches (the ILS, the construction, EAX, on a GPU the parallel descent), the GA,
    and the candidate lists' k-nearest search for coordinate instances."""
    from metaheur.device_data import tsp_data

    defines = tsp_data(tsp, device).defines
    for source in ("tsp_ils.cu", "tsp_construct.cu", "tsp_eax.cu") + (("tsp_moves.cu",) if device.is_gpu else ()):
        load_module(source, device, defines)
    load_module("tsp_ga.cu", device)
    if tsp.weight_type not in ("EXPLICIT", "GEO", "TWIN"):
        load_module("tsp_knn.cu", device)

