"""The flow shop's island configuration: which islands run the iterated greedy, measured on Taillard's
instances at n x (m / 2) x 30 ms of wall time on this machine's cores.

Configurations (every island alike, one per core):

* ``ga``: the engine's default for a problem whose first move is an insertion: GA islands
  (population 20, 10 children a generation, order crossover) whose children are improved by the
  iterated greedy (n / 2 iterations each);
* ``ig``: iterated-greedy chains (crossover ``none``: each island's chain goes on for n / 2
  iterations a generation, from where it stood while its member is the best it left, else from the
  member, a migrant; the best migrates);
* ``ig-long``: the same chains going on for 5 n iterations a generation;
* ``ig-50n``: ``ig-long`` going on for 50 n iterations a generation (the island's best migrates at
  the end of the epoch);
* ``ig-nomig``: ``ig-long`` without migration (independent chains, the best of them counted);
* ``mix``: islands of two kinds (``SolveParams.ls_islands``, the flow shop's
  ``local_search_island``): half the cores, rounded up, run ``ig-50n`` chains, the others GA
  islands of ``ga`` (children improved by n / 2 iterations of the iterated greedy);
* ``mix-ls``: ``mix`` whose GA children are improved by an insertion local search instead
  (first-improvement insertion descent and n / 2 kicks of 3 random insertions, each followed by
  the descent);
* ``default``: the flow shop's default (``PFSP.default_params``); ``ties``: the default whose
  greedy insertions break ties by the idle time (``PermSearchParams(ties=True)``, Fernandez-Viagas
  and Framinan 2014); ``t07`` and ``ties-t07``: the same two at the temperature T = 0.7;
* ``nomig``: the default without migration (independent chains, the best of them counted);
  ``500n``: the default going on for 500 n iterations a generation (longer epochs, so fewer
  exchanges);
* ``own``: ``solve()`` given no parameters (the default; a GPU island then runs
  ``PFSP.gpu_chains`` chains, where ``default`` passes the default GA parameters and gets one);
* ``chainsK`` (``chains1``, ``chains132``, ...): the default with K chains an island, continued
  side by side (one kernel launch, a block each on a GPU; ``--strategy gpu`` measures a GPU
  island).

    python experiments/pfsp_method.py [--quick] [--instances ta001,ta011,...] [--seeds 2]
        [--configs ga,ig,ig-long] [--strategy auto] [--stem pfsp_method] [--out experiments/results]

The table gives the RPD above the upper bound per instance and configuration (mean over seeds)
and its mean (ARPD) per configuration; with ``--iterations``, also each configuration's
local-search iterations a second (iterated-greedy iterations and improving moves, all islands).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib.report import out_folder, run_header, write_table

import metaheur
from metaheur.devices import cpu_count
from metaheur.islands.params import with_crossover
from metaheur.islands.perm_operators import default_perm_budget
from metaheur.problem.permutation import PermutationProblem
from metaheur.problems.pfsp import taillard

DEFAULT_INSTANCES = "ta001,ta011,ta021,ta031,ta041,ta051,ta061,ta071,ta081"
CONFIGS = ("ga", "ig", "ig-long", "ig-50n", "ig-nomig", "mix", "mix-ls", "default", "ties", "t07", "ties-t07", "nomig",
           "500n", "own")
INSERTION_LS = metaheur.PermSearchParams(method="ils", move="insert", kick_move="insert")


def params_for(config: str, problem, strategy: str = "auto") -> metaheur.SolveParams:
    return replace(_params_for(config, problem), strategy=strategy)


def _params_for(config: str, problem) -> metaheur.SolveParams:
    if config == "own":
        return metaheur.SolveParams()
    if config.startswith("chains"):
        own = problem.default_params()
        chains = int(config[len("chains"):])
        return metaheur.SolveParams(ga=replace(own.ga, population=chains, offspring=chains), searches=[own.perm])
    if config in ("default", "ties", "t07", "ties-t07"):
        own = problem.default_params()
        perm = replace(own.perm, ties=config.startswith("ties"), temperature=0.7 if config.endswith("t07") else 0.4)
        return metaheur.SolveParams(ga=own.ga, searches=[perm])
    if config in ("nomig", "500n"):
        own = problem.default_params()
        if config == "nomig":
            return metaheur.SolveParams(ga=own.ga, searches=[own.perm], migration=metaheur.MigrationParams(interval=0))
        return metaheur.SolveParams(ga=replace(own.ga, ls_budget=500 * problem.n), searches=[own.perm])
    ga = PermutationProblem.default_params(problem).ga  # the engine's default for every user problem
    if config.startswith("mix"):
        cores = cpu_count()
        perm = INSERTION_LS if config == "mix-ls" else None
        if perm is not None:
            ga = replace(ga, ls_budget=default_perm_budget(perm.method, problem.n))
        return metaheur.SolveParams(ga=ga, searches=[perm], ls_islands=cores - cores // 2)
    if config == "ig":
        ga = with_crossover(ga, "none")
    elif config != "ga":
        ga = replace(with_crossover(ga, "none"), ls_budget=(50 if config == "ig-50n" else 5) * problem.n)
    migration = metaheur.MigrationParams(interval=0) if config == "ig-nomig" else None
    return metaheur.SolveParams(ga=ga, migration=migration)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="ta001 and ta031, one seed")
    ap.add_argument("--instances", default=DEFAULT_INSTANCES)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--ms", type=float, default=30.0, help="milliseconds per n x m / 2")
    ap.add_argument("--strategy", default="auto", help="metaheur's strategy (auto, cpu-islands, gpu, hybrid)")
    ap.add_argument("--iterations", action="store_true", help="also local-search iterations a second")
    ap.add_argument("--stem", default="pfsp_method", help="name of the table files")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    names = ["ta001", "ta031"] if args.quick else [s for s in args.instances.split(",") if s]
    seeds = 1 if args.quick else args.seeds
    configs = [c for c in args.configs.split(",") if c]
    if any(c not in CONFIGS and not re.fullmatch(r"chains[1-9][0-9]*", c) for c in configs):
        sys.exit(f"pfsp_method: configurations are {', '.join(CONFIGS)} and chainsK")
    head = run_header(f"settings: {seeds} seed(s), n x (m / 2) x {args.ms:g} ms per run, metaheur.solve with the "
                  f"configuration's GA parameters, strategy {args.strategy}, everything else default; cells: RPD "
                  "above the upper bound (%), mean over seeds" +
                  ("; `CONFIG it/s`: local-search iterations a second, mean over seeds" if args.iterations else ""))
    rows, rpd = [], {c: [] for c in configs}
    for name in names:
        problem = taillard(name)
        ub = problem.bounds()[0]
        seconds = problem.n * problem.m / 2 * args.ms / 1000
        row = {"instance": name, "n x m": f"{problem.n}x{problem.m}", "seconds": round(seconds, 2), "upper_bound": ub}
        for config in configs:
            values, rates = [], []
            for seed in range(seeds):
                r = metaheur.solve(problem, time_limit=seconds, seed=seed,
                                   params=params_for(config, problem, args.strategy))
                values.append(problem.value(r.permutation))
                rates.append(r.search_iterations / r.time_s)
                print(f"  {name} {config} seed {seed}: {values[-1]}, {rates[-1]:,.0f} ls-it/s", flush=True)
            row[config] = round(statistics.mean(100 * (v - ub) / ub for v in values), 3)
            if args.iterations:
                row[f"{config} it/s"] = round(statistics.mean(rates))
            rpd[config].append(row[config])
        rows.append(row)
    rows.append({"instance": "ARPD", **{c: round(statistics.mean(rpd[c]), 3) for c in configs}})
    stem = args.stem + ("_quick" if args.quick else "")
    columns = [*configs, *([f"{c} it/s" for c in configs] if args.iterations else [])]
    write_table(rows, ["instance", "n x m", "seconds", "upper_bound", *columns], stem, head,
                out_folder(args.out, args.quick), "PFSP: island configurations")


if __name__ == "__main__":
    main()
