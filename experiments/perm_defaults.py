"""The constants of the defaults that follow the cost (metaheur/search/perm_defaults.py,
docs/decisions/perm-defaults.md): how many full neighbourhood scans a search's start and each of
its steps cost, and whether the chosen first generation ends within its share of the time limit.

Problems: the tutorial's weighted tardiness (tests/perm/perm_problems.py, ``--wt N``), its
cost-only variant and the cost-only LOP (tests/perm/cost_only.py: ``cost`` alone, O(n) and
O(n^2)), a Taillard flow shop (``--pfsp NAME``, under METAHEUR_INSTANCES) and a generated LOP
(``--lop N``). Per problem, the probe's timings (0.5 s), then:

* ``scans`` table: for each method the problem can run (``method_order`` of ``auto``), over
  full scans, and the ILS over samples of n / 10 and n moves (``sample``), searches from random
  starts on one core (``set_cpu_threads(1)``, a batch of ``--count``; CPU seconds of the thread,
  as the probe measures, so that other processes' load stays out) with budget 0 and budget B
  (tabu n, the others 10): ``start_units`` = seconds of a budget-0 search / one unit (a full scan
  of its neighbourhood, the insertions for the iterated greedy; one sample of m pair deltas for
  the sampled rows), ``step_units`` = seconds of a step (B minus 0, over B) / one unit, less the
  kick's own cost (``partial_insert_row`` calls of the iterated greedy, ``cost`` of an ILS kick).
  The model's DESCENT_SCANS (the starts), KICK_SCANS (ILS steps), GREEDY_SCANS (iterated-greedy
  steps), SAMPLED_DESCENT (sampled starts, per n) and SAMPLED_KICK are what these stay under.
* ``choice`` table: the chooser's pick for ``--times`` (seconds; one island a core, the default
  GA: 30 searches a first generation), its predicted and allowed seconds, and ``first_gen_s``:
  a one-island run of those parameters for one generation (its search time: the population
  built and one generation of children), measured, and ``first_gen_cpu_s``, the CPU seconds of
  that whole call (the run's setup included).

    python experiments/perm_defaults.py [--quick] [--wt 100] [--pfsp ta051] [--lop 150] [--times 10 60]
        [--count 4] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "perm"))
from cost_only import cost_only_lop, cost_only_tardiness
from lib.report import log, out_folder, run_header, write_table
from perm_problems import random_tardiness

import metaheur
from metaheur.engine import set_cpu_threads
from metaheur.problems import load_instance
from metaheur.problems.lop.generator import random_lop
from metaheur.search.cost_probe import probe_costs
from metaheur.search.perm_defaults import RunBudget, choose
from metaheur.search.perm_search import PermSearchBatch, PermSearchParams, method_order

SCAN_COLUMNS = ["instance", "n", "method", "move", "sample", "unit_ms", "start_s", "step_s", "start_units",
                "step_units"]
CHOICE_COLUMNS = ["instance", "n", "time_limit_s", "method", "move", "sample", "ls_budget", "predicted_s", "allowed_s",
                  "first_gen_cpu_s", "first_gen_s"]


def problems(args) -> list:
    out = [random_tardiness(args.wt, 1), cost_only_tardiness(args.wt, 1), cost_only_lop(args.lop_cost, 1),
           random_lop(args.lop, 1)]
    if args.pfsp and os.environ.get("METAHEUR_INSTANCES"):
        out.append(load_instance(args.pfsp))
    return out


def search_seconds(problem, method: str, move: str, budget: int, count: int, sample: int = 0) -> float:
    """Seconds of one search of ``budget`` steps, the mean of a batch of ``count`` from random starts."""
    rng = np.random.default_rng(0)
    batch = PermSearchBatch(problem, "cpu", count, PermSearchParams(method=method, move=move, sample=sample))
    starts = np.array([rng.permutation(problem.n) for _ in range(count)])
    keys = np.arange(count, dtype=np.uint64) + 1
    batch.run(starts, keys, 0)  # binds the kernels
    t0 = time.thread_time()  # CPU seconds, as the probe measures: another process's load left out
    result = batch.run(starts, keys, budget)
    seconds = time.thread_time() - t0
    sign = problem.engine_sign
    assert all(c == sign * problem.value(b) for b, c in zip(result.best, result.best_costs, strict=True))
    return seconds / count


def scan_rows(problem, timings, count: int) -> list[dict]:
    """The scans table's rows of ``problem``: every method over full scans, and the ILS over
    samples of n / 10 and n moves (its unit then one sample, m pair deltas)."""
    rows, move, n = [], problem.moves[0], problem.n
    runs = [(method, 0) for method in method_order(problem, "auto", move)] + [("ils", max(1, n // 10)), ("ils", n)]
    for method, sample in runs:
        scanned = "insert" if method == "ig" else move
        unit = sample * timings.pair[scanned] if sample else timings.scan(scanned)
        steps = n if method == "tabu" else 10
        start = search_seconds(problem, method, move, 0, count, sample)
        step = (search_seconds(problem, method, move, steps, count, sample) - start) / steps
        kick = 4 * timings.partial if method == "ig" else (timings.cost if method == "ils" else 0.0)
        rows.append({"instance": problem.name, "n": n, "method": method, "move": scanned, "sample": sample,
                     "unit_ms": unit * 1e3, "start_s": start, "step_s": step, "start_units": start / unit,
                     "step_units": (step - kick) / unit})
        log(f"{problem.name} {method} sample {sample}: start {start / unit:.2f} units, step {(step - kick) / unit:.2f}")
    return rows


def choice_rows(problem, timings, times: list[float]) -> list[dict]:
    rows = []
    defaults = metaheur.PermutationProblem.default_params(problem)
    ga = defaults.ga
    for limit in times:
        c = choose(problem, PermSearchParams(), None, ga.population + ga.offspring, RunBudget(limit, True), timings)
        params = metaheur.SolveParams(strategy="cpu-serial", sync=True, ga=replace(ga, ls_budget=c.ls_budget),
                                      searches=[PermSearchParams(method=c.method, move=c.move, sample=c.sample)])
        t0 = time.process_time()
        result = metaheur.solve(problem, generations=1, seed=1, params=params)
        cpu = time.process_time() - t0
        rows.append({"instance": problem.name, "n": problem.n, "time_limit_s": limit, "method": c.method,
                     "move": c.move, "sample": c.sample, "ls_budget": c.ls_budget, "predicted_s": c.predicted_s,
                     "allowed_s": c.allowed_s, "first_gen_cpu_s": cpu, "first_gen_s": result.time_s})
        log(f"{problem.name} {limit:g} s: {c.method} {c.ls_budget} (sample {c.sample}), "
            f"predicted {c.predicted_s:.3g} s, "
            f"measured {cpu:.3g} s CPU, {result.time_s:.3g} s, allowed {c.allowed_s:.3g} s")
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="n = 20, one time limit (a smoke test)")
    parser.add_argument("--wt", type=int, default=100, help="size of the weighted tardiness problems")
    parser.add_argument("--lop", type=int, default=150, help="size of the generated LOP")
    parser.add_argument("--lop-cost", type=int, default=60, help="size of the cost-only LOP")
    parser.add_argument("--pfsp", default="ta051", help="a flow shop instance (needs METAHEUR_INSTANCES)")
    parser.add_argument("--times", type=float, nargs="+", default=[10.0, 60.0])
    parser.add_argument("--count", type=int, default=4, help="searches a batch")
    parser.add_argument("--out", help="folder of the tables (default experiments/results)")
    args = parser.parse_args(argv)
    if args.quick:
        args.wt, args.lop, args.lop_cost, args.pfsp, args.times, args.count = 20, 20, 20, None, [2.0], 2
    out = out_folder(args.out, args.quick)
    set_cpu_threads(1)
    scans, choices = [], []
    for problem in problems(args):
        timings = probe_costs(problem, 0.5)
        scans += scan_rows(problem, timings, args.count)
        choices += choice_rows(problem, timings, args.times)
    head = run_header(f"settings: wt {args.wt}, lop {args.lop}, cost-only lop {args.lop_cost}, pfsp {args.pfsp}, "
                      f"times {args.times}, count {args.count}")
    write_table(scans, SCAN_COLUMNS, "perm_defaults_scans", head, out, "Search cost in full scans")
    write_table(choices, CHOICE_COLUMNS, "perm_defaults_choice", head, out, "The chosen first generation")


if __name__ == "__main__":
    main()
