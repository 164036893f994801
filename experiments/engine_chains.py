"""How many CPU cores a GPU is worth to the generic engine's local search (kernels/engine/perm_search.cu
through ``PermSearchBatch``): iterations a second of one core against those of every GPU running
the chains a GPU island runs side by side.

Per problem (a generated flow shop, ``--pfsp N:M``; a generated LOP, ``--lop N``, and the same
LOP searched over swaps; the tutorial's user problem, the single-machine total weighted tardiness
of tests/perm/perm_problems.py, ``--user N``), the problem's default local search (the
``PermSearchParams`` section of ``problem.default_params()``, resolved: the flow shop's and the
tardiness' iterated greedy, the LOP's ILS over insertions; ``LOP, swaps``: that ILS over swaps,
whose scans take pair deltas, not a row function) runs for about ``--seconds`` from random
starts, after a warm-up, in each layout (``kernel``: ``PermSearchParams.kernel``, classic then
warp; ``scan``: ``PermSearchParams.scan``, row, and warps with the classic kernels where the
search's move has no row function, the only scans it splits):

* ``cpu``: one search on one core (``set_cpu_threads(1)``), each layout's CPU build side by side;
  the first row is the reference (``cores_worth`` 1; the others' is their rate against it, the
  CPU builds' ratio);
* ``cuda:K``: every GPU of ``gpu_devices()``, each layout side by side, one batch of chains a row
  (a kernel block a chain): the chains of a GPU island of continued searches (``problem.gpu_chains``;
  the row ``met`` judges), one chain and one wave (as many chains a multiprocessor as the layout
  runs: one classic block, the resident one-warp blocks; ``chains_per_sm``) where that count is
  not already a row.

``iterations`` counts what the engine counts (tabu iterations, kicks or greedy iterations, plus
descent moves) over all chains; ``iters_per_s`` = iterations / seconds of the batch;
``cores_worth`` = a GPU row's iters_per_s / the one-core row's; ``target``: the round's target
(40 cores for the flow shop and the LOP, 20 for the user problem); ``met``: whether the island's
row reaches it. Every batch's bests are checked to be permutations whose reported costs equal
``engine_sign * value`` recomputed (the script fails otherwise). Without a GPU, one row per
problem says ``absent: no GPU``.

    python experiments/engine_chains.py [--quick] [--seconds 2] [--pfsp 100:20] [--lop 300] [--user 100]
        [--out DIR]

``--quick``: flow shop 20 x 5, LOP 30, tardiness 20, 0.3 s a row (a smoke test; a temporary
folder). Simulated GPUs (``METAHEUR_SIMULATED_GPUS=1``) run the CPU build: their rates are
meaningless.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "perm"))
from lib.report import log, out_folder, run_header, write_table
from perm_problems import random_tardiness

from metaheur.devices import Device, cpu_device, gpu_devices
from metaheur.engine import set_cpu_threads
from metaheur.problems.lop.generator import random_lop
from metaheur.problems.pfsp import random_pfsp
from metaheur.search.batch import BatchResult
from metaheur.search.perm_search import KERNELS, METHOD_NAMES, SCANS, PermSearchBatch, PermSearchParams, chains_per_sm

COLUMNS = ["problem", "n", "method", "kernel", "scan", "device", "chains", "chains_per_sm", "iterations", "seconds",
           "iters_per_s", "cores_worth", "target", "met", "status"]
SEED = 1


@dataclass
class Case:
    """One problem of the table: its instance and the round's target (cores a GPU is worth)."""

    label: str
    problem: object
    target: int
    move: str | None = None  # the search's move, where not the island's


def cases(pfsp: tuple[int, int], lop: int, user: int) -> list[Case]:
    """The three generated instances of the table."""
    return [Case("flow shop", random_pfsp(*pfsp, seed=SEED), 40), Case("LOP", random_lop(lop, seed=SEED), 40),
            Case("LOP, swaps", random_lop(lop, seed=SEED), 40, "swap"),
            Case("weighted tardiness (user)", random_tardiness(user, SEED), 20)]


def island_params(case: Case):
    """The parameters of a GPU island of continued searches: the problem's defaults when they are
    one already (crossover ``none``), else its local-search island beside them; the case's move."""
    problem, params = case.problem, case.problem.default_params()
    if params.ga.crossover != "none":
        params = problem.local_search_island(params) or params
    search = params.search(PermSearchParams)
    return params.with_search(replace(search, move=case.move or search.move))


def layouts(problem, params: PermSearchParams) -> list[tuple[str, str]]:
    """The (kernel, scan) layouts measured: each kernel's row scans, and the classic kernels'
    scans by warps where the search's move has no row function (else they are the row scans)."""
    out = [(kernel, "row") for kernel in KERNELS]
    if not problem.user_code().has(f"{params.resolved(problem)[1]}_row"):
        out += [("classic", scan) for scan in SCANS if scan != "row"]
    return out


def method_label(problem, params: PermSearchParams) -> str:
    """The resolved method's name, with its move where the method has one."""
    method, move = params.resolved(problem)
    return METHOD_NAMES[method] if method == "ig" else f"{METHOD_NAMES[method]} ({move})"


def chain_counts(problem, island, device: Device) -> tuple[int, list[int]]:
    """(the island's chains on ``device``, every count to measure: one, the island's and one wave of
    the island's kernel layout, without repeats, in increasing order)."""
    chains = problem.gpu_chains(island, device)
    return chains, sorted({1, chains, device.cores * chains_per_sm(problem, island.search(PermSearchParams), device)})


def check(problem, result: BatchResult, where: str) -> None:
    """Fail unless every best is a permutation whose reported cost is its exact engine cost."""
    n = problem.n
    for k, (perm, cost) in enumerate(zip(result.best, result.best_costs, strict=True)):
        if not np.array_equal(np.sort(perm), np.arange(n)):
            raise SystemExit(f"{where}: chain {k}'s best is not a permutation of {n}")
        exact = problem.engine_sign * problem.value(perm)
        if int(cost) != exact:
            raise SystemExit(f"{where}: chain {k} reports cost {int(cost)}, its best's exact cost is {exact}")


def timed_batch(problem, params: PermSearchParams, device: Device, chains: int, seconds: float) -> BatchResult:
    """``chains`` searches in one batch on ``device`` from random starts for about ``seconds``,
    after a warm-up run of one iteration (kernels compiled and loaded); checked."""
    batch = PermSearchBatch(problem, device, chains, params)
    rng = np.random.default_rng(SEED)
    starts = np.array([rng.permutation(problem.n) for _ in range(chains)])
    keys = np.arange(1, chains + 1, dtype=np.uint64)
    batch.run(starts, keys, 1)
    result = batch.run(starts, keys, budget=10**9, time_limit=seconds)
    check(problem, result, f"{problem.name} on {device.name} with {chains} chain(s)")
    return result


def measured_row(case: Case, method: str, layout: tuple[str, str], device: Device, chains: int,
                 result: BatchResult) -> dict:
    """A row of a real run (``cores_worth`` and ``met`` are filled in later)."""
    iterations = int(result.iterations.sum())
    return {"problem": case.label, "n": case.problem.n, "method": method, "kernel": layout[0], "scan": layout[1],
            "device": device.name,
            "chains": chains,
            "chains_per_sm": round(chains / device.cores, 2) if device.is_gpu else None, "iterations": iterations,
            "seconds": round(result.seconds, 3), "iters_per_s": round(iterations / result.seconds),
            "target": case.target, "status": "ok"}


def gpu_rows(case: Case, island, method: str, one_core: float, seconds: float) -> list[dict]:
    """The rows of every GPU, each kernel layout's side by side (one ``absent: no GPU`` row without one)."""
    problem, rows = case.problem, []
    if not gpu_devices():
        return [{"problem": case.label, "n": problem.n, "method": method, "target": case.target,
                 "status": "absent: no GPU"}]
    for device in gpu_devices():
        for layout in layouts(problem, island.search(PermSearchParams)):
            params_of = with_layout(island, layout)
            params = params_of.search(PermSearchParams)
            island_chains, counts = chain_counts(problem, params_of, device)
            for chains in counts:
                log(f"{case.label} n={problem.n}: {device.name}, {layout[0]} kernels, {layout[1]} scans, "
                    f"{chains} chain(s)")
                result = timed_batch(problem, params, device, chains, seconds)
                row = measured_row(case, method, layout, device, chains, result)
                row["cores_worth"] = round(row["iters_per_s"] / one_core, 2)
                if chains == island_chains:
                    row["met"] = "yes" if row["cores_worth"] >= case.target else "no"
                rows.append(row)
    return rows


def with_layout(island, layout: tuple[str, str]):
    """``island`` with its search in the (kernel, scan) ``layout``."""
    return island.with_search(replace(island.search(PermSearchParams), kernel=layout[0], scan=layout[1]))


def case_rows(case: Case, seconds: float) -> list[dict]:
    """The one-core rows of ``case`` (each layout's CPU build, side by side; the island's own, the
    classic row scans, is the reference), then its GPU rows."""
    island = island_params(case)
    method = method_label(case.problem, island.search(PermSearchParams))
    cpu = []
    for layout in layouts(case.problem, island.search(PermSearchParams)):
        log(f"{case.label} n={case.problem.n}: {method}, {layout[0]} kernels, {layout[1]} scans, on one core")
        params = with_layout(island, layout).search(PermSearchParams)
        row = measured_row(case, method, layout, cpu_device(), 1,
                           timed_batch(case.problem, params, cpu_device(), 1, seconds))
        row["device"] = "cpu (1 core)"
        row["cores_worth"] = round(row["iters_per_s"] / cpu[0]["iters_per_s"], 2) if cpu else 1
        cpu.append(row)
    return [*cpu, *gpu_rows(case, island, method, cpu[0]["iters_per_s"], seconds)]


def size_pair(text: str) -> tuple[int, int]:
    """``N:M`` as two positive integers (argparse type)."""
    try:
        n, m = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N:M (jobs:machines), got {text!r}") from None
    if n < 2 or m < 1:
        raise argparse.ArgumentTypeError(f"need N >= 2 and M >= 1, got {text!r}")
    return n, m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="flow shop 20x5, LOP 30, tardiness 20, 0.3 s a row")
    ap.add_argument("--seconds", type=float, default=2.0, help="about this long a row (default 2)")
    ap.add_argument("--pfsp", type=size_pair, default=(100, 20), help="flow shop jobs:machines (default 100:20)")
    ap.add_argument("--lop", type=int, default=300, help="LOP size (default 300)")
    ap.add_argument("--user", type=int, default=100, help="weighted tardiness jobs (default 100)")
    ap.add_argument("--out", default=None, help="folder for the table (default results/; --quick: a new temporary "
                    "folder)")
    args = ap.parse_args()
    if args.quick:
        args.pfsp, args.lop, args.user, args.seconds = (20, 5), 30, 20, 0.3
    set_cpu_threads(1)
    rows = [row for case in cases(args.pfsp, args.lop, args.user) for row in case_rows(case, args.seconds)]
    head = run_header(f"settings: each problem's default local search, about {args.seconds} s a row from random "
                      f"starts after a warm-up; cpu: one search on one core; GPU rows: one batch of chains")
    write_table(rows, COLUMNS, "engine_chains", head, out_folder(args.out, args.quick),
                title="Generic engine: the GPU worth N cores")


if __name__ == "__main__":
    main()
