"""The generic engine's speed: the QAP written as a user would, against the built-in QAP tabu
search (problems/qap/tabu.py), on one core, side by side in one run.

  pair    a user QAP with only the O(n) swap pair delta (no cache): every iteration evaluates
          the n(n-1)/2 swaps at O(n) each;
  cached  a user QAP through the cache hooks as Taillard's code keeps it (TaillardQAP): the delta
          matrix and the permuted distance matrix with its transpose in the cache, a swap
          trading two rows and columns of it, every pair updated in O(1) from contiguous rows
          (O(n) for the pairs touching the swapped units, their sums for every k at once, one
          pass over the rows as the built-in does); a swap delta is one read. Where both
          matrices are symmetric (Taillard's instances), the symmetric form of the same code
          (SymmetricTaillardQAP: no transposes, the formulas halved), as the built-in then
          compiles its MH_QAP_SYMMETRIC variant. The cache is int32 (``cache_dtype``) where the
          built-in keeps int32 deltas (its MH_QAP_DELTA32 rule: delta_bound below
          MH_TS_DELTA32_LIMIT), int64 otherwise (``cache`` column);
  builtin the built-in robust tabu search (kernels/qap/qap_tabu.cu), the reference.

Every search is one tabu search over swaps from the same random start, each form run for about
``--seconds`` of its own speed (``iterations``: the built-in's count), runs interleaved;
iterations per second of the process's CPU time (the machine may be shared: CPU time does not
count the time other processes hold the core; median of the repetitions), and the
ratio of the built-in's rate to each user form's. The rules differ in their details (the
built-in adds Taillard's long-term aspiration; the generic one draws one tenure per position
left), so trajectories differ; the rate of an iteration (scan of every swap, move, update) is
the comparison. The user QAP classes are those of the tests (tests/perm/perm_problems.py).

    python experiments/bench_user_problem.py [--quick] [--instances tai30a,tai50a] [--reps 3]
        [--seconds 2] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "perm"))
from lib.report import out_folder, run_header, write_table
from perm_problems import SymmetricTaillardQAP, TaillardQAP, UserQAP

from metaheur.engine import set_cpu_threads
from metaheur.problems import load_instance
from metaheur.problems.qap.device_data import DELTA32_LIMIT, delta_bound
from metaheur.problems.qap.tabu import QAPTabuBatch
from metaheur.search.perm_search import PermSearchBatch, PermSearchParams

INSTANCES = ["tai30a", "tai50a", "tai100a"]
FORMS = ("builtin", "cached", "pair")


def symmetric(qap) -> bool:
    """Whether both matrices are symmetric (the cached form is then SymmetricTaillardQAP)."""
    return bool((qap.flow == qap.flow.T).all() and (qap.distance == qap.distance.T).all())


def cache_dtype(qap) -> str:
    """int32 where the built-in keeps int32 deltas (problems/qap/device_data.py), else int64."""
    return "int32" if delta_bound(qap) < DELTA32_LIMIT else "int64"


def rate(form: str, qap, start: np.ndarray, iterations: int) -> tuple[float, int]:
    """(seconds, best cost) of one search of ``form`` for ``iterations`` iterations."""
    if form == "builtin":
        batch = QAPTabuBatch(qap, "cpu", starts=start[None], keys=[7])
        t0 = time.process_time()
        res = batch.run(iterations)
        return time.process_time() - t0, int(res.best_costs[0])
    cls = UserQAP if form == "pair" else SymmetricTaillardQAP if symmetric(qap) else TaillardQAP
    pb = cls(qap.flow, qap.distance, name=qap.name, **({} if form == "pair" else {"cache_dtype": cache_dtype(qap)}))
    batch = PermSearchBatch(pb, "cpu", 1, PermSearchParams(method="tabu", move="swap"))
    batch.run(start[None], np.array([7], np.uint64), 1)  # compiled and warm
    t0 = time.process_time()
    res = batch.run(start[None], np.array([7], np.uint64), iterations)
    return time.process_time() - t0, int(res.best_costs[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", default=None)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0, help="about this long per built-in search")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    names = args.instances.split(",") if args.instances else (["tai30a"] if args.quick else INSTANCES)
    reps, seconds = (1, 0.2) if args.quick else (args.reps, args.seconds)
    set_cpu_threads(1)
    rows = []
    for name in names:
        qap = load_instance(name)
        start = np.random.default_rng(1).permutation(qap.n)
        iterations = {}
        for form in FORMS:  # each form's budget: about `seconds` of its own speed
            probe, _ = rate(form, qap, start, 50)
            iterations[form] = max(50, int(seconds * 50 / max(probe, 1e-6)))
        times: dict[str, list[float]] = {form: [] for form in FORMS}
        best: dict[str, int] = {}
        for r in range(reps):
            for form in FORMS if r % 2 == 0 else FORMS[::-1]:
                t, b = rate(form, qap, start, iterations[form])
                times[form].append(t)
                best[form] = b
        per_s = {f: iterations[f] / float(np.median(t)) for f, t in times.items()}
        rows.append({"instance": name, "n": qap.n, "cached_form": "symmetric" if symmetric(qap) else "general",
                     "cache": cache_dtype(qap),
                     "iterations": iterations["builtin"], "reps": reps,
                     "builtin_iters_per_s": round(per_s["builtin"]), "cached_iters_per_s": round(per_s["cached"]),
                     "pair_iters_per_s": round(per_s["pair"]),
                     "builtin_over_cached": round(per_s["builtin"] / per_s["cached"], 2),
                     "builtin_over_pair": round(per_s["builtin"] / per_s["pair"], 2),
                     "best_builtin": best["builtin"], "best_cached": best["cached"], "best_pair": best["pair"]})
    columns = list(rows[0])
    head = run_header(f"one core, one search per form, {reps} interleaved repetitions, "
                      f"about {seconds} s per built-in search; iterations per CPU second = median")
    write_table(rows, columns, "bench_user_problem", head, out_folder(args.out, args.quick),
                title="Generic engine: a user's QAP against the built-in tabu search")


if __name__ == "__main__":
    main()
