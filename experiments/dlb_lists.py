"""The work of the TSP descent's don't-look-bit pass (``TSPDescentBatch(several_kernel="dlb")``,
issue 62) counted pass by pass on the CPU build, the counts the GPU model of docs/gpu-model.md
takes: positions looked at (the work list; every position on a full pass), improving moves among
them, moves made, positions claimed (the ranges of the live moves, summed over the claim rounds)
and claim rounds (the rule of tsp_dlb_apply replayed in numpy on the pass's moves), against the
``classic`` pass, which looks at every position every pass.

One tour of a generated uniform EUC_2D instance (seed 1) per row, 10 neighbours, from a random or
a Hilbert-curve tour (metaheur.problems.tsp.starts.curve_tours) to the local optimum.

    python experiments/dlb_lists.py [--sizes 1000 10000] [--quick] [--out DIR]

Writes ``dlb_lists.csv`` and ``.md`` (``dlb_lists_quick``: n = 300) under --out (default
experiments/results; a temporary folder with --quick).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib.report import out_folder, run_header, write_table

from metaheur.problems import uniform_tsp
from metaheur.problems.tsp.descent import TSPDescentBatch
from metaheur.problems.tsp.starts import curve_tours

COLUMNS = ["n", "start", "passes", "full_passes", "classic_passes", "looked/pass", "improving/pass", "moves/pass",
           "claimed/pass", "rounds/pass", "max_rounds", "length", "classic_length"]
LIVE = 1  # MH_DLB_LIVE: state of a listed position whose move improves


def spans(n: int, moves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, length) of each move's cyclic position range (mh_move_span), moves m x 4."""
    a, seg, b = moves[:, 0], moves[:, 1], moves[:, 2]
    inner = b - a
    after = (b - (a + seg - 1)) % n
    before = n - seg - after
    two_short = inner <= n - inner
    first = np.where(seg == 0, np.where(two_short, a, b), np.where(after <= before, (a - 1) % n, b))
    length = np.where(seg == 0, np.where(two_short, inner + 2, n - inner + 2),
                      np.where(after <= before, seg + after + 2, before + seg + 2))
    return first, np.minimum(length, n)


def claim_rounds(n: int, keys: np.ndarray, first: np.ndarray, length: np.ndarray) -> tuple[int, int, int]:
    """(rounds, positions claimed over them, winners) of tsp_dlb_apply's claims on these moves."""
    live = np.ones(len(keys), dtype=bool)
    rounds = claimed = won_total = 0
    while live.any():
        rounds += 1
        idx = np.flatnonzero(live)
        owner_of = [(first[m] + np.arange(length[m])) % n for m in idx]
        cells = np.concatenate(owner_of)
        claimed += len(cells)
        claim = np.full(n, np.iinfo(np.int64).max)
        np.minimum.at(claim, cells, np.repeat(keys[idx], length[idx]))
        won = np.array([(claim[c] == keys[m]).all() for m, c in zip(idx, owner_of, strict=True)])
        winners = set(keys[idx[won]].tolist())
        won_total += len(winners)
        for m, c, w in zip(idx, owner_of, won, strict=True):
            if w or any(int(k) in winners for k in claim[c]):
                live[m] = False
    return rounds, claimed, won_total


def row_for(tsp, name: str, tour: np.ndarray) -> dict:
    n = tsp.n
    search = TSPDescentBatch(tsp, k=10, several_kernel="dlb")
    tours = tour[None, :].astype(np.int32).copy()
    cost = np.array([tsp.tour_length(tour)], dtype=np.int64)
    search.descend(tours.copy(), cost.copy(), max_passes=0)  # buffers, every position listed
    buf = search._buffers
    stats = []
    while int(buf.count[0]) != -2:
        count = int(buf.count[0])
        search._pass(tours, cost, buf)
        anchors = np.arange(n) if count == -1 else buf.anchor[0][:count]
        live = anchors[buf.state[0][anchors] != 0]
        keys = buf.delta_at[0][live] * n + live
        first, length = spans(n, buf.move_at[0][live])
        rounds, claimed, won = claim_rounds(n, keys, first, length) if len(live) else (0, 0, 0)
        made = int((buf.state[0][live] == 2).sum())
        assert won == made, (won, made)  # the replay takes the kernel's moves
        stats.append((len(anchors), len(live), made, claimed, rounds, count == -1))
    assert cost[0] == tsp.tour_length(tours[0])
    classic = TSPDescentBatch(tsp, k=10).run(tour[None, :])
    s = np.array(stats, dtype=float)
    return {"n": n, "start": name, "passes": len(stats), "full_passes": int(s[:, 5].sum()),
            "classic_passes": classic.extra["passes"], "looked/pass": round(s[:, 0].mean(), 1),
            "improving/pass": round(s[:, 1].mean(), 1), "moves/pass": round(s[:, 2].mean(), 1),
            "claimed/pass": round(s[:, 3].mean(), 1), "rounds/pass": round(s[:, 4].mean(), 2),
            "max_rounds": int(s[:, 4].max()), "length": int(cost[0]), "classic_length": int(classic.best_costs[0])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    sizes = args.sizes or ([300] if args.quick else [1000, 10000])
    rows = []
    for n in sizes:
        tsp = uniform_tsp(n, seed=1)
        starts = {"curve": curve_tours(tsp.coords, 1, np.random.default_rng(1))[0]}
        if n <= 2000:  # from random tours a descent of 10,000 cities takes thousands of passes
            starts = {"random": np.random.default_rng(1).permutation(n), **starts}
        for name, tour in starts.items():
            rows.append(row_for(tsp, name, tour))
            print(rows[-1], flush=True)
    head = run_header(f"settings: sizes {sizes}, k = 10, one tour, cpu device")
    write_table(rows, COLUMNS, "dlb_lists_quick" if args.quick else "dlb_lists", head,
                out_folder(args.out, args.quick), title="The don't-look-bit pass: work a pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
