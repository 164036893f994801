"""The parameters of the QAP's robust tabu search (:class:`TabuParams`, section ``tabu``), apart
from the search so that the problem declares them without loading its kernels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from metaheur.errors import MetaheurError

TENURE_RULES = {"cubic": 0, "uniform": 1}


@dataclass(frozen=True)
class TabuParams:
    """Parameters of robust tabu search.

    ``tenure``: ``"cubic"`` (Taillard 2006: floor(u^3 * scale * n) per entry, ``scale`` 8 in
    Taillard's code) or ``"uniform"`` (Taillard 1991: one tenure in [0.9n, 1.1n], redrawn every
    2.2n iterations). ``aspiration``: iterations after which a swap that brings both units back
    to long-unvisited locations is forced (default 5 n^2; 0 turns it off... in effect it then
    applies at once, so use a large value instead).
    """

    section: ClassVar[str] = "tabu"  # its name in configuration files, results and checkpoints

    tenure: str = "cubic"
    aspiration: int | None = None
    scale: int = 8

    def __post_init__(self) -> None:
        if self.tenure not in TENURE_RULES:
            raise MetaheurError(f"tenure rule must be one of {', '.join(TENURE_RULES)}, got {self.tenure!r}")
        if self.aspiration is not None and self.aspiration < 1:
            raise MetaheurError(f"aspiration horizon must be at least 1 iteration, got {self.aspiration}")
        if self.scale < 1:
            raise MetaheurError(f"cubic tenure scale must be at least 1, got {self.scale}")
