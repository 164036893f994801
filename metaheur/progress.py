"""Progress of a solve on the terminal: a live status line (elapsed/limit, best, gap, throughput,
islands per device) refreshed at a fixed interval and marking new bests; plain periodic lines when
the output is not a terminal; nothing when quiet."""

from __future__ import annotations

import sys
import time

from metaheur.callbacks import Callbacks
from metaheur.problems.best_known import gap_percent


class ProgressReporter(Callbacks):
    """Reports to ``stream`` (default stderr) every ``interval`` seconds and at every new best."""

    def __init__(self, *, best_known: int | None, time_limit: float | None, interval: float = 1.0,
                 stream=None, live: bool | None = None):
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.best_known = best_known
        self.time_limit = time_limit
        self.interval = interval
        self.best = None
        self.new_best = False
        self.iterations = 0
        self.last = 0.0
        self.started = 0.0
        self.devices = ""

    def on_start(self, model) -> None:
        self.started = time.perf_counter()
        counts: dict[str, int] = {}
        for spec in model.specs:
            counts[spec.device] = counts.get(spec.device, 0) + 1
        self.devices = ", ".join(f"{k} x{v}" for k, v in counts.items())

    def on_best(self, model, cost: int, island: int) -> None:
        self.best = cost
        self.new_best = True

    def on_epoch(self, model, epoch: int, stats) -> None:
        self.iterations += sum(s.ls_iterations for s in stats)
        now = time.perf_counter()
        if self.new_best or now - self.last >= self.interval:
            self._emit(now)

    def on_end(self, model, reason: str) -> None:
        self._emit(time.perf_counter(), final=reason)

    def _emit(self, now: float, final: str | None = None) -> None:
        elapsed = now - self.started
        limit = f"/{self.time_limit:.0f}s" if self.time_limit else "s"
        gap = gap_percent(self.best, self.best_known) if self.best is not None else None
        parts = [f"{elapsed:7.1f}{limit}", f"best {self.best if self.best is not None else '-'}"]
        if gap is not None:
            parts.append(f"gap {gap:.3f}%")
        rate = self.iterations / elapsed if elapsed > 0 else 0.0
        parts.append(f"{rate:,.0f} ls-it/s")
        parts.append(self.devices)
        line = "  ".join(parts) + ("  *" if self.new_best else "")
        if final:
            line += f"  [{final}]"
        if self.live:
            end = "\n" if final else ""
            self.stream.write("\r\033[K" + line + end)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.last, self.new_best = now, False
