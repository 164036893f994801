"""Progress of a solve on the terminal: a live status line (elapsed/limit, best, gap, GA
generations and local-search steps per island, throughput, islands per device) refreshed at a
fixed interval, also while an epoch runs (populations being built: the islands' own reports,
:attr:`IslandModel.live <metaheur.islands.model.IslandModel.live>`), and marking new bests; plain
periodic lines when the output is not a terminal; nothing when quiet."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator

from metaheur.callbacks import Callbacks
from metaheur.islands import model as model_module
from metaheur.islands.island import ls_only, run_counters
from metaheur.problem.best_known import gap_percent

SLOW_SECONDS = 1.0  # a step before the run's clock that takes longer is told (when_slow)


@contextlib.contextmanager
def when_slow(line: str, stream=None, after: float = SLOW_SECONDS) -> Iterator[None]:
    """Write ``line`` once (to ``stream``, default stderr) should the block take longer than
    ``after`` seconds: a step before the run's clock (reading or generating a large instance)
    is not a silent wait."""
    def say() -> None:
        out = stream or sys.stderr
        out.write(line + "\n")
        out.flush()

    timer = threading.Timer(after, say)
    timer.daemon = True
    with contextlib.suppress(RuntimeError):  # no thread to spare (a memory limit): no notice
        timer.start()
    try:
        yield
    finally:
        timer.cancel()


class ProgressReporter(Callbacks):
    """Reports to ``stream`` (default stderr) every ``interval`` seconds (default: as often as the
    model calls ``on_progress``) and at every new best;
    ``label`` (the instance, in a batch) starts every line. A resumed run starts from its saved
    best, counters and elapsed time. The best is shown in the problem's sense (the model's
    engine costs turned by its problem's ``engine_sign``). The gap to ``best_known`` is left out
    where ``optimal`` (a proven optimum) and the best is beyond it: the table's entry is then of
    another instance of that name."""

    def __init__(self, *, best_known: int | None, time_limit: float | None, interval: float | None = None,
                 stream=None, live: bool | None = None, label: str | None = None, optimal: bool = False):
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.best_known, self.optimal = best_known, optimal
        self.time_limit = time_limit
        self.interval = model_module.PROGRESS_SECONDS if interval is None else interval
        self.label = label
        self.best = None
        self.sign = 1
        self.new_best = False
        self.counters = {"generations": 0, "search_steps": 0, "search_iterations": 0}
        self.kinds: set[str] = set()  # "ga" and/or "search": which counters the run has
        self.last = 0.0
        self.said_starting = False
        self.started = 0.0
        self.devices = ""

    def on_start(self, model) -> None:
        self.started = model.start_time
        counts: dict[str, int] = {}
        for spec in model.specs:
            counts[spec.device] = counts.get(spec.device, 0) + 1
        self.devices = ", ".join(f"{k} x{v}" for k, v in counts.items())
        self.kinds = {"search" if ls_only(spec) else "ga" for spec in model.specs}
        self.counters = run_counters(model.specs, model.record.states)
        self.sign = model.problem.engine_sign
        self.best = None if model.record.best is None else self.sign * model.record.best
        if self.best is not None:  # a resumed run: say where it stands
            self._emit(time.perf_counter())

    def on_best(self, model, cost: int, island: int) -> None:
        self.best = self.sign * cost
        self.new_best = True

    def on_epoch(self, model, epoch: int, stats) -> None:
        self.counters = run_counters(model.specs, model.record.states)
        now = time.perf_counter()
        if self.new_best or now - self.last >= self.interval:
            self._emit(now)

    def on_progress(self, model, elapsed: float) -> None:
        live = getattr(model, "live", None)
        if live is not None:  # the islands' reports from the middle of the epoch, in engine costs
            if live.best is not None and (self.best is None or live.best < self.sign * self.best):
                self.best, self.new_best = self.sign * live.best, True
            self.counters = {k: max(v, self.counters.get(k, 0)) for k, v in live.counters.items()}
        now = time.perf_counter()
        if now - self.last < self.interval:
            return
        if not self.devices:  # before on_start: the worker processes are starting
            self._write(self.starting(elapsed), None)
            self.last = now
            return
        self._emit(now)

    def starting(self, elapsed: float) -> str:
        """The line while the worker processes start: said once, then, at each interval, with the
        seconds it has taken (no line twice)."""
        again = f" ({elapsed:.1f} s)" if self.said_starting else ""
        self.said_starting = True
        return "  ".join([*([self.label] if self.label else []), f"starting the islands{again}"])

    def on_end(self, model, reason: str) -> None:
        self._emit(time.perf_counter(), final=reason)

    def status(self, now: float) -> str:
        """The status line at ``now`` (without the new-best mark and the stop reason)."""
        elapsed = now - self.started
        limit = f"/{self.time_limit:.0f}s" if self.time_limit else "s"
        parts = [self.label] if self.label else []
        parts += [f"{elapsed:7.1f}{limit}", f"best {self.best if self.best is not None else '-'}"]
        sense = "min" if self.sign > 0 else "max"
        gap = gap_percent(self.best, self.best_known, sense) if self.best is not None else None
        if gap is not None and not (self.optimal and gap < 0):  # beyond a proven optimum: another instance's
            parts.append(f"gap {gap:.3f}%")
        if self.best is None:
            parts.append("building populations")
        if "ga" in self.kinds:
            parts.append(f"gen {self.counters['generations']}")
        if "search" in self.kinds:
            parts.append(f"search steps {self.counters['search_steps']}")
        rate = self.counters["search_iterations"] / elapsed if elapsed > 0 else 0.0
        parts.append(f"{rate:,.0f} ls-it/s")
        parts.append(self.devices)
        return "  ".join(parts)

    def _emit(self, now: float, final: str | None = None) -> None:
        self._write(self.status(now) + ("  *" if self.new_best else ""), final)
        self.last, self.new_best = now, False

    def _write(self, line: str, final: str | None) -> None:
        if final:
            line += f"  [{final}]"
        if self.live:
            end = "\n" if final else ""
            self.stream.write("\r\033[K" + line + end)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
