"""How the islands solve a TSP (and an ATSP through its symmetric transformation): the default
parameters, the kernels to build and the island algorithms (the decisions of
:class:`~metaheur.problems.tsp.TSP`'s solving methods)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from metaheur.devices import Device
from metaheur.engine import load_module
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems.tsp.problem import TSP

if TYPE_CHECKING:
    from metaheur.islands.base import Island

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


def island_algorithms() -> dict[str, type[Island]]:
    """The ILS island without crossover, the EAX GA for ``eax``."""
    from metaheur.islands.ils import ILSIsland
    from metaheur.problems.tsp.eax_island import EAXIsland

    return {"none": ILSIsland, "eax": EAXIsland}


def precompile(tsp: TSP, device: Device) -> None:
    """The TSP's searches (the ILS, the construction, EAX, on a GPU the parallel descent), the GA,
    and the candidate lists' k-nearest search for coordinate instances."""
    from metaheur.problems.tsp.device_data import tsp_data

    defines = tsp_data(tsp, device).defines
    searches = ("tsp/tsp_ils.cu", "tsp/tsp_construct.cu", "tsp/tsp_eax.cu")
    for source in searches + (("tsp/tsp_moves.cu",) if device.is_gpu else ()):
        load_module(source, device, defines)
    load_module("engine/order_ga.cu", device)
    if tsp.weight_type not in ("EXPLICIT", "GEO", "TWIN"):
        load_module("tsp/tsp_knn.cu", device)
