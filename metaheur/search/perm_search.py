"""The generic engine's batched local searches over a user problem's moves (kernels/engine/perm_search.cu):
tabu search, descent plus kicks (ILS) and iterated greedy, one kernel block per search.

Costs here are in the engine's sense (``problem.engine_sign * value``, minimised); the best
values are recomputed from scratch by the problem's ``cost`` at the end of a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from metaheur.devices import Device, parse_device, to_host
from metaheur.engine.catalogue import PERM_ROWS, PERM_WARP
from metaheur.engine.shapes import PERM, WARP, threads
from metaheur.engine.source import kernel_constants
from metaheur.engine.user_source import CANDIDATE_COUNT, MOVES, upload
from metaheur.engine.variants import check_variant, register_variants
from metaheur.errors import MetaheurError
from metaheur.problem.arrays import INT32_MAX
from metaheur.search.batch import BatchResult, LaunchPacer

METHODS = ("auto", "tabu", "ils", "ig")
METHOD_NAMES = {"tabu": "tabu search", "ils": "ILS", "ig": "iterated greedy"}  # in results and reports
_KERNEL = kernel_constants("engine/perm_search.cu")
_NSTATS, _ITER, _MOVES, _BEST = (_KERNEL[f"MH_PS_{c}"] for c in ("NSTATS", "ITER", "MOVES", "BEST"))
GPU_BLOCK = threads(PERM)  # threads per search on a GPU (block-stride rows)
#: The generic kernels' layouts, the same searches move for move, side by side until a GPU measures
#: both: ``classic`` (a block of GPU_BLOCK threads a search; a chain island one chain a
#: multiprocessor) and ``warp`` (one warp a search, compiled with MH_PS_WARP so that a problem's
#: snippet may use warp shuffles, the flow shop's heads and tails; NEH in one launch; a chain
#: island as many chains a multiprocessor as fit): kernel -> (defines, threads a search on a GPU).
KERNELS = {"classic": (None, GPU_BLOCK), "warp": (PERM_WARP, threads(WARP))}
register_variants("perm kernel", KERNELS, "the generic engine's kernel layout ([perm] kernel): classic (a block a "
                  "search) or warp (a warp a search, MH_PS_WARP)")
#: How the classic layout's scans split a search's rows, the same moves either way, side by side
#: until a GPU measures both: ``row`` (one row at a time, the block's threads over its moves) and
#: ``warps`` (MH_PS_ROWS: the scans by pair deltas or cost give each warp rows of its own, a
#: first-improvement descent W rows a step; the problem's row functions keep one row at a time):
#: scan -> defines.
SCANS = {"row": None, "warps": PERM_ROWS}
register_variants("perm scan", SCANS, "how the classic layout's scans split a search's rows ([perm] scan): row "
                  "(one row at a time) or warps (rows a warp, MH_PS_ROWS)")


@dataclass(frozen=True)
class PermSearchParams:
    """The generic local search of a user problem.

    ``method``: ``tabu`` (Taillard 1991 memory by element and position), ``ils`` (descent and
    kicks), ``ig`` (iterated greedy, Ruiz and Stuetzle 2007; needs ``partial_insert_row``) or
    ``auto`` (the first of :func:`method_order`; a run with a time limit chooses among them by
    the problem's timings, :mod:`metaheur.search.perm_defaults`);
    ``move``: the neighbourhood (None: the problem's first); ``first_improvement``: the descents'
    rule (else best-improvement); ``tenure_scale``: tabu tenures floor(u^3 * scale * n);
    ``kick_move``/``kick_moves``: an ILS kick's random moves; ``destruct``: elements an iterated
    greedy removes; ``temperature``: its acceptance temperature, times the problem's
    ``temperature_scale()`` (Ruiz and Stuetzle: 0.4); ``ties``: the greedy insertions (of the
    iterated greedy and of NEH) break ties between positions of equal value by the problem's
    ``partial_insert_tie`` where it has one (else, and by default, they take the first;
    docs/decisions/pfsp-method.md); ``kernel``: the kernels' layout (:data:`KERNELS`; the same moves
    either way); ``scan``: how the classic layout's scans split the rows between its warps
    (:data:`SCANS`; the same moves either way; the warp layout has one warp, so ``row``);
    ``sample``: moves a descent step samples (0: every move; a run may choose it,
    :mod:`metaheur.search.perm_defaults`); ``granular``: scan only the moves of the problem's
    candidate lists where it gives ``candidates()`` (else every move)."""

    section: ClassVar[str] = "perm"  # its name in configuration files, results and checkpoints

    method: str = "auto"
    move: str | None = None
    first_improvement: bool = True
    tenure_scale: float = 8.0
    kick_move: str = "insert"
    kick_moves: int = 3
    destruct: int = 4
    temperature: float = 0.4
    ties: bool = False
    sample: int = 0
    granular: bool = True
    kernel: str = "classic"
    scan: str = "row"

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise MetaheurError(f"local search method must be one of {', '.join(METHODS)}, got {self.method!r}")
        check_variant("perm kernel", self.kernel)
        check_variant("perm scan", self.scan)
        if self.scan != "row" and self.kernel != "classic":
            raise MetaheurError(f"perm scan {self.scan!r} splits the classic layout's block; the {self.kernel} "
                                f"layout's block is one warp")
        for name in ("move", "kick_move"):
            value = getattr(self, name)
            if value is not None and value not in MOVES:
                raise MetaheurError(f"{name} must be one of {', '.join(MOVES)}, got {value!r}")
        if self.tenure_scale < 0 or self.temperature < 0:
            raise MetaheurError("tenure_scale and temperature must be >= 0")
        if self.kick_moves < 1 or self.destruct < 1:
            raise MetaheurError("kick_moves and destruct must be >= 1")
        if self.kick_move == "segment":
            raise MetaheurError("kick_move must be swap, insert or reverse (a kick's random moves), not segment")
        if not 0 <= self.sample <= INT32_MAX // 4:
            raise MetaheurError(f"sample must be 0 (every move) .. {INT32_MAX // 4}, got {self.sample}")

    def resolved(self, problem) -> tuple[str, str]:
        """(method, move) for ``problem``: ``auto`` and a missing move decided, both checked; a
        problem without device code (the numpy-only route's sampled descent, ``ils``) takes no method."""
        code = problem.user_code()
        move = self.move or problem.moves[0]
        if move not in problem.moves:
            raise MetaheurError(f"{problem.kind} problem offers the moves {', '.join(problem.moves)}, not {move!r}")
        if code is None:
            if self.method != "auto":
                raise MetaheurError(f"the {problem.kind} problem has no device_code: its numpy-only route runs a "
                                    f"sampled descent, not the method {self.method!r} (give device_code for it)")
            return "ils", move
        method = method_order(problem, self.method, move)[0]
        if method == "ig" and not code.has("partial_insert_row"):
            raise MetaheurError(f"the iterated greedy needs partial_insert_row, which the {problem.kind} problem's "
                                f"device_code does not define")
        if method == "tabu" and move == "reverse":
            raise MetaheurError("the tabu search runs over swap, insert or segment moves")
        return method, move


def method_order(problem, method: str, move: str) -> tuple[str, ...]:
    """The methods ``method`` stands for on ``problem`` over ``move``, in order of preference:
    a given one alone; for ``auto``, the iterated greedy where the problem defines
    ``partial_insert_row``, the tabu search over a swap, insertion or segment neighbourhood that
    the problem evaluates incrementally (a pair delta or row function: a cost-only neighbourhood
    never gets a full tabu scan an iteration, issue 61), and descent plus kicks (``ils``), which
    runs on any problem."""
    if method != "auto":
        return (method,)
    code = problem.user_code()
    out = ["ig"] if code.has("partial_insert_row") else []
    if move != "reverse" and (code.has(f"{move}_delta") or code.has(f"{move}_row")):
        out.append("tabu")
    return (*out, "ils")


def search_module(problem, params: PermSearchParams, device: Device, sim: bool = False):
    """The generic searches of ``problem`` compiled for ``device`` in the layout ``params.kernel``
    with the scans ``params.scan``."""
    defines = {**(KERNELS[params.kernel][0] or {}), **(SCANS[params.scan] or {})}
    return problem.user_code().module("engine/perm_search.cu", device, defines or None, sim=sim)


def chains_per_sm(problem, params: PermSearchParams, device: str | Device) -> int:
    """Searches of ``params`` that one multiprocessor of ``device`` runs side by side: one with the
    classic kernels (a block a chain, one chain a multiprocessor: docs/decisions/pfsp-method.md,
    "On a GPU"), as many one-warp blocks of the method's kernel as the driver's occupancy query
    allows with the warp kernels; one on the CPU."""
    device = parse_device(device)
    if not device.is_gpu or params.kernel == "classic":
        return 1
    kernel = search_module(problem, params, device).kernel(f"perm_{params.resolved(problem)[0]}")
    return max(1, kernel.resident_blocks(KERNELS[params.kernel][1]))


class PermSearchBatch:
    """Searches of one method over a user problem on one device (buffers for ``capacity``)."""

    def __init__(self, problem, device: str | Device, capacity: int, params: PermSearchParams,
                 block: int | tuple | None = None, sim: bool = False):
        """``block``: threads per search (default: one on the CPU, the kernel's on a GPU:
        :data:`KERNELS`); ``sim``: the CPU build's thread simulation (tests)."""
        self.problem, self.device, self.params = problem, parse_device(device), params
        self.method, self.move = params.resolved(problem)
        gpu_block = KERNELS[params.kernel][1]
        self.module = search_module(problem, params, self.device, sim)
        fields, arrays = problem.kernel_data()
        if not params.granular and CANDIDATE_COUNT in arrays:
            arrays = {**arrays, CANDIDATE_COUNT: 0}  # the kernels scan every move
        self.data = upload(fields, arrays, self.device)
        self.block = block or (gpu_block if self.device.is_gpu else 1)
        self.capacity, n, dev = capacity, problem.n, self.device
        self.cs, self.ws = problem.cache_entries(), problem.work_entries()
        self.perm = dev.zeros((capacity, n), np.int32)
        self.best = dev.zeros((capacity, n), np.int32)
        self.stats = dev.zeros((capacity, _NSTATS), np.int64)
        self.caches = dev.zeros((capacity, max(1, self.cs)), problem.cache_dtype)
        self.work = dev.zeros((capacity, self.ws), np.int64)
        self.rows = dev.zeros((capacity, n + 1), np.int64)
        self.ibuf = dev.zeros((capacity, 4 * n), np.int32)
        self.scratch = dev.zeros((capacity, int(np.prod(self.block)) * n), np.int32)
        self.tabu = dev.zeros((capacity, 2 * n * n) if self.method == "tabu" else 1, np.int32)

    def _launch(self, count: int, keys, iters: int, init: int, target: int) -> None:
        p, n = self.params, self.problem.n
        first = int(p.first_improvement)
        head = (self.perm, self.best, self.stats, keys, count, n)
        tail = (self.caches, self.cs, self.work, self.ws, self.rows, self.ibuf, self.scratch)
        scan = (p.sample, int(p.granular))
        if self.method == "tabu":
            args = (*head, MOVES.index(self.move), *scan, iters, float(p.tenure_scale), init, target, *tail, self.tabu)
        elif self.method == "ils":
            args = (*head, MOVES.index(self.move), *scan, first, MOVES.index(p.kick_move), p.kick_moves, iters,
                    init, target, *tail)
        else:
            temp = float(p.temperature * self.problem.temperature_scale())
            args = (*head, *scan, first, p.destruct, temp, int(p.ties), iters, init, target, *tail)
        self.module.kernel(f"perm_{self.method}")(count, self.block, args + self.data)

    def run(self, starts: np.ndarray, keys: np.ndarray, budget: int, time_limit: float | None = None,
            target: int | None = None) -> BatchResult:
        """Searches from ``starts`` (one random stream key each) for ``budget`` iterations (tabu
        iterations, kicks or greedy iterations; cut short by ``time_limit`` seconds or once a best
        is at or below ``target``, engine sense); returns the best permutations, their values
        (engine sense, recomputed), the iterations (and descent moves) of each search and where
        each search stands at the end (``current``)."""
        count, n, dev = len(starts), self.problem.n, self.device
        if count > self.capacity:
            raise MetaheurError(f"{count} searches do not fit a batch of {self.capacity}")
        self.perm[:count] = dev.asarray(np.asarray(starts, dtype=np.int32).reshape(count, n))
        d_keys = dev.asarray(np.asarray(keys, dtype=np.uint64))
        goal = -(2**62) if target is None else int(target)
        started = [False]

        def launch(step: int) -> None:
            self._launch(count, d_keys, step, 0 if started[0] else 1, goal)
            started[0] = True

        def reached() -> bool:
            return bool((to_host(self.stats[:count, _BEST]) <= goal).all())

        def progress() -> tuple[int, int, np.ndarray]:  # the island's live report while the batch runs
            stats = to_host(self.stats[:count])
            k = int(np.argmin(stats[:, _BEST]))
            return int(stats[k, _BEST]), int((stats[:, _ITER] + stats[:, _MOVES]).sum()), to_host(self.best[k])

        pacer = LaunchPacer(budget, time_limit, max(1, budget if time_limit is None else 1))
        done = pacer.run(launch, dev.synchronize, reached, progress=progress)
        if not started[0]:
            launch(0)
        values = dev.zeros(count, np.int64)
        self.module.kernel("perm_best_values")(count, 1, (self.best, count, n, values, *self.data))
        stats = to_host(self.stats[:count])
        return BatchResult(best=to_host(self.best[:count]).astype(np.int64), best_costs=to_host(values),
                           iterations=stats[:, _ITER] + stats[:, _MOVES], seconds=pacer.elapsed(),
                           launches=pacer.launches, stop_reason=pacer.reason(done),
                           current=to_host(self.perm[:count]).astype(np.int64))
