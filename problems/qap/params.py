"""The parameters of the QAP's robust tabu search (:class:`TabuParams`, section ``tabu``), apart
from the search so that the problem declares them without loading its kernels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from metaheur.engine.variants import check_variant, register_variants
from metaheur.errors import MetaheurError

TENURE_RULES = {"cubic": 0, "uniform": 1}
#: The tabu search's kernels (kernels/qap/qap_tabu.cu), the same search move for move: ``classic``
#: (rows scanned then updated, the CPU's layout) and ``stream`` (pairs owned by threads, the
#: update fused with the next scan: a GPU's layout), side by side until a GPU measures both.
KERNELS = {"classic": "qap_tabu_run", "stream": "qap_tabu_stream"}
register_variants("tabu kernel", KERNELS, "the QAP tabu search's kernel ([tabu] kernel): classic (rows scanned then "
                  "updated) or stream (pairs owned by threads, the update fused with the next scan)")
SCALE_LIMIT = 1 << 20  # tenures floor(u^3 scale n) stay int32 (the batch checks scale x n < 2^30 for its n)


@dataclass(frozen=True)
class TabuParams:
    """Parameters of robust tabu search.

    ``tenure``: ``"cubic"`` (Taillard 2006: floor(u^3 * scale * n) per entry) or ``"uniform"``
    (Taillard 1991: one tenure in [0.9n, 1.1n], redrawn every 2.2n iterations). ``scale``: the
    cubic tenures' scale (8 in Taillard's code). ``aspiration``: iterations after which a swap
    that brings both units back to long-unvisited locations is forced (default 5 n^2; 0 turns it
    off... in effect it then applies at once, so use a large value instead). ``kernel``: which
    kernel runs it (:data:`KERNELS`; the same moves either way; ``stream`` is laid out for a GPU).
    """

    section: ClassVar[str] = "tabu"  # its name in configuration files, results and checkpoints

    tenure: str = "cubic"
    aspiration: int | None = None
    scale: int = 8
    kernel: str = "classic"

    def __post_init__(self) -> None:
        if self.tenure not in TENURE_RULES:
            raise MetaheurError(f"tenure rule must be one of {', '.join(TENURE_RULES)}, got {self.tenure!r}")
        if self.aspiration is not None and self.aspiration < 1:
            raise MetaheurError(f"aspiration horizon must be at least 1 iteration, got {self.aspiration}")
        if not 1 <= self.scale < SCALE_LIMIT:
            raise MetaheurError(f"cubic tenure scale must be from 1 to {SCALE_LIMIT - 1}, got {self.scale}")
        check_variant("tabu kernel", self.kernel)
