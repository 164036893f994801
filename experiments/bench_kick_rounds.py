"""Kick rounds of a GPU island's local search (TSPOperators.improve on a GPU, problems/tsp/operators.py;
docs/gpu-model.md, "Kick rounds"): each round queued behind the last (``queued``, the island's
way) and, for comparison, each round's descent waited for and read back at its end (``waited``,
the way before issue 62's change), from the same children and seeds.

``--children`` tours of a uniform instance of ``--n`` cities (curve starts, as a GPU island's)
are brought to local optima once, then improved by ``--rounds`` kick rounds each way; the table
gives milliseconds a round (the rounds timed together, the first descent excluded), the
descent's passes, its looks at the deltas and the host's waits (read-backs and synchronisations)
a round (``queued`` waits only at the looks: one read-back each with candidate lists, two with
the full neighbourhoods of n <= 200; ``waited`` three times more a round), and whether the two
ways ended with the same tours (they must); every length is recomputed from scratch.

    python experiments/bench_kick_rounds.py [--device cuda:0] [--n 2000] [--children 300] [--rounds 20]
        [--seed 1] [--quick] [--out experiments/results]

Writes ``bench_kick_rounds.csv`` and ``.md`` (``--quick``: n = 200, 8 children, 4 rounds, into a
temporary folder unless ``--out``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from lib.report import header, out_folder, write_table

from metaheur.devices import Device, parse_device
from metaheur.engine.rng import stream_key
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems import uniform_tsp
from metaheur.problems.tsp import descent
from metaheur.problems.tsp.operators import TSPOperators

COLUMNS = ["rounds_as", "device", "n", "children", "rounds", "ms_per_round", "passes_per_round",
           "looks_per_round", "host_waits_per_round", "best", "same_tours"]
MODES = ("queued", "waited")
SIZES = {"n": 2000, "children": 300, "rounds": 20, "seed": 1}  # the command line's sizes, their defaults
QUICK = {"n": 200, "children": 8, "rounds": 4}  # --quick
ISLAND_LIMIT = 3600.0  # a time limit, as an island gives: each descent looks at its deltas after its first pass


class Counted:
    """The descent's passes, its looks at its deltas and the host's waits in it (read-backs and
    synchronisations) while it is in place (``with``)."""

    def __init__(self):
        self.passes = self.looks = self.waits = 0

    def __enter__(self) -> Counted:
        self._descend, self._improving = descent.TSPDescentBatch.descend, descent._Buffers.improving
        self._to_host, self._synchronize = descent.to_host, Device.synchronize

        def descend(batch, *args, **kwargs):
            out = self._descend(batch, *args, **kwargs)
            self.passes += out.extra["passes"]
            return out

        def improving(buf) -> bool:
            self.looks += 1
            return self._improving(buf)

        def to_host(array):
            self.waits += 1
            return self._to_host(array)

        def synchronize(device) -> None:
            self.waits += 1
            self._synchronize(device)

        descent.TSPDescentBatch.descend, descent._Buffers.improving = descend, improving
        descent.to_host, Device.synchronize = to_host, synchronize
        return self

    def __exit__(self, *exc) -> None:
        descent.TSPDescentBatch.descend, descent._Buffers.improving = self._descend, self._improving
        descent.to_host, Device.synchronize = self._to_host, self._synchronize


def kick_rounds(ops: TSPOperators, mode: str, starts: np.ndarray, keys: np.ndarray, rounds: int):
    """``rounds`` kick rounds from ``starts`` (local optima): (tours, lengths, seconds, counts)."""
    ops.device.synchronize()
    with Counted() as counted:
        batch, counting = ops._descent, descent.TSPDescentBatch.descend
        if mode == "waited":  # every round's descent waited for and read back at its end
            batch.descend = lambda *a, **kw: counting(batch, *a, **{**kw, "wait": True})
        try:
            t0 = time.perf_counter()
            tours, lengths, _ = ops.improve(starts, keys, kicks=rounds, time_limit=ISLAND_LIMIT, descended=True)
            seconds = time.perf_counter() - t0
        finally:
            vars(batch).pop("descend", None)
    return tours, lengths, seconds, np.array([counted.passes, counted.looks, counted.waits])


def rows(args: argparse.Namespace) -> list[dict]:
    device = parse_device(args.device)
    tsp = uniform_tsp(args.n, args.seed)
    ops = TSPOperators(tsp, device, IslandParams(ga=GAParams(population=args.children, offspring=args.children,
                                                             crossover="ox")))
    keys = stream_key(np.uint64(args.seed), np.arange(args.children, dtype=np.uint64))
    starts, _, _ = ops.improve(ops.random_tours(args.children, np.random.default_rng(args.seed)), keys, kicks=0)
    _, _, first_seconds, first_counts = kick_rounds(ops, "queued", starts, keys, 0)
    out, first = [], None
    for mode in MODES:
        tours, lengths, seconds, counts = kick_rounds(ops, mode, starts, keys, args.rounds)
        if not np.array_equal(lengths, [tsp.tour_length(t) for t in tours]):
            raise SystemExit(f"{mode}: a reported length differs from its tour's")
        first = first if first is not None else tours
        passes, looks, waits = (counts - first_counts) / args.rounds
        out.append({"rounds_as": mode, "device": device.name, "n": args.n, "children": args.children,
                    "rounds": args.rounds, "ms_per_round": f"{1000 * (seconds - first_seconds) / args.rounds:.2f}",
                    "passes_per_round": f"{passes:.1f}", "looks_per_round": f"{looks:.1f}",
                    "host_waits_per_round": f"{waits:.1f}",
                    "best": int(lengths.min()), "same_tours": "yes" if np.array_equal(first, tours) else "NO"})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda:0")
    for name, default in SIZES.items():
        ap.add_argument(f"--{name}", type=int, default=default)
    ap.add_argument("--quick", action="store_true", help=", ".join(f"{k} = {v}" for k, v in QUICK.items()))
    ap.add_argument("--out", default=None, help="folder of the tables (default experiments/results)")
    args = ap.parse_args(argv)
    if args.quick:
        vars(args).update(QUICK)
    table = rows(args)
    write_table(table, COLUMNS, "bench_kick_rounds",
                header(f"uniform instance, seed {args.seed}; the same children and seeds each way"),
                out_folder(args.out, args.quick),
                title="Kick rounds of a GPU island: queued behind each other and waited for, side by side")
    return 0 if all(r["same_tours"] == "yes" for r in table) else 1


if __name__ == "__main__":
    sys.exit(main())
