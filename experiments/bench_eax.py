"""GA-EAX for the TSP: what `metaheur solve` runs (method ``metaheur``: the EAX islands of
problems/tsp/eax_island.py, default settings) and the research driver that found those settings
(method ``ga``, with knobs the islands do not expose: --strategy rand, --stall, --init greedy,
--polish, a fixed --select), benchmarked against the iterated local search alone and against
LKH-3 (elkai) at equal wall time.

GA-EAX (after Nagata and Kobayashi, INFORMS J. Computing 25(2), 2013):

1. population: P tours (``--pop``; 0, the default: as many as ``--init-share`` of the budget
   builds, timed on a first batch of 2 x threads, at most ``--max-pop`` = 300), each a random
   permutation (``--init random``) or the greedy-edge tour with n/20 random local double bridges
   (``--init greedy``), brought to a local optimum by
   metaheur.problems.tsp.ils.TSPILSBatch (2-opt, Or-opt, 3-opt, Lin-Kernighan; ``--init-kicks``
   ILS kicks each, default 0: descent only);
2. every generation, a random cyclic order r of the population; individual r[i] (A) is crossed
   with r[i+1] (B) by kernels/tsp/tsp_eax.cu (metaheur.problems.tsp.eax.EAXBatch: one block per pair, all
   pairs in one launch, spread over the OpenMP threads), ``--tries`` children per pair
   (``--strategy single``: one AB-cycle each, distinct; ``rand``: random E-sets); the selected
   child replaces A when it is shorter than A (``--polish``: the children are first brought to a
   local optimum by TSPILSBatch with kicks=0);
3. child selection (``--select``): ``greedy`` (the shortest child), ``entropy`` (Nagata's
   entropy-preserving evaluation, which keeps the population diverse longer) or ``auto``
   (entropy, then greedy from ``--greedy-at`` of the budget on, so that the population
   converges before the end of a short budget; the default); the edge frequencies entropy
   selection needs are kept by metaheur.problems.tsp.eax.EdgeFrequency from the changes the kernel
   records;
4. until the time budget (``--stall G``: after G generations without a better best, the strategy
   becomes ``rand``).

Baselines at the same wall time on the same cores:

* ``metaheur``: metaheur.solve(instance, time_limit=budget, seed) with the default strategy
  (cpu-islands: one EAX island per core, migration each epoch); its trace of island bests gives
  the gap against time (setup before the clock starts: worker start, kernel builds);
* ``ils``: TSPILSBatch from the greedy tour, one search per thread (``--threads``), its default
  parameters (LK depth 30, 3-opt, double-bridge kicks), best of the searches;
* ``lkh``: LKH-3 (elkai 2.0.1's LKH-3.0.8) with its default parameters, RUNS = 1, one run per
  thread with seeds 1, 2, ... (LKH is sequential), run with the interpreter given by ``--lkh-python``
  (default /tmp/benchvenv/bin/python) and killed after the budget. Each improvement is timed by
  the wall clock when LKH prints it (trace level 1, stdout line-buffered by stdbuf): LKH's own
  "Time" is CPU time, which on a loaded machine runs slower than the wall clock the other
  methods are measured by. The time includes its preprocessing (subgradient ascent).

Every method's best length is recorded against wall time since its start (population building,
neighbour lists and compilation included; kernel compilation is cached on disk after the first
run). The gap is to the optimum from the instances' bks.csv.

    python experiments/bench_eax.py [--quick] [--instances pr2392 pcb3038 rl5915] [--budget 60]
        [--threads 2] [--methods ga ils lkh] [--pop 0 (auto)] [--tries 30] [--out experiments/results]
        [--eax-kernel classic fused]

``--eax-kernel``: the EAX islands' kernels (``ILSParams.eax_kernel``; the research driver: the
edge-frequency update, EdgeFrequency.replace_children or accept_shorter, and for ``block`` the
crossover kernel tsp_eax_block), each a method run of its
own (``metaheur[fused]``) when more than one is given, the same children either way: side by side,
their generations and the driver's seconds in EAX and in frequency updates (``freq_s``) compare
their speed.

Writes ``bench_eax.csv`` (one row per method, instance and checkpoint) and ``bench_eax.md``
(command, date, machine, tables) under --out. ``--quick``: one small instance (pcb442 from
$METAHEUR_INSTANCES or /work/shared/instances/tsplib, else a generated 400-city one), a 5 s
budget, GA and ILS only.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
from lib.report import out_folder, run_header, write_csv

from metaheur.devices import cpu_count
from metaheur.engine import set_cpu_threads
from metaheur.engine.rng import stream_key
from metaheur.problems import TSP, load_instance, uniform_tsp
from metaheur.problems.tsp.device_data import neighbours, tsp_data
from metaheur.problems.tsp.eax import EAXBatch, EdgeFrequency
from metaheur.problems.tsp.ils import ILSParams, TSPILSBatch, greedy_tour
from metaheur.problems.tsp.params import EAX_KERNELS

_INSTANCES = os.environ.get("METAHEUR_INSTANCES", "")
DEFAULT_DIRS = [os.path.join(_INSTANCES, "tsplib") if _INSTANCES else "", _INSTANCES, "/work/shared/instances/tsplib"]
CHECKPOINTS = (1, 2, 5, 10, 20, 30, 45, 60, 90, 120, 180, 300)


# ------------------------------------------------------------------------------------------ helpers


def instance_dir() -> Path | None:
    """The first folder with a bks.csv: $METAHEUR_INSTANCES/tsplib, $METAHEUR_INSTANCES, then
    /work/shared/instances/tsplib."""
    return next((Path(d) for d in DEFAULT_DIRS if d and (Path(d) / "bks.csv").is_file()), None)


def best_known_table(folder: Path | None) -> dict[str, int]:
    if folder is None:
        return {}
    with open(folder / "bks.csv") as handle:
        return {row["name"]: int(row["best_known"]) for row in csv.DictReader(handle)}


class Trace:
    """Best length found against wall time since ``start``."""

    def __init__(self, start: float | None = None):
        self.start = time.perf_counter() if start is None else start
        self.points: list[tuple[float, int]] = []

    def add(self, length: int, at: float | None = None) -> None:
        t = (time.perf_counter() - self.start) if at is None else at
        if not self.points or length < self.points[-1][1]:
            self.points.append((t, int(length)))

    def best_at(self, t: float) -> int | None:
        best = None
        for when, length in self.points:
            if when <= t:
                best = length
        return best

    @property
    def best(self) -> int | None:
        return self.points[-1][1] if self.points else None


# ------------------------------------------------------------------------------------------- GA-EAX


INIT_LS = {"full": ILSParams(), "fast": ILSParams(neighbours=16, k5=0, lk_depth=0)}


@dataclass(frozen=True)
class GASettings:
    """The knobs of the research driver (method ``ga``), named as their command-line options."""

    pop: int = 0
    tries: int = 30
    strategy: str = "single"
    select: str = "auto"
    greedy_at: float = 0.7
    stall: int = 0
    init: str = "random"
    init_kicks: int = 0
    init_ls: str = "full"
    polish: bool = False
    init_share: float = 0.3
    max_pop: int = 300

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> GASettings:
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})

    def describe(self) -> str:
        """One line for the report's header."""
        population = self.pop or f"auto (init share {self.init_share:g}, max {self.max_pop})"
        return (f"GA: tries {self.tries}, strategy {self.strategy} (then rand after {self.stall or 'no'} stalled "
                f"generations), selection {self.select} (greedy from {self.greedy_at:g} of the budget if auto), "
                f"population {population}, init {self.init} ({self.init_ls} local search), init kicks "
                f"{self.init_kicks}, polish {self.polish}")


def initial_population(tsp: TSP, neigh: np.ndarray, size: int, method: str, kicks: int, seed: int,
                       rng: np.random.Generator, ls: str = "full"):
    """``size`` local optima (tours int32, lengths int64) from random or perturbed greedy starts."""
    n = tsp.n
    if method == "random":
        starts = np.array([rng.permutation(n) for _ in range(size)])
    elif method == "greedy":
        g = greedy_tour(tsp, neigh)
        starts = np.empty((size, n), dtype=np.int64)
        for p in range(size):
            t = g.copy()
            if n >= 16:
                top = max(1, min(50, n // 8))
                for _ in range(max(1, n // 20)):  # local double bridges: adjacent segments swap places
                    l1, l2 = int(rng.integers(1, top + 1)), int(rng.integers(1, top + 1))
                    i = int(rng.integers(0, n - l1 - l2 + 1))
                    t[i:i + l1 + l2] = np.concatenate([t[i + l1:i + l1 + l2], t[i:i + l1]])
            starts[p] = t
    else:
        raise ValueError(f"unknown init method {method!r}")
    ils = TSPILSBatch(tsp, starts=starts, seed=seed, params=INIT_LS[ls])
    res = ils.run(kicks=kicks)
    return res.best.astype(np.int32), res.best_costs.astype(np.int64)


def build_population(tsp: TSP, neigh: np.ndarray, ga: GASettings, budget: float, trace: Trace, *, seed: int,
                     threads: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Step 1 of the module docstring: ``ga.pop`` local optima, or (``pop=0``) a first batch of
    ``max(4, 2 * threads)`` that times one tour, then at once as many more as ``ga.init_share``
    of the budget builds at that rate, at most ``ga.max_pop`` in all."""
    first = ga.pop or max(4, 2 * threads)
    population, lengths = initial_population(tsp, neigh, first, ga.init, ga.init_kicks, seed, rng, ga.init_ls)
    trace.add(int(lengths.min()))
    if not ga.pop:
        per = (time.perf_counter() - trace.start) / first
        size = int(min(ga.max_pop, max(first, (ga.init_share * budget) / max(per, 1e-6))))
        if size > first:
            more, more_len = initial_population(tsp, neigh, size - first, ga.init, ga.init_kicks, seed + 1, rng,
                                                ga.init_ls)
            population, lengths = np.concatenate([population, more]), np.concatenate([lengths, more_len])
            trace.add(int(lengths.min()))
    return population, lengths


class EAXGenerations:
    """A GA-EAX population and its generations (steps 2-4 of the module docstring)."""

    def __init__(self, tsp: TSP, neigh: np.ndarray, population: np.ndarray, lengths: np.ndarray, ga: GASettings,
                 *, seed: int, threads: int, kernel: str = "classic"):
        self.tsp, self.ga, self.seed, self.threads, self.fused = tsp, ga, seed, threads, kernel != "classic"
        self.population, self.lengths = population, lengths
        size = len(population)
        data = tsp_data(tsp)
        self.eax = EAXBatch(tsp, data, neigh, size, block=kernel == "block")
        self.keys = stream_key(np.uint64(seed), np.arange(size, dtype=np.uint64))
        self.counters = np.zeros(size, dtype=np.int64)
        self.use_entropy = ga.select in ("entropy", "auto")
        self.freq = EdgeFrequency(population, data.device, data.defines) if self.use_entropy else None
        self.strategy = ga.strategy
        self.gen = self.since = 0
        self.rand_from = self.greedy_from = None
        self.t_eax = self.t_freq = 0.0

    @property
    def selection(self) -> str:
        return "entropy" if self.use_entropy else "greedy"

    def to_greedy(self) -> None:
        """Greedy child selection from this generation on (``--select auto`` at ``--greedy-at``)."""
        self.use_entropy, self.freq, self.greedy_from = False, None, self.gen

    def crossover(self, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The selected child of each pair (A = ``order[i]``, B = ``order[i + 1]``), brought to a
        local optimum with ``--polish``."""
        a, b = self.population[order], self.population[np.roll(order, -1)]
        t_gen = time.perf_counter()
        children, child_len = self.eax(a, b, self.lengths[order], self.keys, self.counters, self.strategy,
                                       self.ga.tries, select=self.selection, freq=self.freq, check=False,
                                       threads=self.threads)
        children, child_len = np.array(children), np.array(child_len)
        self.t_eax += time.perf_counter() - t_gen
        if self.ga.polish:
            ils = TSPILSBatch(self.tsp, starts=children, seed=self.seed + self.gen + 1)
            res = ils.run(kicks=0)
            children, child_len = res.best.astype(np.int32), res.best_costs.astype(np.int64)
        return children, child_len

    def replace(self, order: np.ndarray, children: np.ndarray, child_len: np.ndarray) -> None:
        """Each child replaces its parent A when shorter (the edge frequencies follow)."""
        better = child_len < self.lengths[order]
        idx = order[better]
        if self.freq is not None:
            t_freq = time.perf_counter()
            if self.fused:  # every child shorter than A, in one launch from the EAX launch's buffers
                self.freq.accept_shorter(self.eax)
            else:
                self.freq.replace_children(self.eax, np.flatnonzero(better), threads=self.threads)
            self.t_freq += time.perf_counter() - t_freq
        self.population[idx] = children[better]
        self.lengths[idx] = child_len[better]

    def generation(self, order: np.ndarray, trace: Trace) -> int:
        """One generation over the cyclic ``order``; a better best goes into ``trace``, and after
        ``--stall`` generations without one the strategy becomes ``rand``. Returns the best length."""
        self.replace(order, *self.crossover(order))
        self.gen += 1
        best = int(self.lengths.min())
        if trace.best is None or best < trace.best:
            trace.add(best)
            self.since = 0
        else:
            self.since += 1
        if self.ga.stall and self.since >= self.ga.stall and self.strategy != "rand":
            self.strategy, self.rand_from, self.since = "rand", self.gen, 0
        return best

    def best_tour(self) -> np.ndarray:
        """The shortest tour, its length recomputed exactly."""
        best_i = int(np.argmin(self.lengths))
        exact = self.tsp.tour_length(self.population[best_i])
        assert exact == self.lengths[best_i], (exact, self.lengths[best_i])
        return self.population[best_i].copy()


def run_ga(tsp: TSP, budget: float, ga: GASettings, *, seed: int, threads: int, log=None,
           kernel: str = "classic") -> tuple[Trace, dict]:
    """GA-EAX within ``budget`` wall seconds (see the module docstring): the population, then
    generations until the budget is spent; with ``select="auto"``, greedy selection from
    ``greedy_at`` of the budget on, so that the population converges before the end."""
    start = time.perf_counter()
    trace = Trace(start)
    rng = np.random.default_rng(seed)
    neigh = neighbours(tsp, 10)
    population, lengths = build_population(tsp, neigh, ga, budget, trace, seed=seed, threads=threads, rng=rng)
    t_init = time.perf_counter() - start
    run = EAXGenerations(tsp, neigh, population, lengths, ga, seed=seed, threads=threads, kernel=kernel)
    while time.perf_counter() - start < budget:
        if run.use_entropy and ga.select == "auto" and time.perf_counter() - start >= ga.greedy_at * budget:
            run.to_greedy()
        best = run.generation(rng.permutation(len(population)), trace)
        if log and run.gen % 50 == 0:
            log(f"  gen {run.gen} t {time.perf_counter() - start:.1f}s best {best} mean {run.lengths.mean():.0f} "
                f"strategy {run.strategy} selection {run.selection}")
    best_tour = run.best_tour()
    return trace, {"pop": len(population), "generations": run.gen, "init_s": round(t_init, 2),
                   "eax_s": round(run.t_eax, 1), "freq_s": round(run.t_freq, 1), "greedy_from_gen": run.greedy_from,
                   "rand_from_gen": run.rand_from, "best_tour": best_tour}


# -------------------------------------------------------------------------------------- baselines


def run_metaheur(tsp: TSP, budget: float, *, seed: int, kernel: str = "classic") -> tuple[Trace, dict]:
    """``metaheur.solve`` with its defaults (the EAX islands' ``kernel``); the trace of its island
    bests against search time."""
    from metaheur.solve_params import SolveParams
    from metaheur.solver import solve

    start = time.perf_counter()
    result = solve(tsp, time_limit=budget, seed=seed, params=SolveParams(searches=[ILSParams(eax_kernel=kernel)]))
    trace = Trace(start)
    for point in sorted(result.trace, key=lambda p: p.time_s):
        trace.add(point.cost, at=point.time_s)
    assert tsp.tour_length(result.permutation) == result.cost
    return trace, {"islands": len(result.islands), "population": [i.population for i in result.islands],
                   "generations": result.generations, "setup_s": round(result.setup_s + result.compile_s, 2)}


def run_ils(tsp: TSP, budget: float, *, threads: int, seed: int) -> tuple[Trace, dict]:
    start = time.perf_counter()
    trace = Trace(start)
    ils = TSPILSBatch(tsp, count=threads, seed=seed, params=ILSParams())
    kicks = 0
    while True:
        left = budget - (time.perf_counter() - start)
        if left <= 0:
            break
        res = ils.run(time_limit=min(left, 0.5))
        kicks = int(res.iterations.sum())
        trace.add(int(res.best_costs.min()))
    return trace, {"searches": threads, "kicks": kicks}


_LKH_SCRIPT = r"""
import sys, time
from elkai import _elkai
path, budget, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
params = (f"RUNS = 1\nMAX_TRIALS = 100000000\nTIME_LIMIT = {budget}\nTOTAL_TIME_LIMIT = {budget}\n"
          f"SEED = {seed}\nTRACE_LEVEL = 1\nPROBLEM_FILE = :stdin:\n")
tour = _elkai.solve_problem(params, open(path).read())
print("ELKAI_TOUR", " ".join(str(c - 1) for c in tour), flush=True)
"""
_LKH_LINE = re.compile(r"^\* *\d+: Cost = (\d+), Time = ([0-9.]+) sec")


def run_lkh(tsp: TSP, path: Path, budget: float, *, threads: int, python: str,
            first_seed: int = 1) -> tuple[Trace, dict]:
    """``threads`` independent LKH runs in parallel (seeds first_seed, first_seed + 1, ...), stopped
    after ``budget`` wall seconds. LKH's own times are CPU seconds (getrusage), so each improvement is timed by the
    wall clock when its progress line arrives (LKH's stdout made line-buffered with stdbuf)."""
    import shutil
    import threading

    prefix = ["stdbuf", "-oL"] if shutil.which("stdbuf") else []
    start = time.perf_counter()
    procs = [subprocess.Popen([*prefix, python, "-c", _LKH_SCRIPT, str(path), str(budget), str(first_seed + s)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
             for s in range(threads)]
    events: list[tuple[float, int]] = []
    pre: list[float] = []
    finals: list[np.ndarray] = []
    lock = threading.Lock()

    def reader(proc) -> None:
        for line in proc.stdout:
            now = time.perf_counter() - start
            m = _LKH_LINE.match(line)
            with lock:
                if m:
                    events.append((now, int(m.group(1))))
                elif line.startswith("Preprocessing time"):
                    pre.append(now)
                elif line.startswith("ELKAI_TOUR"):
                    finals.append(np.array([int(x) for x in line.split()[1:]]))

    readers = [threading.Thread(target=reader, args=(p,), daemon=True) for p in procs]
    for r in readers:
        r.start()
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.0, budget - (time.perf_counter() - start)))
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    for r in readers:
        r.join(timeout=5)
    trace = Trace(0.0)
    for t, c in sorted(events):
        if t <= budget:
            trace.add(c, at=t)
    for tour in finals:  # a run that ended within the budget: its tour, recomputed here
        length = tsp.tour_length(tour)
        if trace.best is not None and length > trace.best:
            raise AssertionError(f"LKH reported {trace.best} but its tour is {length} long")
    return trace, {"runs": threads, "preprocessing_done_s": [round(x, 1) for x in sorted(pre)],
                   "finished_runs": len(finals)}


# ------------------------------------------------------------------------------------------- main


COLUMNS = ["instance", "n", "method", "seconds", "best", "gap_percent", "optimum"]
TITLE = "GA-EAX against ILS alone and LKH-3 at equal wall time"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command-line options; ``--quick`` is applied by :func:`apply_quick`."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one small instance, 5 s, GA and ILS only")
    ap.add_argument("--instances", nargs="+", default=["pr2392", "pcb3038", "rl5915"])
    ap.add_argument("--budget", type=float, default=60.0, help="wall seconds per method and instance")
    ap.add_argument("--threads", type=int, default=0, help="cores (default: all)")
    ap.add_argument("--methods", nargs="+", default=["metaheur", "ils", "lkh"],
                    choices=["metaheur", "ga", "ils", "lkh"])
    ap.add_argument("--pop", type=int, default=0, help="GA population (0: what --init-share of the budget builds)")
    ap.add_argument("--init-share", type=float, default=0.3, help="budget share for building the population")
    ap.add_argument("--max-pop", type=int, default=300)
    ap.add_argument("--tries", type=int, default=30, help="EAX children per pair and generation")
    ap.add_argument("--strategy", default="single", choices=["single", "rand"])
    ap.add_argument("--select", default="auto", choices=["greedy", "entropy", "auto"],
                    help="child selection: shortest, Nagata's entropy-preserving evaluation, or auto (entropy, "
                         "then greedy from --greedy-at of the budget on)")
    ap.add_argument("--greedy-at", type=float, default=0.7)
    ap.add_argument("--stall", type=int, default=0,
                    help="generations without progress before the strategy becomes 'rand' (0: never)")
    ap.add_argument("--init", default="random", choices=["random", "greedy"])
    ap.add_argument("--init-kicks", type=int, default=0)
    ap.add_argument("--init-ls", default="full", choices=list(INIT_LS),
                    help="local search of the population: full (ILS defaults) or fast (2-opt + Or-opt, k = 16)")
    ap.add_argument("--polish", action="store_true", help="local search on every child")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eax-kernel", nargs="+", default=["classic"], choices=EAX_KERNELS,
                    help="the EAX islands' kernels (ILSParams.eax_kernel), side by side when several")
    ap.add_argument("--lkh-python", default="/tmp/benchvenv/bin/python")
    ap.add_argument("--out", default=None, help="output folder (default results/; --quick: a temporary folder)")
    ap.add_argument("--name", default="bench_eax", help="output file stem")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    args.out = out_folder(args.out, args.quick)
    return args


def apply_quick(args: argparse.Namespace, folder: Path | None) -> None:
    """``--quick``: pcb442 (a generated 400-city instance when absent), at most 5 s, no LKH."""
    args.budget = min(args.budget, 5.0)
    args.methods = [m for m in args.methods if m != "lkh"]
    args.instances = ["pcb442"] if folder and (folder / "pcb442.tsp").is_file() else ["gen:tsp:400:1"]


def load(name: str, folder: Path | None) -> tuple[TSP, Path | None]:
    """The instance and its file (``None`` for a generated ``gen:tsp:N:SEED``)."""
    if name.startswith("gen:"):
        return uniform_tsp(int(name.split(":")[2]), int(name.split(":")[3])), None
    path = folder / f"{name}.tsp" if folder else Path(name)
    return load_instance(str(path)), path


KERNEL_METHODS = ("ga", "metaheur")  # the methods that run EAX islands' kernels (--eax-kernel)


def method_runs(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """(label, method, EAX kernel) of every run of an instance: the EAX methods once per
    ``--eax-kernel``, labelled ``method[kernel]`` when there are several."""
    runs = []
    for method in args.methods:
        kernels = args.eax_kernel if method in KERNEL_METHODS else ["classic"]
        runs += [(f"{method}[{k}]" if len(kernels) > 1 else method, method, k) for k in kernels]
    return runs


def run_method(method: str, tsp: TSP, path: Path | None, args: argparse.Namespace,
               threads: int, kernel: str = "classic") -> tuple[Trace, dict] | None:
    """One method on one instance within ``args.budget``; ``None`` when LKH cannot run here."""
    if method == "ga":
        trace, info = run_ga(tsp, args.budget, GASettings.from_args(args), seed=args.seed, threads=threads,
                             log=print if args.verbose else None, kernel=kernel)
        info.pop("best_tour")
        return trace, info
    if method == "metaheur":
        return run_metaheur(tsp, args.budget, seed=args.seed, kernel=kernel)
    if method == "ils":
        return run_ils(tsp, args.budget, threads=threads, seed=args.seed)
    if path is None or not Path(args.lkh_python).exists():
        print("  lkh: skipped (no instance file or no --lkh-python interpreter)")
        return None
    return run_lkh(tsp, path, args.budget, threads=threads, python=args.lkh_python)


def checkpoint_rows(name: str, tsp: TSP, method: str, trace: Trace, opt: int | None, budget: float) -> list[dict]:
    """The best length and its gap (to the optimum, else to the method's own best) at each
    checkpoint within the budget and at the budget."""
    ref = opt or trace.best
    rows = []
    for cp in [c for c in CHECKPOINTS if c < budget] + [budget]:
        length = trace.best_at(cp)
        gap = None if length is None or ref is None else 100.0 * (length / ref - 1.0)
        rows.append({"instance": name, "n": tsp.n, "method": method, "seconds": cp,
                     "best": "" if length is None else length, "gap_percent": "" if gap is None else f"{gap:.3f}",
                     "optimum": opt or ""})
    return rows


def run_instance(name: str, folder: Path | None, bks: dict[str, int], args: argparse.Namespace,
                 threads: int) -> tuple[list[dict], list[str]]:
    """Every method on one instance: its checkpoint rows and one note per method."""
    tsp, path = load(name, folder)
    opt = bks.get(tsp.name if name.startswith("gen:") else name)
    print(f"{name}: n = {tsp.n}, optimum {opt}, budget {args.budget:g} s, {threads} threads", flush=True)
    rows, notes = [], []
    for label, method, kernel in method_runs(args):
        outcome = run_method(method, tsp, path, args, threads, kernel)
        if outcome is None:
            continue
        trace, info = outcome
        rows += checkpoint_rows(name, tsp, label, trace, opt, args.budget)
        desc = ", ".join(f"{k} {v}" for k, v in info.items())
        first = f"first tour at {trace.points[0][0]:.1f} s" if trace.points else "no tour within the budget"
        notes.append(f"{name} {label}: {desc}; {first}")
        gap = "" if not opt or trace.best is None else f" ({100 * (trace.best / opt - 1):.3f}%)"
        print(f"  {label}: best {trace.best if trace.best is not None else 'none within the budget'}{gap} "
              f"{desc}", flush=True)
    return rows, notes


def gap_table(name: str, rows: list[dict], methods: list[str]) -> list[str]:
    """Markdown section of one instance: a row per method, its gap (%) at each checkpoint."""
    sub = [r for r in rows if r["instance"] == name]
    if not sub:
        return []
    cps = sorted({r["seconds"] for r in sub})
    lines = [f"## {name} (n = {sub[0]['n']}, optimum {sub[0]['optimum'] or 'unknown'})", "",
             "| method | " + " | ".join(f"{c:g} s" for c in cps) + " |", "|---|" + "---:|" * len(cps)]
    for m in [m for m in methods if any(r["method"] == m for r in sub)]:
        cells = {r["seconds"]: r["gap_percent"] for r in sub if r["method"] == m}
        lines.append(f"| {m} | " + " | ".join(cells.get(c, "") or "-" for c in cps) + " |")
    return [*lines, ""]


def write_report(args: argparse.Namespace, head: list[str], rows: list[dict], notes: list[str]) -> None:
    """``NAME.csv`` (every row) and ``NAME.md`` (how it was run, a gap table per instance, the
    notes of the runs) under ``args.out``."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / f"{args.name}.csv", rows, COLUMNS)
    lines = [f"# {TITLE}", "", *(f"- {h}" for h in head), "",
             "Gap (%) of the best tour found by each wall-clock time (s) since the method started "
             "(population / preprocessing included).", ""]
    for name in args.instances:
        lines += gap_table(name, rows, [label for label, _, _ in method_runs(args)])
    lines += ["## Runs", "", *(f"- {n}" for n in notes)]
    (out / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out / (args.name + '.csv')} and {out / (args.name + '.md')}")


def main(argv=None) -> int:
    args = parse_args(argv)
    threads = args.threads or cpu_count()
    set_cpu_threads(threads)
    folder = instance_dir()
    if args.quick:
        apply_quick(args, folder)
    head = run_header(f"settings: budget {args.budget:g} s per method and instance, {threads} threads, seed "
                      f"{args.seed}; {GASettings.from_args(args).describe()}")
    bks = best_known_table(folder)
    rows, notes = [], []
    for name in args.instances:
        more_rows, more_notes = run_instance(name, folder, bks, args, threads)
        rows += more_rows
        notes += more_notes
    write_report(args, head, rows, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
