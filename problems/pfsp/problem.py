"""The permutation flow shop with makespan (PFSP): n jobs pass through machines 1..m in one order.

``times[i, j]`` is the processing time of job j on machine i (machine by machine, as Taillard's
files list them). A job order ``pi`` completes job ``pi[t]`` on machine i at
``C[i, t] = max(C[i, t - 1], C[i - 1, t]) + times[i, pi[t]]``; the makespan is ``C[m - 1, n - 1]``,
an exact integer.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.inputs import parse_int
from metaheur.problem.arrays import exact_integers
from metaheur.problem.best_known import BestKnown
from metaheur.problem.interface import LoadedSolution, ProblemFormats
from metaheur.problem.permutation import PermutationProblem
from metaheur.problems.pfsp.best_known import TAILLARD, VRF_SMALL
from metaheur.problems.pfsp.device import DEVICE_CODE, MAX_MACHINES
from metaheur.problems.pfsp.files import is_flow_shop_file, read_flow_shop, read_job_order, write_job_order
from metaheur.problems.pfsp.generator import MODULUS, TAILLARD_SEEDS, taillard_instance_times, taillard_times

if TYPE_CHECKING:
    from metaheur.islands.params import IslandParams

# name -> (n, m, upper bound, lower bound, proven optimal)
BOUNDS = {row[0].lower(): (row[1], row[2], *row[4:]) for row in TAILLARD}
BOUNDS.update({row[0].lower(): row[1:] for row in VRF_SMALL})


def makespans(times: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """Exact makespans (int64) of a k x n batch of job orders. Per position the recurrence over the
    machines is solved at once: ``C_new = S + cummax(C_old - S + p)`` with ``S`` the running sum of
    the job's times over the machines."""
    perms = np.asarray(perms, dtype=np.int64)
    k = perms.shape[0]
    done = np.zeros((k, times.shape[0]), dtype=np.int64)
    for t in range(perms.shape[1]):
        p = times[:, perms[:, t]].T
        s = np.cumsum(p, axis=1)
        done = s + np.maximum.accumulate(done - s + p, axis=1)
    return done[:, -1].copy()


def completion_times(times: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``C[i, t]``: when the job at position t leaves machine i (m x n, int64)."""
    m, n = times.shape
    done = np.zeros((m, n), dtype=np.int64)
    for t, job in enumerate(order):
        finish = 0
        for i in range(m):
            finish = max(finish, int(done[i, t - 1]) if t else 0) + int(times[i, job])
            done[i, t] = finish
    return done


def machine_lower_bound(times: np.ndarray) -> int:
    """Taillard's (1993) lower bound: the largest of every job's total time and, per machine, its total
    load plus the least time any job needs before it and the least any job needs after it."""
    before = np.cumsum(times, axis=0) - times
    after = times.sum(axis=0) - np.cumsum(times, axis=0)
    loads = times.sum(axis=1) + before.min(axis=1) + after.min(axis=1)
    return int(max(loads.max(), times.sum(axis=0).max()))


class PFSP(PermutationProblem):
    """A permutation flow shop instance: ``times`` is m x n (machine i, job j), non-negative integers."""

    kind = "pfsp"
    title = "permutation flow shop (makespan)"
    sense = "min"
    picture = "gantt"
    picture_column = True
    moves = ("insert", "swap")
    device_code = DEVICE_CODE

    def __init__(self, times, name: str = "pfsp", source: str | None = None):
        t = exact_integers(times, f"{name}: processing times")
        if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] < 2:
            raise MetaheurError(f"{name}: processing times must be an m x n array with m >= 1 machines and "
                                "n >= 2 jobs")
        if t.min() < 0:
            raise MetaheurError(f"{name}: processing times must be non-negative")
        if t.max() > MODULUS:
            raise MetaheurError(f"{name}: processing times must fit 32 bits (at most {MODULUS})")
        t.setflags(write=False)
        self.times = t
        super().__init__(name=name, n=t.shape[1], source=source)

    @property
    def m(self) -> int:
        return int(self.times.shape[0])

    def __repr__(self) -> str:
        return f"PFSP({self.name!r}, n={self.n}, m={self.m})"

    def data(self) -> dict:
        """The device data: ``m`` and the job-major times ``p[j * m + h]``."""
        if self.m > MAX_MACHINES:
            raise MetaheurError(f"{self.name}: the flow shop's device code takes at most {MAX_MACHINES} machines, "
                                f"the instance has {self.m}")
        return {"m": self.m, "p": np.ascontiguousarray(self.times.T, dtype=np.int32)}

    def work_size(self) -> int:
        """Heads and tails of Taillard's acceleration: 2 n m int64 per search."""
        return 2 * self.n * self.m

    def value_bound(self) -> int:
        """No makespan exceeds the total work."""
        return int(self.times.sum())

    def temperature_scale(self) -> float:
        """Ruiz and Stuetzle (2007): the temperature is T times the mean processing time over 10."""
        return float(self.times.sum()) / (10.0 * self.n * self.m)

    def construction_key(self) -> np.ndarray:
        """NEH (Nawaz, Enscore and Ham 1983): jobs inserted by decreasing total processing time."""
        return self.times.sum(axis=0)

    def default_params(self):
        """Iterated-greedy chains: every island's chain goes on by the iterated greedy for 50 n
        iterations a generation from where it stood, the islands exchanging their bests (no
        crossover; docs/decisions/pfsp-method.md)."""
        return self.local_search_island(super().default_params())

    def local_search_island(self, params: IslandParams) -> IslandParams:
        """An iterated-greedy chain (:meth:`default_params`) beside GA islands of ``params``,
        whatever local search their children get: their ``PermSearchParams`` with the iterated
        greedy."""
        from metaheur.islands.params import ls_island
        from metaheur.search.perm_search import PermSearchParams

        return replace(params, ga=replace(ls_island(params.ga, self), ls_budget=50 * self.n)).with_search(
            replace(params.search(PermSearchParams), method="ig"))

    def insertion_tie(self, seq, elem: int, pos: int) -> int:
        """The device code's tie key between insertion positions of equal makespan (Fernandez-Viagas
        and Framinan 2014), from whole schedules: on machines 2..m, the idle time before ``elem`` at
        ``pos`` plus the change of the idle time before the job it puts back (none at the last
        position)."""
        seq = [int(j) for j in seq]
        after = completion_times(self.times, [*seq[:pos], elem, *seq[pos:]])
        p = self.times[1:, elem]
        if pos == len(seq):
            left = after[1:, pos - 1] if pos else 0
            return int((after[1:, pos] - left - p).sum())
        before = completion_times(self.times, seq)
        return int((after[1:, pos + 1] - before[1:, pos] - p).sum())

    def evaluate(self, perms) -> np.ndarray:
        """Exact makespans of a k x n batch of job orders (or one order, as a batch of one)."""
        p = np.asarray(perms, dtype=np.int64)
        return makespans(self.times, p.reshape(-1, self.n) if p.ndim == 1 else p)

    def makespan(self, perm) -> int:
        """The makespan of one job order (:meth:`value`)."""
        return self.value(perm)

    def completion_times(self, perm) -> np.ndarray:
        """When each position's job leaves each machine (m x n)."""
        return completion_times(self.times, self.check_solution(perm))

    def bounds(self) -> tuple[int, int, bool] | None:
        """(upper bound, lower bound, proven optimal) of the published table for this name and size."""
        row = BOUNDS.get(self.name.lower())
        if row is None or (row[0], row[1]) != (self.n, self.m):
            return None
        return row[2], row[3], row[4]

    def best_known(self) -> BestKnown | None:
        """The published upper bound of this Taillard or VRF instance (by name and size), if any."""
        bounds = self.bounds()
        if bounds is None:
            return None
        library = "Taillard" if self.name.lower() in TAILLARD_SEEDS else "VRF"
        return BestKnown(self.name, library, self.n, bounds[0], bounds[2])

    def properties(self) -> dict:
        """What ``metaheur info`` shows: the size, the times, and the bounds."""
        props = {"jobs": self.n, "machines": self.m, "time_min": int(self.times.min()),
                 "time_max": int(self.times.max()), "total_work": int(self.times.sum()),
                 "lower_bound_taillard": machine_lower_bound(self.times)}
        bounds = self.bounds()
        if bounds is not None:
            props.update(upper_bound=bounds[0], lower_bound=bounds[1], optimal=bounds[2])
        return props

    @classmethod
    def describe_lines(cls, props: dict) -> list[str]:
        """``metaheur info`` lines for :meth:`properties`."""
        lines = [f"{props['jobs']} jobs x {props['machines']} machines, times {props['time_min']}..{props['time_max']}"
                 f", total work {props['total_work']}",
                 f"machine lower bound (Taillard 1993): {props['lower_bound_taillard']}"]
        if "upper_bound" in props:
            state = "optimal" if props["optimal"] else f"lower bound {props['lower_bound']}"
            lines.append(f"published bounds: upper {props['upper_bound']} ({state})")
        return lines

    def draw(self, ax, perm) -> None:
        """A Gantt chart of the schedule: one row per machine, one bar per job, coloured by job."""
        import matplotlib

        order = self.check_solution(perm)
        done = completion_times(self.times, order)
        colours = matplotlib.colormaps["tab20"]
        for i in range(self.m):
            starts = done[i] - self.times[i, order]
            bars = list(zip(starts.tolist(), self.times[i, order].tolist(), strict=True))
            ax.broken_barh(bars, (i - 0.4, 0.8), facecolors=[colours(int(j) % 20) for j in order],
                           edgecolor="black", linewidth=0.2 if self.n > 50 else 0.5)
        if self.n <= 30:
            for t, job in enumerate(order.tolist()):
                ax.text(done[0, t] - self.times[0, job] / 2, 0, str(job + 1), ha="center", va="center", fontsize=6)
        ax.set_ylim(self.m - 0.5, -0.5)
        ax.set_yticks(range(self.m), [f"M{i + 1}" for i in range(self.m)] if self.m <= 30 else None)
        if self.m > 30:
            ax.set_yticks([])
        ax.set_xlim(0, int(done[-1, -1]))
        ax.set_xlabel("time")
        ax.set_title(f"{self.name}: makespan {int(done[-1, -1])}", fontsize=9)


def read_pfsp(spec: str | os.PathLike, name: str | None = None) -> PFSP:
    """A flow shop from a file (Taillard's, VRF's or OR-Library's format; ``FILE#NAME`` or ``FILE#K``
    picks one instance of several)."""
    data = read_flow_shop(spec)
    return PFSP(data.times, name or data.name, source=os.fspath(spec))


def taillard(name: str) -> PFSP:
    """Taillard's instance ``name`` (ta001..ta120) regenerated from its time seed."""
    times = taillard_instance_times(name)
    return PFSP(times, name.lower(), source=f"gen:pfsp:{name.lower()}")


def random_pfsp(n: int, m: int, seed: int = 1, name: str | None = None) -> PFSP:
    """``n`` jobs on ``m`` machines, times uniform in [1, 99] from Taillard's generator and ``seed``."""
    return PFSP(taillard_times(n, m, seed), name or f"gen-pfsp-{n}x{m}-s{seed}", source=f"gen:pfsp:{n}:{m}:{seed}")


GENERATOR_USAGE = "gen:pfsp:ta001..gen:pfsp:ta120, or gen:pfsp:N:M[:SEED] (seed 1..2147483646, default 1)"


def generated_pfsp(spec: str) -> PFSP:
    """The instance named ``gen:pfsp:taNNN`` or ``gen:pfsp:N:M[:SEED]``."""
    parts = spec.split(":")
    if len(parts) == 3 and parts[2].lower() in TAILLARD_SEEDS:
        return taillard(parts[2])
    if len(parts) not in (4, 5):
        raise MetaheurError(f"bad built-in instance {spec!r}: {GENERATOR_USAGE}")
    try:
        n, m = parse_int(parts[2]), parse_int(parts[3])
        seed = parse_int(parts[4]) if len(parts) == 5 else 1
    except ValueError:
        raise MetaheurError(f"bad built-in instance {spec!r}: {GENERATOR_USAGE}") from None
    if not (1 <= n <= 100_000 and 1 <= m <= 1000 and n * m <= 1_000_000):
        raise MetaheurError(f"bad built-in instance {spec!r}: n in 1..100000, m in 1..1000, n x m at most 10^6")
    if not 1 <= seed < MODULUS:
        raise MetaheurError(f"bad built-in instance {spec!r}: the seed must be in 1..{MODULUS - 1}")
    return random_pfsp(n, m, seed)


def read_solution(problem: PFSP, path: str | os.PathLike) -> LoadedSolution:
    """A job-order file for ``problem`` (:func:`metaheur.problems.pfsp.files.read_job_order`)."""
    found = read_job_order(path, problem.n)
    return LoadedSolution(found.order, found.stated_makespan, "the file numbers jobs from 0" if found.zero_based
                          else None)


def write_solution(problem: PFSP, path: str | os.PathLike, perm) -> int:
    """Write ``perm`` as a 1-based job order with its makespan; returns the makespan."""
    order = problem.check_solution(perm)
    value = problem.value(order)
    write_job_order(path, problem.name, order, value)
    return value


PFSP.formats = ProblemFormats(
    extensions=(".fsp",), folder="pfsp", read=read_pfsp, sniff=is_flow_shop_file, read_solution=read_solution,
    write_solution=write_solution, solution_suffix=".sol", generators={"pfsp": generated_pfsp}, picks=True)
