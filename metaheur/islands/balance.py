"""Load balancing between GPU islands and CPU islands (Van Luong, Taillard, Melab and Talbi 2012:
the GPU evaluates the neighbourhoods of many searches at once while the remaining CPU cores run
extra searches; the split is chosen so that both finish an epoch together).

In a synchronous epoch every island runs the same number of generations, so its wall time is
proportional to (children per generation) / (children improved per second on its device). The
balancer measures each island's rate from its epochs and sizes the GPU islands' generations
(children, and population with them) so that their time per generation matches the CPU islands'.
It re-sizes when the measured ratio drifts by more than ``tolerance``.

A GPU's time per generation is nearly flat up to one wave of blocks (every multiprocessor busy
once) and grows by steps after it, so a GPU island is sized in whole waves (:func:`gpu_wave`),
never below one: fewer children than a wave save no time and leave multiprocessors idle.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from metaheur.devices import Device, parse_device
from metaheur.islands.island import EpochStats, IslandSpec
from metaheur.problem.interface import Problem


def gpu_wave(problem: Problem, device: str | Device) -> int:
    """Children of one wave of a local search of ``problem`` on ``device`` (1 on the CPU): its
    multiprocessors times the blocks of the kernel that sizes the wave that one of them runs at
    once, as the device's driver reports them (the QAP tabu search, the TSP descent)."""
    device = parse_device(device)
    if not device.is_gpu:
        return 1
    return device.cores * max(1, problem.wave_blocks_per_sm(device))


@dataclass
class DeviceLoad:
    """Busy and idle time of the islands of one device over the run."""

    device: str
    islands: int
    busy_seconds: float = 0.0
    idle_seconds: float = 0.0
    ls_iterations: int = 0

    @property
    def utilisation(self) -> float:
        total = self.busy_seconds + self.idle_seconds
        return self.busy_seconds / total if total > 0 else 0.0

    def as_dict(self) -> dict:
        return {"device": self.device, "islands": self.islands, "busy_s": round(self.busy_seconds, 3),
                "idle_s": round(self.idle_seconds, 3), "utilisation": round(self.utilisation, 3),
                "ls_iterations": self.ls_iterations,
                "ls_iterations_per_s": round(self.ls_iterations / self.busy_seconds, 1) if self.busy_seconds else 0.0}


class LoadBalancer:
    """Sizes main-process (GPU) islands against worker (CPU) islands; records device loads."""

    def __init__(self, specs: list[IslandSpec], main_islands: set[int], tolerance: float = 0.2,
                 max_offspring: int = 4096):
        self.main = main_islands
        self.tolerance = tolerance
        self.max_offspring = max_offspring
        self.loads: dict[str, DeviceLoad] = {}
        for spec in specs:
            self.loads.setdefault(spec.device, DeviceLoad(spec.device, 0)).islands += 1
        self.resized = 0
        self.waves: dict[tuple[int, str], int] = {}  # (island, device) -> its wave, asked once

    def wave(self, spec: IslandSpec) -> int:
        """:func:`gpu_wave` of island ``spec`` (asked of its device once)."""
        key = (spec.index, spec.device)
        if key not in self.waves:
            self.waves[key] = gpu_wave(spec.problem, spec.device)
        return self.waves[key]

    def record(self, stats: list[EpochStats], wall: float) -> None:
        for s in stats:
            load = self.loads.setdefault(s.device, DeviceLoad(s.device, 0))
            load.busy_seconds += min(s.seconds, wall)
            load.idle_seconds += max(0.0, wall - s.seconds)
            load.ls_iterations += s.ls_iterations

    def rebalance(self, specs: list[IslandSpec], stats: list[EpochStats]) -> list[IslandSpec]:
        """New specs with the main islands' generation size scaled so that their seconds per
        generation (building members not counted) match the worker islands' mean (unchanged when
        within tolerance); a GPU island's in whole waves of its device, at least one. Only islands
        whose generation is sized by the GPU wave (:attr:`Island.sized_by_gpu_wave`) are resized:
        an EAX island makes one child per member, so its generation is its population, which
        keeps its own limits."""
        if not self.main or len(self.main) == len(specs):
            return specs
        per_gen = {s.index: (s.seconds - s.build_seconds) / s.generations for s in stats if s.generations > 0}
        workers = [per_gen[i] for i in per_gen if i not in self.main]
        if not workers:
            return specs
        goal = sum(workers) / len(workers)
        out = []
        for spec in specs:
            t = per_gen.get(spec.index)
            if (spec.index in self.main and t and abs(t / goal - 1.0) > self.tolerance
                    and spec.algorithm.sized_by_gpu_wave):
                ga = spec.params.ga
                wave = self.wave(spec)
                waves = round(-(-ga.offspring // wave) * goal / t)
                offspring = int(max(1, min(waves, self.max_offspring // wave)) * wave)
                if offspring != ga.offspring:
                    population = max(ga.population, offspring)
                    ga = replace(ga, offspring=offspring, population=population)
                    spec = replace(spec, params=replace(spec.params, ga=ga))
                    self.resized += 1
            out.append(spec)
        return out
