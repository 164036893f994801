"""Soak test: many short solves, back to back and in several processes at once, for a bounded time.

Every solve writes its JSON result and solution file; the soak then checks that (1) the reported
cost equals a from-scratch evaluation of the reported permutation, (2) both files exist, parse and
agree (the solution file re-scores to the reported cost), (3) no process grows its memory (RSS) or
its open file descriptors beyond a bound once warmed up. Most solves run in-process through
``metaheur.solver.solve`` (so leaks accumulate where they can be seen, in long-lived processes);
every fifth goes through the ``metaheur solve`` command line in a subprocess.

    python experiments/soak.py [--seconds 600] [--processes 3] [--rss-mib 200] [--fds 32] [--out DIR]

Exits 1 on any wrong or lost result or leak. Writes soak.csv / soak.md (one row per process).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.report import header, out_folder, write_table


def _rss_mib() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _check(spec: str, json_path: Path, sol_path: Path) -> str | None:
    """None when the outputs are complete and right, else what is wrong."""
    from metaheur.problems import load_instance, load_solution

    if not json_path.is_file() or not sol_path.is_file():
        return "lost: an output file is missing"
    data = json.loads(json_path.read_text())
    problem = load_instance(spec)
    exact = problem.cost(data["permutation"]) if problem.kind == "qap" else problem.tour_length(data["permutation"])
    if exact != data["cost"]:
        return f"wrong: reported {data['cost']}, exact {exact}"
    sol = load_solution(problem, sol_path)
    rescored = problem.cost(sol.permutation) if problem.kind == "qap" else problem.tour_length(sol.permutation)
    if rescored != data["cost"]:
        return f"wrong: the solution file scores {rescored}, the JSON says {data['cost']}"
    return None


def worker(index: int, seconds: float, folder: str, queue) -> None:
    from metaheur import SolveParams, solve
    from metaheur.problems import QAP, write_sln, write_tour

    rng = random.Random(index)
    deadline = time.monotonic() + seconds
    done = wrong = lost = 0
    errors: list[str] = []
    baseline = None
    peak_rss, peak_fds = 0.0, 0
    k = 0
    while time.monotonic() < deadline:
        kind = rng.choice(["qap", "tsp", "tsp-clustered"])
        n = rng.randint(8, 60) if kind == "qap" else rng.randint(10, 300)
        spec = f"gen:{kind}:{n}:{rng.randint(0, 10**6)}"
        out = Path(folder) / f"p{index}-{k}"
        json_path, sol_path = out.with_suffix(".json"), out.with_suffix(".sol")
        strategy = rng.choice(["cpu-serial", "cpu-islands"])
        limit = round(rng.uniform(0.3, 1.5), 2)
        try:
            if k % 5 == 4:
                cmd = [sys.executable, "-m", "metaheur.cli", "solve", spec, "-q", "-t", str(limit), "--strategy",
                       strategy, "--json", str(json_path), "--solution", str(sol_path)]
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                if proc.returncode != 0:
                    raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "exit status")
            else:
                result = solve(spec, seed=rng.randint(0, 1000),
                               params=SolveParams(strategy=strategy, epoch_seconds=0.3), time_limit=limit)
                result.to_json(json_path)
                from metaheur.problems import load_instance

                problem = load_instance(spec)
                (write_sln if isinstance(problem, QAP) else write_tour)(sol_path, problem, result.permutation)
            problem_error = _check(spec, json_path, sol_path)
        except Exception as exc:  # a crash loses the result
            problem_error = f"lost: {type(exc).__name__}: {exc}"
        done += 1
        if problem_error:
            wrong += problem_error.startswith("wrong")
            lost += problem_error.startswith("lost")
            errors.append(f"{spec}: {problem_error}")
        for p in (json_path, sol_path):
            p.unlink(missing_ok=True)
        k += 1
        if k == 3:
            baseline = (_rss_mib(), _fds())
        if baseline:
            peak_rss = max(peak_rss, _rss_mib() - baseline[0])
            peak_fds = max(peak_fds, _fds() - baseline[1])
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)  # a child process must not exit with live workers
    queue.put({"process": index, "solves": done, "wrong": wrong, "lost": lost,
               "rss_growth_mib": round(peak_rss, 1), "fd_growth": peak_fds, "errors": errors[:5]})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=600.0)
    ap.add_argument("--processes", type=int, default=3)
    ap.add_argument("--rss-mib", type=float, default=200.0, help="allowed RSS growth per process after warm-up")
    ap.add_argument("--fds", type=int, default=32, help="allowed growth of open file descriptors")
    ap.add_argument("--quick", action="store_true", help="20 s, 2 processes")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    args.out = out_folder(args.out, args.quick)
    if args.quick:
        args.seconds, args.processes = 20.0, 2
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    with tempfile.TemporaryDirectory(prefix="metaheur-soak-") as folder:
        procs = [ctx.Process(target=worker, args=(i, args.seconds, folder, queue)) for i in range(args.processes)]
        for p in procs:
            p.start()
        rows = [queue.get(timeout=args.seconds + 600) for _ in procs]
        for p in procs:
            p.join()
    rows.sort(key=lambda r: r["process"])
    for r in rows:
        r["leak"] = r["rss_growth_mib"] > args.rss_mib or r["fd_growth"] > args.fds
        for e in r.pop("errors"):
            print("  ", e)
    head = header(f"{args.processes} processes for {args.seconds:.0f} s; bounds: RSS growth <= {args.rss_mib} MiB, "
                  f"fd growth <= {args.fds} after 3 warm-up solves")
    write_table(rows, ["process", "solves", "wrong", "lost", "rss_growth_mib", "fd_growth", "leak"],
                "soak" + ("_quick" if args.quick else ""), head, args.out, "Soak test")
    total = sum(r["solves"] for r in rows)
    bad = sum(r["wrong"] + r["lost"] for r in rows) + sum(r["leak"] for r in rows)
    print(f"{total} solves, {sum(r['wrong'] for r in rows)} wrong, {sum(r['lost'] for r in rows)} lost, "
          f"{sum(r['leak'] for r in rows)} leaking processes")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
