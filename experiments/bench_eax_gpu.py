"""EAX generations of a GPU island, the two ways of ``ILSParams.eax_kernel`` side by side
(``classic`` and ``fused``, problems/tsp/eax.py; docs/gpu-model.md, "EAX generations").

One population of ``--pop`` tours of a uniform instance of ``--n`` cities, built as a GPU island
builds it (:class:`TSPOperators`: curve starts on a GPU, brought to local optima by the device's
descent), then ``--generations`` generations of the EAX island's own step
(:func:`metaheur.problems.tsp.eax_island.eax_generation`: entropy-preserving selection for the
first 70 %, greedy after) with each variant, from the same population and the same seeds. The
table gives milliseconds a generation (all generations timed together, the device synchronised
at the end), children built, members replaced, and whether the variants ended with the same
population and costs (they must: the same children, the same table); every cost is recomputed
from scratch.

    python experiments/bench_eax_gpu.py [--device cuda:0] [--n 10000] [--pop 300] [--tries 30]
        [--generations 20] [--seed 1] [--quick] [--out experiments/results]

Writes ``bench_eax_gpu.csv`` and ``.md`` (``--quick``: n = 200, 8 members, 4 generations, into a
temporary folder unless ``--out``).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from lib.report import header, out_folder, write_table

from metaheur.devices import parse_device
from metaheur.engine.rng import stream_key
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems import uniform_tsp
from metaheur.problems.tsp.eax import EAXGenerations
from metaheur.problems.tsp.eax_island import EAX_QUADRANT, eax_generation
from metaheur.problems.tsp.operators import TSPOperators
from metaheur.problems.tsp.params import EAX_KERNELS, EAXParams

COLUMNS = ["kernel", "device", "n", "pop", "tries", "generations", "ms_per_generation", "children_built",
           "replaced", "best", "same_as_classic"]


@dataclass
class Population:
    """What :func:`eax_generation` reads and writes of an island's state."""

    population: np.ndarray
    costs: np.ndarray
    stale: int = 0
    ls_iterations: int = 0


@dataclass
class Island:
    """What :func:`eax_generation` reads of an island's operators."""

    eax: EAXGenerations


def first_population(tsp, device, params: IslandParams, pop: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``pop`` local optima, started and descended as the device's EAX island starts them."""
    ops = TSPOperators(tsp, device, params, ls_budget=0, quadrant=EAX_QUADRANT)
    starts = ops.random_tours(pop, np.random.default_rng(seed))
    tours, costs, _ = ops.improve(starts, stream_key(np.uint64(seed), np.arange(pop, dtype=np.uint64)), kicks=0)
    return tours, np.asarray(costs, dtype=np.int64)


def generations(tsp, device, params: IslandParams, kernel: str, tours: np.ndarray, costs: np.ndarray,
                count: int, seed: int) -> tuple[Population, float, int]:
    """``count`` generations with ``kernel`` from the population: (final state, seconds, children built)."""
    ops = TSPOperators(tsp, device, params, ls_budget=0, quadrant=EAX_QUADRANT)
    gens = EAXGenerations(tsp, ops.data, ops.neigh, device, params.search(EAXParams).tries, kernel)
    state = Population(tours.copy(), costs.copy())
    gens.begin(state.population)
    rng = np.random.default_rng(seed)
    size = len(tours)
    device.synchronize()
    t0 = time.perf_counter()
    for g in range(count):
        keys = stream_key(np.uint64(seed), np.arange(g * size, (g + 1) * size, dtype=np.uint64))
        eax_generation(Island(gens), state, keys, rng.permutation(size), g / count)
    device.synchronize()
    return state, time.perf_counter() - t0, state.ls_iterations


def rows(args: argparse.Namespace) -> list[dict]:
    device = parse_device(args.device)
    tsp = uniform_tsp(args.n, args.seed)
    params = IslandParams(ga=GAParams(population=args.pop, offspring=1, crossover="eax"),
                          eax=EAXParams(tries=args.tries))
    tours, costs = first_population(tsp, device, params, args.pop, args.seed)
    out, first = [], None
    for kernel in EAX_KERNELS:
        state, seconds, built = generations(tsp, device, params, kernel, tours, costs, args.generations, args.seed)
        exact = np.array([tsp.tour_length(t) for t in state.population])
        if not np.array_equal(exact, state.costs):
            raise SystemExit(f"{kernel}: a reported cost differs from its tour's length")
        first = first or state
        same = np.array_equal(first.population, state.population) and np.array_equal(first.costs, state.costs)
        out.append({"kernel": kernel, "device": device.name, "n": args.n, "pop": args.pop, "tries": args.tries,
                    "generations": args.generations,
                    "ms_per_generation": f"{1000 * seconds / max(args.generations, 1):.2f}",
                    "children_built": built, "replaced": int((state.population != tours).any(axis=1).sum()),
                    "best": int(state.costs.min()), "same_as_classic": "yes" if same else "NO"})
        print(f"  {kernel}: {out[-1]['ms_per_generation']} ms a generation, best {out[-1]['best']}, "
              f"same as classic: {out[-1]['same_as_classic']}", file=sys.stderr)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--pop", type=int, default=300)
    ap.add_argument("--tries", type=int, default=30)
    ap.add_argument("--generations", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="n = 200, 8 members, 4 generations")
    ap.add_argument("--out", default=None, help="folder of the tables (default experiments/results)")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.pop, args.generations = 200, 8, 4
    table = rows(args)
    head = header(f"uniform instance, seed {args.seed}; the same population and seeds for each kernel")
    write_table(table, COLUMNS, "bench_eax_gpu", head, out_folder(args.out, args.quick),
                title="EAX generations of a GPU island: eax_kernel classic and fused side by side")
    return 0 if all(r["same_as_classic"] == "yes" for r in table) else 1


if __name__ == "__main__":
    sys.exit(main())
