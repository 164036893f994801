"""Expected speed on an H200: for each kernel a GPU island launches, the bytes moved and the
operations per unit of work (a move, a delta entry, an iteration, a crossover), and the bound that
memory bandwidth and arithmetic throughput put on units per second (docs/gpu-model.md). A
measured GPU figure divided by the bound is the fraction of the limit it reaches.

Machine (NVIDIA H200 SXM, compute capability 9.0): 132 SMs at 1.98 GHz; HBM3e 4.8 TB/s by the
datasheet (the device notes measured 4.3 TB/s on a device-to-device copy); per SM and clock 64
int32 operations (add, compare, min/max, 32-bit multiply-add) and 64 fp64 operations (add,
multiply, fused multiply-add): 16.7e12 int32 op/s and 16.7e12 fp64 op/s. A 64-bit integer add or
a 32x32->64-bit multiply-add counts 2 int32 operations; a double square root 10 fp64 operations
(reciprocal square root and Newton steps); a double-to-int conversion 4 (it runs at a quarter of
the fp64 rate on sm_90; the third read of the H200 figures). The TSP builds run without fused
multiply-add (--fmad=false), so x*x + y*y is 3 operations.

Bytes: from DRAM when the data a unit touches cannot stay in the 50 MB L2 across the batch (the
QAP tables of 1,024 searches, the delta matrices); the TSP kernels read coordinates, tours and
neighbour lists that fit in L2 for the sizes below, so their bytes are through L2 and the
bandwidth bound is not the binding one. Kernels with one working thread per block use one lane a
warp: their arithmetic bound is 1/32 of the chip's. ``useful``: the fraction of the lanes' loop
iterations that do a unit of work (the rest skip an invalid index); the arithmetic bounds are
scaled by it.

    python experiments/gpu_model.py [--quick] [--out experiments/results]

Writes ``gpu_model.csv`` and ``.md`` (``--quick``: the same table into a temporary folder unless
``--out``; nothing is measured).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib.report import header, out_folder, write_table

SMS, CLOCK_HZ = 132, 1.98e9
HBM_BYTES_S = 4.8e12  # datasheet; 4.3e12 measured on a copy
INT32_OPS_S = SMS * 64 * CLOCK_HZ
FP64_OPS_S = SMS * 64 * CLOCK_HZ
DRAM_LATENCY_S = 0.75e-6  # a dependent round trip to DRAM under load (fits the H200's 1, 64, 1,024-search tabu rows)
L2_LATENCY_S = 0.3e-6  # a dependent round trip to L2 (fits the H200's delta-update launch: 120 us)
SQRT, DIST_INT = 10, 6  # fp64 ops of a double sqrt; int ops of loading two cities' coordinates (index maths)
TO_INT = 4  # fp64-op equivalents of a double-to-int conversion (a quarter of the fp64 rate on sm_90)
#: fp64 operations of one EUC_2D distance: 2 differences, 2 products, 1 sum, the root, +0.5, to int.
EUC_FP64 = 2 + 2 + 1 + SQRT + 1 + TO_INT
SECTOR = 32  # bytes of the L2 sector a scattered load moves, however few of them it uses


@dataclass(frozen=True)
class Model:
    """One kernel's cost per unit of work at one size: bytes (DRAM, or L2 where stated), int32
    and fp64 operations, and the lanes of a warp it uses (32, or 1 for one thread per block)."""

    kernel: str
    unit: str
    size: str
    bytes: float
    int_ops: float
    fp64_ops: float
    memory: str  # "DRAM" or "L2"
    lanes: int = 32
    basis: str = ""
    useful: float = 1.0  # the fraction of the lanes' loop iterations that do a unit of work
    round_trips: float = 0.0  # dependent memory round trips a unit waits for (0: not latency-bound)
    resident: float = 0.0  # units in flight on the whole chip (resident searches)
    latency_s: float = DRAM_LATENCY_S  # the round trips' latency

    def bounds(self) -> dict:
        lane = self.lanes / 32 * self.useful
        bw = HBM_BYTES_S / self.bytes if self.memory == "DRAM" and self.bytes else float("inf")
        ints = INT32_OPS_S * lane / self.int_ops if self.int_ops else float("inf")
        fps = FP64_OPS_S * lane / self.fp64_ops if self.fp64_ops else float("inf")
        lat = self.resident / (self.round_trips * self.latency_s) if self.round_trips else float("inf")
        bound = min(bw, ints, fps, lat)
        limit = ("memory" if bound == bw else "int32" if bound == ints else "fp64" if bound == fps else "latency")
        return {"bw_bound_per_s": bw, "int_bound_per_s": ints, "fp64_bound_per_s": fps, "latency_bound_per_s": lat,
                "bound_per_s": bound, "limited_by": limit + ("" if self.lanes == 32 else " (1 lane a warp)")}


#: Dependent DRAM round trips of one tabu iteration (the third read of the H200 figures,
#: ../shared/GPU_REVIEW.md): qap_tabu_run walks the triangle row by row, a min pass then a locate
#: pass a row, unbatched update loads, a serial O(n) sums loop and thread 0's delta_rows (about
#: 130); qap_tabu_stream's threads own pairs (independent loads), the update fused with the next
#: scan, the sums split between thread groups, the pair (r, s) summed by the block (about 20).
TABU_ROUND_TRIPS = {"qap_tabu_run": 130, "qap_tabu_stream": 20}
TABU_RESIDENT = 4 * SMS  # n = 100: blocks of 32 x 4 threads, 4 resident a multiprocessor (registers)


def tabu_models(n: int, pairs: float) -> list[Model]:
    """Both tabu kernels' iteration at size n with 1,024 searches: the bytes of qap_tabu_run's
    count (the same for both: the same tables), and the latency of their dependent round trips."""
    out = []
    for kernel, trips in TABU_ROUND_TRIPS.items():
        out += [
            Model(kernel, "iteration of one search", f"n={n}, int32 deltas, asymmetric",
                  # scan: d, tmin, lpick (4 B each) per pair; update: d read+written (8 B) per pair;
                  # 2n pairs by the O(n) sums: bp and bpt rows (a, at are shared by all searches: L2)
                  pairs * (12 + 8) + n * n * 8, pairs * (7 + 10) + n * n * 10, 0, "DRAM",
                  round_trips=trips, resident=TABU_RESIDENT,
                  basis=f"scan 12 B + 7 ops a pair, O(1) update 8 B + 10 ops a pair, O(n) sums of the 2n pairs "
                        f"touching the move 8 B + 10 ops per (k, m); {trips} dependent round trips of "
                        f"{DRAM_LATENCY_S * 1e6:g} us for {TABU_RESIDENT} resident searches"),
            Model(kernel, "iteration of one search", f"n={n}, int32 deltas, symmetric",
                  pairs * (12 + 8) + n * n * 4, pairs * (7 + 5) + n * n * 6, 0, "DRAM",
                  round_trips=trips, resident=TABU_RESIDENT, basis="as above; the symmetric sums read bp only"),
        ]
    return out


def qap_models(n: int = 100) -> list[Model]:
    """The QAP kernels at size n (1,024 searches: their tables stay in DRAM)."""
    pairs = n * (n - 1) / 2
    return [
        # qap_delta_update / step 3 of the tabu iteration: read and write each entry; operands
        # u[i], v[i] in registers, u[j], v[j] from L1/shared; (ui-uj)*(vi-vj)+(u2i-u2j)*(v2i-v2j)
        Model("qap_delta_update", "delta entry", f"n={n}, int64 deltas", 16, 4 + 2 * 2 + 2 + 2, 0,
              "DRAM", basis="8 B read + 8 B written; 4 differences, 2 widening multiply-adds, a 64-bit add "
                            "(asymmetric; symmetric: half the operations)"),
        *delta_update_launches(n, pairs),
        Model("qap_tabu_run: O(1) update", "delta entry", f"n={n}, int32 deltas (MH_QAP_DELTA32), symmetric", 8,
              2 + 1 + 1 + 1, 0, "DRAM", basis="4 B read + 4 B written; 2 differences, a multiply, a shift, an add"),
        Model("qap_best_move", "move", f"n={n}", 16, 8, 0, "DRAM",
              basis="8 B delta + 2 x 4 B tabu entries; 2 compares, a select, a 64-bit add, argmin step"),
        *tabu_models(n, pairs),
        Model("perm_crossover", "child", f"n={n}", 4 * 4 * n, 20 * n, 0, "DRAM", lanes=1,
              basis="two parents read, child and scratch written (4 B a city each); one thread a child"),
        Model("perm_mutate", "child", f"n={n}", 8 * n, 10 * n, 0, "DRAM", lanes=1,
              basis="a child read and written; one thread a child"),
    ]


def delta_update_launches(n: int, pairs: float) -> list[Model]:
    """A whole delta update of 1,024 solutions (phases 2 and 3) in entries of the triangle a
    second. Phase 3 recomputes the 2n - 3 pairs touching the move from sums over m: in
    qap_delta_update one thread a pair, a chain of n dependent steps of scattered L2 loads (264
    solutions resident: 2 blocks a multiprocessor), which sets the launch's time (120 us measured
    on the H200: 4.2e10 entries/s); in qap_delta_update_stream the block's row sums, the m range
    split between nt / n groups (2 at n = 100) and about 2 loads in flight a thread: a chain of n / 4."""
    resident = 2 * SMS * pairs
    return [
        Model(kernel, "delta entry (whole update)", f"n={n}, int64 deltas, phase 3 included", 16, 10, 0, "DRAM",
              round_trips=chain, resident=resident, latency_s=L2_LATENCY_S,
              basis=f"phase 2 16 B + 10 ops an entry; phase 3 a chain of {chain:g} dependent L2 round trips "
                    f"({L2_LATENCY_S * 1e6:g} us) a solution, 264 solutions resident")
        for kernel, chain in (("qap_delta_update", n), ("qap_delta_update_stream", n / 4))
    ]


#: An EAX generation of a GPU island: C pairs (MAX_POPULATION of problems/tsp/eax_island.py), each
#: crossing one thread's chain of dependent loads; a frequency-table row holds EAX_ROW distinct
#: neighbours (an assumption: at most 2P, few in a converged population); MH_FREQ_SCAN recorded
#: cities in flight a thread in tsp_eax_freq_accept (kernels/tsp/tsp_eax.cu).
EAX_PAIRS, EAX_ROW, EAX_SCAN = 300, 8, 8
EAX_CHAIN = 3  # dependent round trips a city of tsp_eax: the child's walk (2), the O(n) set-up loops (1)
#: tsp_eax_block's thread 0, whose chain is what stays sequential: the AB-cycle walk over the
#: cities of G_AB (a share EAX_GAB of n once the population has converged, an assumption; 2 round
#: trips a city), the scan of the chunk counts, the sorted run ends (a few hundred)
EAX_GAB, EAX_BLOCK_THREADS = 0.05, 128
#: Thread 0's children in both kernels: the island's 30 tries, each about EAX_CHILD_TRIPS dependent
#: round trips (its E-set applied, sub-tours traced and merged over the neighbour lists, taken
#: back: an assumption for one AB-cycle of a converged population)
EAX_TRIES, EAX_CHILD_TRIPS = 30, 100


def eax_models(n: int) -> list[Model]:
    """The EAX kernels of a GPU island at size n: the crossover (one thread a pair, a chain of
    about EAX_CHAIN dependent DRAM round trips a city, C pairs in flight) and the two updates of
    the edge-frequency table, per recorded change (a city whose neighbours a replacing child
    changes): ``tsp_eax_freq`` (classic: one block a city, thread 0, the host groups the changes
    and reads the overflow back) and ``tsp_eax_freq_accept`` (fused: one launch, every thread
    reads every recorded city and applies those of its own; no parallelism across changes)."""
    entry = 20 + 2 * EAX_ROW * 4 + 2 * 4  # the change, the row's neighbours scanned, a count and the length
    entry_ops = 4 * EAX_ROW + 20
    return [
        Model("tsp_eax", "crossover (one child)", f"n={n}, k=10", 4 * 21 * n * 2 + 8 * n, 120 * n, 2 * EUC_FP64 * n,
              "DRAM", lanes=1, round_trips=EAX_CHAIN * n + EAX_TRIES * EAX_CHILD_TRIPS, resident=EAX_PAIRS,
              basis="21n ints of scratch written and read, both parents read; about 120 int ops a city "
                    "(AB-cycles, E-set, sub-tours, merges over the neighbour lists); one thread a pair; "
                    f"about {EAX_CHAIN} dependent DRAM round trips a city (the child's walk through the slots "
                    f"and A's positions, the set-up loops) and {EAX_CHILD_TRIPS} a child of {EAX_TRIES}, {EAX_PAIRS} "
                    "pairs in flight"),
        Model("tsp_eax_block", "crossover (one child)", f"n={n}, k=10, {EAX_BLOCK_THREADS} threads a pair",
              4 * 21 * n * 2 + 8 * n, 120 * n, 2 * EUC_FP64 * n, "DRAM", lanes=32, useful=1 / 2,
              round_trips=2 * EAX_GAB * n + EAX_BLOCK_THREADS + 3 * n / EAX_BLOCK_THREADS + EAX_TRIES * EAX_CHILD_TRIPS,
              resident=EAX_PAIRS,
              basis="tsp_eax's bytes and operations; the set-up, masks, list of G_AB's cities, the child's copy "
                    "and length by the block (half the lanes' iterations useful: the rest is thread 0's); "
                    f"thread 0's chain: the AB-cycle walk over {EAX_GAB:.0%} of the cities (2 round trips each), "
                    f"the scan of {EAX_BLOCK_THREADS} chunk counts, 3 block-wide passes of n / threads, "
                    f"{EAX_CHILD_TRIPS} a child of {EAX_TRIES}"),
        Model("tsp_eax_freq", "recorded change", f"n={n}, rows of {EAX_ROW}", entry, entry_ops, 0, "DRAM", lanes=1,
              round_trips=3, resident=32 * SMS,
              basis=f"the change (20 B), its city's row of {EAX_ROW} neighbours scanned, a count and the length "
                    "written; thread 0 of one block a city, 32 resident blocks an SM; 3 dependent round trips "
                    "(classic: the host sorts the changes by city, uploads them and reads the overflow back)"),
        Model("tsp_eax_freq_accept", "recorded change", f"n={n}, rows of {EAX_ROW}", entry, 4 * n + entry_ops, 0,
              "L2", round_trips=1 / EAX_SCAN, resident=1, latency_s=L2_LATENCY_S,
              basis=f"every one of the n threads reads the recorded city and compares it with its own (4 ops), "
                    f"the owner applies it as tsp_eax_freq does; one chain through every change, {EAX_SCAN} "
                    "loads in flight (fused: nothing prepared or read back by the host)"),
    ]


def two_opt_full_useful(n: int, warp: int = 32) -> float:
    """Valid moves over the column iterations of a warp's lanes in ``tsp_2opt_full``: row i runs
    the columns from i + 2 rounded down to a multiple of 32 up to n - 1, ``warp`` at a time."""
    lanes = sum(-(-(n - ((i + 2) & ~31)) // warp) * warp for i in range(n) if (i + 2) & ~31 < n)
    return n * (n - 3) / 2 / lanes


#: Claim rounds a pass of tsp_dlb_apply, counted on the CPU build (experiments/dlb_lists.py: n =
#: 10,000 from a curve tour, results/dlb_lists.md).
DLB_ROUNDS = 1.33


def tsp_models(n: int = 10_000, k: int = 10) -> list[Model]:
    """The TSP kernels of a GPU island at size n with k neighbours (EUC_2D coordinates)."""
    # the 2k candidate 2-opt and 12k candidate Or-opt moves that start at a position (tsp_best_at)
    at_bytes = 2 * k * 32 + 12 * k * 42
    at_ops = 2 * k * (2 * DIST_INT + 12) + 12 * k * (3 * DIST_INT + 16)
    at_fp64 = 2 * k * 4 * EUC_FP64 + 12 * k * 6 * EUC_FP64
    return [
        Model("tsp_2opt_cand", "move", f"n={n}, k={k}, EUC_2D", 32, 2 * DIST_INT + 12, 4 * EUC_FP64, "L2",
              basis="c's index, position, coordinates (4+4+16 B, shared by 2 variants), d's entry and "
                    "coordinates (4+16 B); 4 distances"),
        Model("tsp_2opt_full", "move", f"n={n}, EUC_2D", 4 * SECTOR, 2 * DIST_INT + 8, 4 * EUC_FP64, "L2",
              useful=two_opt_full_useful(n),
              basis="4 distances of cities gathered by number: four scattered coordinate loads, a 32-byte "
                    "sector each (the row's own cities stay in registers); a row scans its "
                    f"columns from i + 2 (32-aligned): {two_opt_full_useful(n):.1%} of the lanes' iterations "
                    "are moves (scanning all n columns of each row, half were, each costing the loop and the "
                    "validity test)"),
        Model("tsp_2opt_cached", "move", f"n={n}, EUC_2D", 20, DIST_INT + 8, 2 * EUC_FP64, "L2",
              useful=two_opt_full_useful(n),
              basis="2 distances (the two edges added); the two removed are the tour's own, read from the "
                    "per-position cache (edge[j], 4 B); coordinates of positions j and j + 1 in tour order "
                    "(16 B, contiguous along the warp); rows as tsp_2opt_full's"),
        Model("tsp_oropt_cand", "move", f"n={n}, k={k}, EUC_2D", 42, 3 * DIST_INT + 16, 6 * EUC_FP64, "L2",
              basis="neighbour index and position (8 B), two tour entries and coordinates (40 B) per variant; "
                    "3 edges removed, 3 added"),
        Model("tsp_oropt_full", "move", f"n={n}, EUC_2D", 8 + 2 * SECTOR, 3 * DIST_INT + 16, 6 * EUC_FP64, "L2",
              basis="6 distances; two tour entries (8 B) and two scattered coordinate loads (a sector each) per "
                    "move, the segment's cities in registers"),
        Model("tsp_oropt_cached", "move", f"n={n}, EUC_2D", 12, DIST_INT + 10, 2 * EUC_FP64, "L2",
              basis="2 distances (the segment's two new edges); d(prev, next) and the segment's two edges once a "
                    "row, the third removed edge from the cache; coordinates of j, j + 1 and edge[j] (20 B in tour "
                    "order) shared by a j's 1-2 orientations (5/3 moves on average): 12 B a move"),
        Model("tsp_cache_tour", "city", f"n={n}, EUC_2D", 4 + SECTOR + 16 + 4, DIST_INT + 4, EUC_FP64, "L2",
              basis="a tour entry read, the city's coordinates gathered (a sector), written in tour order "
                    "(16 B) with its edge length (4 B); one distance"),
        Model("tsp_best_of_parts", "part", f"n={n}, up to 16 parts", 24, 8, 0, "L2",
              basis="a part's best move (16 B) and delta (8 B) read, an argmin step; one launch a pass"),
        Model("tsp_best_at", "position (14 k moves)", f"n={n}, k={k}, EUC_2D", at_bytes, at_ops, at_fp64,
              "L2", basis="the 2k candidate 2-opt and 12k candidate Or-opt moves that start at a position, as "
                          "tsp_2opt_cand and tsp_oropt_cand count them; one thread a position"),
        Model("tsp_dlb_best_at", "listed position (14 k moves)", f"n={n}, k={k}, EUC_2D", at_bytes + 20, at_ops + 4,
              at_fp64, "L2", basis="tsp_best_at's moves of a position, only for the cities on the work list; the "
                                   "listed city, its position, its don't-look bit cleared, the anchor and the state "
                                   "written (20 B); one thread a listed position"),
        Model("tsp_dlb_apply", "claimed position (a round)", f"n={n}", 36, 16, 0, "L2",
              basis="a live move's range, position by position: claim reset (8 B), atomic min of the key (8 B), "
                    "read back (8 B), its owner's state (4 B + 8 B key; the owner by a 64-bit remainder); "
                    f"about {DLB_ROUNDS:g} rounds a pass of 4 barrier-separated phases over all threads"),
        Model("tsp_apply_disjoint", "position", f"n={n}", 24, 8 + 4 * math.ceil(math.log2(n)), 0, "L2", lanes=1,
              basis="the choice: a position's delta and move read (24 B), its range's Fenwick-tree query "
                    "(about 2 log2 n steps of 2 int ops); one thread a tour (the moves are applied by "
                    "all threads, as tsp_apply_best's)"),
        Model("tsp_apply_best", "city moved", f"n={n}", 16, 6, 0, "L2",
              basis="a reversal swaps tour and position entries (2 x 4 B read, 2 x 4 B written)"),
        Model("tsp_positions", "city", f"n={n}", 8, 3, 0, "L2", basis="tour entry read, position written"),
        *eax_models(n),
        Model("tsp_ils_run", "kick (double bridge + descent)", f"n={n}, k={k}", 2000, 3000, 60 * EUC_FP64, "L2",
              lanes=1, basis="a kick's repair visits about 60 candidate moves near its 8 endpoints; one thread"),
        Model("tsp_knn_grid", "city", f"n={n}, k={k}", 16 * 9 * 4, 9 * 4 * 8, 9 * 4 * 5, "L2",
              basis="the 3 x 3 grid cells around a city, about 4 cities each: coordinates and a squared distance"),
    ]


#: The flow shop's iterated greedy on the generic engine (kernels/engine/perm_search.cu, perm_ig, with
#: problems/pfsp/device.py's insert_row and partial_insert_row): insertion rows an iteration at
#: 100 x 20 (the numpy reference's count, tests/perm/search_reference.py, 15 iterations from NEH:
#: 212 rows of the descent and 4 reinsertions), the barrier-separated step of the classic block
#: fitted to the H200's 880 iterations a second of one chain (docs/decisions/pfsp-method.md, "On a
#: GPU": 5.3 us a row, about 128 steps), and the one-warp chains a multiprocessor holds: the flow
#: shop's perm_ig of MH_PS_WARP=1 compiled for sm_90 from its generated source takes 114 registers
#: (3,840 a warp: 17 warps in the 65,536 of a multiprocessor; the resource table lists the
#: stand-in problem's 80, which the simulated driver answers with).
IG_ROWS = 216
CLASSIC_STEP_S = 41e-9
WARP_CHAINS_PER_SM = 17


def engine_models(n: int = 100, m: int = 20) -> list[Model]:
    """One insertion row (heads, tails and the n positions, Taillard's acceleration) of the flow
    shop's iterated-greedy chains, both kernel layouts (``PermSearchParams.kernel``). Operations
    are counted as warp instructions x 32 lanes (the idle lanes of a partial warp included)."""
    steps = n - 1 + m - 1  # anti-diagonals of insert_row's tables (n - 1 jobs)
    rounds = -(-(n + 1) // 32)  # positions a lane evaluates
    classic_ops = (2 * steps * 25 + -(-(n + 1) // 64) * 2 * m * 18) * 32
    warp_ops = (-(-m // 32) * (n - 1 + min(m, 32) - 1) * 39 + rounds * m * 18) * 32
    table = 2 * (n - 1) * m * 8  # heads and tails, int64, written then read
    table32 = table // 2  # the warp kernels' int32 cells (every makespan below 2^29)
    warp_step_s = 39 / CLOCK_HZ  # one warp issues a step's 39 instructions
    return [
        Model("perm_ig (classic): insertion row", "insertion row", f"n={n}, m={m}, {SMS} chains", 2 * table,
              classic_ops, 0, "L2", round_trips=steps + 10, resident=SMS, latency_s=CLASSIC_STEP_S,
              basis=f"a 64-thread block a chain, one a multiprocessor; heads on 32 threads and tails on 32, "
                    f"{steps} anti-diagonals each ending at a barrier (about 25 instructions a cell, 64-bit "
                    f"addressing), the positions block-stride (18 a machine); {steps + 10} barrier-separated "
                    f"steps of {CLASSIC_STEP_S * 1e9:g} ns (fitted); {IG_ROWS} rows an iteration"),
        Model("perm_ig (warp): insertion row", "insertion row", f"n={n}, m={m}, {SMS * WARP_CHAINS_PER_SM} chains",
              2 * table32, warp_ops, 0, "L2", round_trips=steps + m, resident=SMS * WARP_CHAINS_PER_SM,
              latency_s=warp_step_s,
              basis=f"one warp a chain, {WARP_CHAINS_PER_SM} a multiprocessor; a lane holds one machine of "
                    f"the heads and one of the tails, 2 shuffles and about 39 instructions a step (int32 "
                    f"cells), {n - 1 + min(m, 32) - 1} steps a strip of 32 machines, no barrier; the "
                    f"positions {rounds} a lane; the int32 tables of {SMS * WARP_CHAINS_PER_SM} chains "
                    f"({SMS * WARP_CHAINS_PER_SM * table32 / 1e6:.0f} MB) fit in the L2 (int64: "
                    f"{SMS * WARP_CHAINS_PER_SM * table / 1e6:.0f} MB would not); {IG_ROWS} rows an iteration"),
    ]


#: The LOP's first-improvement descent over swaps on the generic engine (perm_ils, swap_delta: a
#: move (i, j) sums j - i entries of D = M - M^T), one chain a multiprocessor (the classic layout,
#: a 64-thread block): the issue cycles of one step of swap_delta's loop (perm[k], two D entries,
#: 64-bit sums, the loop's test: an estimate from the code, unrolled loads in flight), the cycles
#: a row waits on L2 for its first loads, and those of a block argmin (two barriers, ten shuffles:
#: 2 of the flow shop's fitted barrier-separated steps, CLASSIC_STEP_S).
SWAP_STEP_CYCLES, ROW_L2_CYCLES = 12, L2_LATENCY_S * CLOCK_HZ
ARGMIN_CYCLES = 2 * CLASSIC_STEP_S * CLOCK_HZ


def swap_row_lane_steps(n: int, r: int, lanes: int) -> int:
    """Steps of swap_delta's loop of the busiest lane when ``lanes`` lanes share the moves (r, j),
    j > r, j = r + 1 + lane + lanes * u (mh_ps_scan_range): the row's critical path."""
    work = [0] * lanes
    for j in range(r + 1, n):
        work[(j - r - 1) % lanes] += j - r
    return max(work)


def swap_scan_cycles(n: int, threads: int = 64) -> tuple[float, float]:
    """Cycles a row of a first-improvement swap descent takes, averaged over the rows: (row scans,
    the block's threads over one row and a block argmin; scans by warps, threads / 32 consecutive
    rows at once, a warp each, and one choice of the first improving row)."""
    warps = threads // 32
    row = sum(swap_row_lane_steps(n, r, threads) * SWAP_STEP_CYCLES + ROW_L2_CYCLES + ARGMIN_CYCLES
              for r in range(n - 1)) / (n - 1)
    groups = range(0, n - 1, warps)
    by_warps = sum(max(swap_row_lane_steps(n, r, 32) for r in range(g, min(g + warps, n - 1))) * SWAP_STEP_CYCLES
                   + ROW_L2_CYCLES + ARGMIN_CYCLES for g in groups) / (n - 1)
    return row, by_warps


def engine_scan_models(n: int = 300) -> list[Model]:
    """A row of the LOP's first-improvement descent over swaps on one chain a multiprocessor, the
    classic kernels' two scans (``PermSearchParams.scan``): row by row, or a warp a row."""
    moves = n / 2  # moves a row, on average
    steps = (n + 1) / 3 * moves  # swap_delta's loop steps a row (j - i over the pairs, on average)
    row, by_warps = swap_scan_cycles(n)
    common = f"{moves:.0f} moves a row of {steps / moves:.0f} loop steps each ({SWAP_STEP_CYCLES} issue cycles)"
    return [
        Model(f"perm_ils (classic, scan {scan}): swap row", "row of a descent", f"LOP n={n}, {SMS} chains", 0,
              steps * SWAP_STEP_CYCLES, 0, "L2", round_trips=cycles, resident=SMS, latency_s=1 / CLOCK_HZ,
              basis=f"{common}; {how}; {cycles:.0f} cycles a row on the busiest lane's path, an L2 wait "
                    f"({ROW_L2_CYCLES:.0f}) and a block argmin ({ARGMIN_CYCLES:.0f}) a step; one chain (a 64-thread "
                    f"block) a multiprocessor")
        for scan, cycles, how in (("row", row, "the 64 threads over one row, a step a row"),
                                  ("warps", by_warps, "2 warps on 2 consecutive rows, 32 lanes a row, a step "
                                                      "2 rows (the first improving one taken)"))
    ]


COLUMNS = ["kernel", "unit", "size", "bytes", "memory", "int_ops", "fp64_ops", "lanes", "useful", "bw_bound_per_s",
           "int_bound_per_s", "fp64_bound_per_s", "latency_bound_per_s", "bound_per_s", "limited_by", "target_per_s",
           "target_of_bound", "basis"]

#: Bytes a move reads or writes, by kernel (experiments/bench_kernels.py's GB/s column).
#: (The first model of a kernel: int64 deltas for qap_delta_update, as experiments/kernels/qap/qap_moves.cu has.)
BYTES_PER_MOVE = {"qap_delta_full": 8}  # the long long delta written; its O(n) row reads come from cache
for _m in [*qap_models(), *tsp_models()]:
    if _m.unit in ("move", "delta entry"):
        BYTES_PER_MOVE.setdefault(_m.kernel, _m.bytes)
for _stream, _classic in (("qap_delta_update_stream", "qap_delta_update"), ("qap_best_move_stream", "qap_best_move")):
    BYTES_PER_MOVE[_stream] = BYTES_PER_MOVE[_classic]  # the streaming variants move the same bytes


#: The issue's targets for the day a GPU is lent: (kernel, size of the model row, units per second).
TARGETS = {("qap_delta_update", "n=100, int64 deltas"): 1e11, ("tsp_2opt_cand", "n=10000, k=10, EUC_2D"): 2e11,
           ("tsp_2opt_full", "n=10000, EUC_2D"): 2e11, ("tsp_2opt_cached", "n=10000, EUC_2D"): 2e11}


def _rate(value: float) -> str:
    return "-" if value == float("inf") else f"{value:.2e}"


def rows() -> list[dict]:
    out = []
    for m in [*qap_models(), *tsp_models(), *engine_models(), *engine_scan_models()]:
        bounds = m.bounds()
        target = TARGETS.get((m.kernel, m.size))
        row = {**vars(m), **{k: _rate(v) if k.endswith("_per_s") else v for k, v in bounds.items()}}
        row["useful"] = f"{m.useful:.1%}"
        row["target_per_s"] = _rate(target) if target else ""
        row["target_of_bound"] = f"{target / bounds['bound_per_s']:.0%}" if target else ""
        out.append(row)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the same table (nothing is measured)")
    ap.add_argument("--out", type=Path, default=None, help="folder of the tables (default experiments/results)")
    args = ap.parse_args(argv)
    head = header(f"model: {SMS} SMs x {CLOCK_HZ / 1e9:g} GHz, HBM {HBM_BYTES_S / 1e12:g} TB/s, "
                  f"{INT32_OPS_S / 1e12:.1f}e12 int32 op/s, {FP64_OPS_S / 1e12:.1f}e12 fp64 op/s; "
                  "a bound in units per second of the whole GPU; memory L2: the data fits in L2, so "
                  "HBM does not bound it")
    write_table(rows(), COLUMNS, "gpu_model", head, out_folder(args.out, args.quick),
                title="Expected speed on an H200: bytes and operations per unit, and the bounds they imply")
    return 0


if __name__ == "__main__":
    sys.exit(main())
