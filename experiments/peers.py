"""metaheur against other solvers, side by side in one run, at equal time per instance.

QAP (QAPLIB instances; default tai30a, tai50a, tai100a, sko100a, tai256c):
  metaheur     solve() with the default strategy (all cores, and GPUs when present);
  scipy-2opt   scipy.optimize.quadratic_assignment(method="2opt") from random starts, restarted
               with new seeds until the budget is used, best kept (one core; a restart still
               running at the end of the budget is killed, so the best finished one counts);
  scipy-faq    the same with method="faq" (P0 "randomized");
  rots.c       shared/yardsticks/rots.c (robust tabu search, gcc -O3 -march=native) once per core
               with different seeds, best of them, each with the iterations it does in the budget
               at its speed measured by a 5000-iteration probe (as bench_search.py does).
TSP (TSPLIB instances; default a280, pcb442, u724, pr2392, pcb3038, rl5915):
  metaheur     as above;
  fast_tsp     fast_tsp.find_tour(matrix as lists, budget), max_threads = cores where its API has it
               (it refuses distances above 65,535: its error is the row's status);
  elkai        elkai.DistanceMatrix(lists).solve_tsp(runs=R) (LKH-3). It has no time limit: one
               run is timed first and R = round(budget / its time); the second call (R > 1) is
               reported with its own wall time, whatever it came to (it includes elkai's conversion
               of the matrix to LKH's text; LKH may also end before its R runs are done, as seen
               on small instances); with R = 1 the first run is reported;
  ortools      OR-Tools routing, one vehicle, path-cheapest-arc start, guided local search, time
               limit = budget (one thread).
  The three need a full distance matrix: instances with n > --max-matrix-n (default 6000: the
  matrix as Python lists takes about 36 n^2 bytes) skip them with a note.

Peers run in child processes (experiments/peer_worker.py) under the first Python that has them:
this interpreter, then each --peer-python (repeatable) and each entry of $METAHEUR_PEER_PYTHON
(separated by ':'), e.g. `--peer-python /tmp/benchvenv/bin/python` for fast_tsp and elkai. A peer
that none of them has is a row "absent: ... not installed" (nothing is invented). Its clock
starts after its inputs are loaded and converted to lists.

Per instance and solver, over --seeds seeds: the cores it used, mean wall time, best and mean gap
to the best-known value (generated gen: instances: to the best cost any solver found here),
gap_ratio = its mean gap / metaheur's mean gap ("inf" when metaheur's is 0 and its is not) and
time_ratio = its mean wall time / metaheur's mean search time. Time per
instance: --seconds S, else B * n / 50 (QAP) or B * n / 1000 (TSP) clipped to [B / 2, 10 B] with
B = --base-seconds. Writes peers_qap.csv/.md and peers_tsp.csv/.md.

    METAHEUR_INSTANCES=../shared/instances python experiments/peers.py --quick
    METAHEUR_INSTANCES=../shared/instances python experiments/peers.py --peer-python /tmp/benchvenv/bin/python \\
        [--peer-python /tmp/ortoolsvenv/bin/python] [--base-seconds 10] [--seeds 3] [--qap ...] [--tsp ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.backends import auto_workers, one_thread_in_process, warm_pool
from lib.instances import budget_seconds, names_arg, need_instances, present, problem
from lib.report import RESULTS, log, out_folder, run_header, write_table
from lib.runs import gap_to, solve_run
from lib.yardstick import build_rots, find_yardstick, have_gcc, rots_best_of_cores
from peer_worker import MODULES

from metaheur.devices import cpu_count, gpu_devices
from metaheur.errors import MetaheurError

WORKER = Path(__file__).resolve().parent / "peer_worker.py"
QAP = ["tai30a", "tai50a", "tai100a", "sko100a", "tai256c"]
TSP = ["a280", "pcb442", "u724", "pr2392", "pcb3038", "rl5915"]
COLUMNS = ["instance", "n", "solver", "cores", "status", "budget_s", "seeds", "wall_s", "best_cost", "reference",
           "ref_kind", "best_gap_%", "mean_gap_%", "gap_ratio", "time_ratio", "note"]


class Peers:
    """Finds, for each peer, a Python that can run it, and runs it there."""

    def __init__(self, pythons: list[str]):
        self.pythons = list(dict.fromkeys(pythons))
        self._found: dict[str, str | None] = {}

    def python_for(self, solver: str) -> str | None:
        if solver not in self._found:
            self._found[solver] = None
            for py in self.pythons:
                try:
                    ok = subprocess.run([py, str(WORKER), "check", MODULES[solver]], capture_output=True,
                                        timeout=120).returncode == 0
                except (OSError, subprocess.TimeoutExpired):
                    ok = False
                if ok:
                    self._found[solver] = py
                    break
        return self._found[solver]

    def missing(self, solver: str) -> str:
        return f"absent: {MODULES[solver].split('.')[0]} not installed in {', '.join(self.pythons)}"

    def run(self, solver: str, spec: dict, timeout: float) -> dict:
        """{"status", "solution", "wall_s", "note"} of one run."""
        py = self.python_for(solver)
        if py is None:
            return {"status": self.missing(solver)}
        with tempfile.TemporaryDirectory() as tmp:
            out, spec_path = Path(tmp) / "out.json", Path(tmp) / "spec.json"
            spec_path.write_text(json.dumps(dict(spec, solver=solver, out=str(out))))
            note = ""
            try:
                proc = subprocess.run([py, str(WORKER), "run", str(spec_path)], capture_output=True, text=True,
                                      timeout=timeout)
                if proc.returncode != 0 and not out.is_file():
                    return {"status": f"error: {(proc.stderr.strip().splitlines() or ['?'])[-1][:200]}"}
            except subprocess.TimeoutExpired:
                note = f"killed after {timeout:.0f} s"
                if not out.is_file():
                    return {"status": f"error: {note} without a result"}
            data = json.loads(out.read_text())
        if note:
            data["note"] = f"{data.get('note', '')}; {note}".strip("; ")
            data["wall_s"] = min(float(data["wall_s"]), timeout) if data.get("wall_s") else timeout
        if data.get("solution") is None:
            return {"status": f"no result: {data.get('note', '')}"}
        return {"status": "ok", **data}


def evaluate(prob, solution) -> int:
    if prob.kind == "qap":
        return int(prob.cost(np.asarray(solution)))
    return int(prob.tour_length(np.asarray(solution)))


def aggregate(name: str, prob, solver: str, cores, budget: float, runs: list[dict], ref) -> dict:
    done = [r for r in runs if r["status"] == "ok"]
    row = {"instance": name, "n": prob.n, "solver": solver, "cores": cores, "budget_s": budget,
           "seeds": len(runs), "reference": ref}
    if not done:
        row.update({"cores": None, "status": runs[0]["status"] if runs else "not run",
                    "note": runs[0].get("note", "") if runs else ""})
        return row
    gaps = [gap_to(r["cost"], ref) for r in done]
    gaps = [g for g in gaps if g is not None]
    row.update({"status": "ok" if len(done) == len(runs) else f"{len(runs) - len(done)} failed",
                "wall_s": round(statistics.mean(r["wall_s"] for r in done), 2),
                "best_cost": min(r["cost"] for r in done),
                "best_gap_%": round(min(gaps), 4) if gaps else None,
                "mean_gap_%": round(statistics.mean(gaps), 4) if gaps else None,
                "note": done[0].get("note", "")})
    return row


def settle(pending: list[tuple], bks) -> list[dict]:
    """Rows of one instance: gaps to the best-known value, or (without one) to the best cost any
    solver found here."""
    ref, kind = bks, "bks"
    if ref is None:
        costs = [r["cost"] for p in pending for r in p[-1] if r.get("status") == "ok"]
        ref, kind = (min(costs), "best seen") if costs else (None, "")
    rows = [aggregate(*p, ref) for p in pending]
    for row in rows:
        row["ref_kind"] = kind
    return rows


def ratios(rows: list[dict]) -> None:
    """gap_ratio and time_ratio against metaheur's row of the same instance."""
    ours = {r["instance"]: r for r in rows if r["solver"] == "metaheur"}
    for r in rows:
        base = ours.get(r["instance"])
        if not base or r.get("mean_gap_%") is None or base.get("mean_gap_%") is None:
            continue
        if base["mean_gap_%"] > 0:
            r["gap_ratio"] = round(r["mean_gap_%"] / base["mean_gap_%"], 3)
        else:
            r["gap_ratio"] = 1.0 if r["mean_gap_%"] == 0 else "inf"
        if base.get("wall_s"):
            r["time_ratio"] = round(r["wall_s"] / base["wall_s"], 3)


def ours_cores():
    gpus = len(gpu_devices())
    return f"{cpu_count()} + {gpus} GPU" if gpus else cpu_count()


def ours(name: str, prob, seconds: float, seeds: int) -> list[dict]:
    out = []
    for s in range(seeds):
        run = solve_run(name, config="metaheur", strategy="auto", seconds=seconds, seed=s)
        if run.ok:
            out.append({"status": "ok", "cost": run.result.cost, "wall_s": run.result.time_s,
                        "note": f"strategy {run.result.strategy}, {run.result.parameters.get('islands')} islands"})
        else:
            out.append({"status": run.status})
    return out


def with_ours(kind: str, names, seconds_for, seeds: int):
    """For each instance of ``kind`` among ``names``: (name, problem, seconds, best known, pending
    rows begun with our own runs); instances of the other problem are skipped with a log line."""
    for name in names:
        prob = problem(name)
        if prob.kind != kind:
            log(f"peers: {name} is not a {kind.upper()} instance, skipped")
            continue
        seconds = seconds_for(prob)
        log(f"peers ({kind.upper()}): {name} (n = {prob.n}), {seconds} s per run")
        yield name, prob, seconds, prob_bks(prob), [(name, prob, "metaheur", ours_cores(), seconds,
                                                     ours(name, prob, seconds, seeds))]


def qap_rows(names, seeds, seconds_for, peers: Peers, tmp: Path) -> list[dict]:
    cores = cpu_count()
    exe = None
    if find_yardstick() is not None and have_gcc():
        exe = build_rots(tmp)
    rows = []
    for name, prob, seconds, bks, pending in with_ours("qap", names, seconds_for, seeds):
        flow, dist = tmp / f"{prob.name}_A.npy", tmp / f"{prob.name}_B.npy"
        np.save(flow, np.asarray(prob.flow))
        np.save(dist, np.asarray(prob.distance))
        for solver in ("scipy-2opt", "scipy-faq"):
            runs = []
            for s in range(seeds):
                res = peers.run(solver, {"flow": str(flow), "distance": str(dist), "seconds": seconds, "seed": s,
                                         "cores": 1}, timeout=1.2 * seconds + 10)
                if res["status"] == "ok":
                    res["cost"] = evaluate(prob, res["solution"])
                runs.append(res)
                log(f"  {name} {solver} seed {s}: {res.get('cost', res['status'])}")
                if res["status"].startswith("absent"):
                    break
            pending.append((name, prob, solver, 1, seconds, runs))
        if exe is None:
            why = "absent: yardstick rots.c not found" if find_yardstick() is None else "absent: no gcc"
            pending.append((name, prob, "rots.c", cores, seconds, [{"status": why}]))
        elif not prob.source or not Path(prob.source).is_file():
            pending.append((name, prob, "rots.c", cores, seconds,
                                  [{"status": "absent: rots.c needs a QAPLIB file"}]))
        else:
            runs = []
            for s in range(seeds):
                r = rots_best_of_cores(exe, prob.source, seconds, s, cores)
                runs.append({"status": "ok", "cost": r["best"], "wall_s": r["wall_s"],
                             "note": f"best of {r['runs']} runs of {r['iterations_each']:,} iterations"})
                log(f"  {name} rots.c seed {s}: {r['best']}")
            pending.append((name, prob, "rots.c", cores, seconds, runs))
        rows += settle(pending, bks)
    ratios(rows)
    return rows


def prob_bks(prob):
    from metaheur.problems import best_known

    entry = best_known(prob.name, prob.n)
    return entry.value if entry else None


def tsp_rows(names, seeds, seconds_for, peers: Peers, tmp: Path, max_matrix_n: int) -> list[dict]:
    cores = cpu_count()
    rows = []
    for name, prob, seconds, bks, pending in with_ours("tsp", names, seconds_for, seeds):
        matrix_path, why = None, ""
        if prob.n > max_matrix_n:
            why = f"skipped: needs a full matrix, n > --max-matrix-n {max_matrix_n}"
        else:
            try:
                m = prob.distance_matrix(budget_bytes=4 * max_matrix_n**2 + 1)
            except MetaheurError as exc:
                m, why = None, f"skipped: {exc}"
            if m is not None:
                matrix_path = tmp / f"{prob.name}_D.npy"
                np.save(matrix_path, m)
            elif not why:
                why = "skipped: no full distance matrix"
        for solver, used in (("fast_tsp", cores), ("elkai", 1), ("ortools", 1)):
            if matrix_path is None:
                pending.append((name, prob, solver, used, seconds, [{"status": why}]))
                continue
            runs = []
            timeout = (4 * seconds + 300) if solver == "elkai" else (1.5 * seconds + 120)
            for s in range(seeds):
                res = peers.run(solver, {"matrix": str(matrix_path), "seconds": seconds, "seed": s, "cores": cores},
                                timeout=timeout)
                if res["status"] == "ok":
                    try:
                        res["cost"] = evaluate(prob, res["solution"])
                    except MetaheurError as exc:
                        res = {"status": f"error: invalid tour ({exc})"}
                runs.append(res)
                log(f"  {name} {solver} seed {s}: {res.get('cost', res['status'])}")
                if res["status"].startswith("absent"):
                    break
            if solver == "fast_tsp" and not any("max_threads" in r.get("note", "") for r in runs):
                used = 1
            pending.append((name, prob, solver, used, seconds, runs))
        rows += settle(pending, bks)
    ratios(rows)
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tai12a and berlin52, 1 s (smoke test)")
    ap.add_argument("--qap", default=None, help=f"QAP instances (default {','.join(QAP)})")
    ap.add_argument("--tsp", default=None, help=f"TSP instances (default {','.join(TSP)})")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per solver (default 3; quick 1)")
    ap.add_argument("--base-seconds", type=float, default=10.0, help="B of the size-scaled time budget")
    ap.add_argument("--seconds", type=float, default=None, help="the same budget for every instance instead")
    ap.add_argument("--max-matrix-n", type=int, default=6000, help="largest n given to the matrix-based TSP peers")
    ap.add_argument("--peer-python", action="append", default=[], help="another Python to look for peers in")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"output folder (default {RESULTS}; --quick: a temporary folder)")
    args = ap.parse_args(argv)
    args.out = out_folder(args.out, args.quick)
    need_instances("peers")
    if args.quick:
        args.seconds = args.seconds or 1.0
    seeds = args.seeds or (1 if args.quick else 3)
    env = [p for p in os.environ.get("METAHEUR_PEER_PYTHON", "").split(os.pathsep) if p]
    peers = Peers([sys.executable, *args.peer_python, *env])
    qap_names, qap_missing = present(names_arg(args.qap, QAP, ["tai12a"], args.quick))
    tsp_names, tsp_missing = present(names_arg(args.tsp, TSP, ["berlin52"], args.quick))

    def seconds_for(prob) -> float:
        return args.seconds or budget_seconds(prob.kind, prob.n, args.base_seconds)

    one_thread_in_process()
    warm_pool(auto_workers())
    budget = f"{args.seconds} s per run" if args.seconds else (
        f"size-scaled budget, B = {args.base_seconds} s (QAP B*n/50, TSP B*n/1000, clipped to [B/2, 10B])")
    suffix = "_quick" if args.quick else ""
    with tempfile.TemporaryDirectory() as tmp:
        if qap_names:
            rows = qap_rows(qap_names, seeds, seconds_for, peers, Path(tmp))
            head = run_header(f"settings: {budget}; {seeds} seed(s); metaheur default strategy; peers' "
                                     f"Pythons: {', '.join(peers.pythons)}")
            if qap_missing:
                head.append(f"not present (skipped): {', '.join(qap_missing)}")
            write_table(rows, COLUMNS, "peers_qap" + suffix, head, args.out, "QAP: metaheur vs scipy and rots.c")
        if tsp_names:
            rows = tsp_rows(tsp_names, seeds, seconds_for, peers, Path(tmp), args.max_matrix_n)
            head = run_header(f"settings: {budget}; {seeds} seed(s); metaheur default strategy; matrix peers "
                                     f"up to n = {args.max_matrix_n}; peers' Pythons: {', '.join(peers.pythons)}")
            if tsp_missing:
                head.append(f"not present (skipped): {', '.join(tsp_missing)}")
            write_table(rows, COLUMNS, "peers_tsp" + suffix, head, args.out,
                        "TSP: metaheur vs fast-tsp, elkai (LKH-3), OR-Tools")
    if not qap_names and not tsp_names:
        sys.exit("peers: no instance present (set METAHEUR_INSTANCES)")


if __name__ == "__main__":
    main()
