"""Edge Assembly Crossover kernel (kernels/tsp/tsp_eax.cu) through metaheur.problems.tsp.eax, CPU build.

Children must be permutations with exact lengths (from scratch and as tracked incrementally by
the kernel), made of parent edges except the few edges the sub-tour merges add, reproducible
from (keys, counters), equal to A when A and B have the same edges; on coordinate and matrix
instances, tiny ones included; and a short EAX GA must improve on its best parent.
"""

from __future__ import annotations

import numpy as np
import pytest

from metaheur.devices import gpu_devices, to_host
from metaheur.engine import load_module
from metaheur.engine.rng import stream_key
from metaheur.errors import MetaheurError
from metaheur.problems import TSP, asymmetric_tsp, clustered_tsp, uniform_tsp
from metaheur.problems.tsp.device_data import neighbours, tsp_data
from metaheur.problems.tsp.eax import N_INFO, SELECTIONS, STRATEGIES, EAXBatch, EdgeFrequency, eax_children, work_ints
from metaheur.problems.tsp.ils import TSPILSBatch
from metaheur.problems.tsp.kernels import WEIGHT_CODES


def edge_set(tour) -> set[tuple[int, int]]:
    t = np.asarray(tour)
    nxt = np.roll(t, -1)
    return {(min(a, b), max(a, b)) for a, b in zip(t.tolist(), nxt.tolist(), strict=True)}


def random_parents(n: int, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (np.array([rng.permutation(n) for _ in range(count)]),
            np.array([rng.permutation(n) for _ in range(count)]))


def local_optima(tsp: TSP, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    starts = np.array([rng.permutation(tsp.n) for _ in range(count)])
    return TSPILSBatch(tsp, starts=starts, seed=seed).run(kicks=0).best


def optima_with_lengths(tsp: TSP, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` local optima (int32) and their exact lengths (int64)."""
    pop = local_optima(tsp, count, seed).astype(np.int32)
    return pop, np.array([tsp.tour_length(t) for t in pop], dtype=np.int64)


def keys_for(count: int, seed: int = 3) -> np.ndarray:
    return stream_key(np.uint64(seed), np.arange(count, dtype=np.uint64))


def cross(tsp, a, b, strategy, tries=1, seed=3, data=None, k=8):
    data = data or tsp_data(tsp)
    neigh = neighbours(tsp, min(k, tsp.n - 1))
    la = np.array([tsp.tour_length(t) for t in a], dtype=np.int64)
    counters = np.zeros(len(a), dtype=np.int64)
    children, lengths, info = eax_children(tsp, data, neigh, a, b, la, keys_for(len(a), seed), counters, strategy,
                                           tries=tries, return_info=True)
    return children, lengths, info, la, counters


def check_children(tsp, a, b, children, lengths, info, la, *, max_foreign_fraction=None):
    n = tsp.n
    for c in range(len(a)):
        child = children[c]
        assert np.array_equal(np.sort(child), np.arange(n)), f"child {c} is not a permutation"
        assert lengths[c] == tsp.tour_length(child), f"child {c}: kernel length is not exact"
        assert lengths[c] == la[c] + info.delta[c], f"child {c}: incremental length differs from scratch"
        foreign = edge_set(child) - edge_set(a[c]) - edge_set(b[c])
        assert len(foreign) <= 2 * info.merges[c], f"child {c}: {len(foreign)} edges from neither parent"
        if max_foreign_fraction is not None:
            assert len(foreign) <= max(4, max_foreign_fraction * n)
    assert not info.error.any()


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("make", [uniform_tsp, clustered_tsp], ids=["uniform", "clustered"])
def test_children_of_random_parents_are_exact_tours(make, strategy):
    tsp = make(300, 5)
    a, b = random_parents(tsp.n, 12, 1)
    for tries in (1, 6):
        children, lengths, info, la, _ = cross(tsp, a, b, strategy, tries)
        check_children(tsp, a, b, children, lengths, info, la)
        assert (info.cycles > 0).all() and (info.children >= 1).all()
        if strategy == "single":
            assert (info.eset == 1).all()
            assert (info.children == np.minimum(tries, info.cycles)).all()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_children_of_local_optima_keep_parent_edges(strategy):
    tsp = uniform_tsp(400, 11)
    opt = local_optima(tsp, 8, 2)
    a, b = opt, np.roll(opt, 1, axis=0)
    children, lengths, info, la, _ = cross(tsp, a, b, strategy, tries=10)
    check_children(tsp, a, b, children, lengths, info, la, max_foreign_fraction=0.05)
    # the best of 10 single-AB-cycle children of two local optima is mostly better than A
    if strategy == "single":
        assert (lengths < la).sum() >= len(a) // 2


def test_best_of_tries_is_no_worse_than_one_try():
    tsp = uniform_tsp(250, 4)
    a, b = random_parents(tsp.n, 10, 7)
    _, one, *_ = cross(tsp, a, b, "single", tries=1, seed=9)
    _, many, *_ = cross(tsp, a, b, "single", tries=1000, seed=9)  # every AB-cycle of each pair
    assert (many <= one).all()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_child_is_a_when_parents_share_their_edges(strategy):
    tsp = uniform_tsp(120, 2)
    a, _ = random_parents(tsp.n, 4, 3)
    # the same tour, and the same cycle written from another city in the other direction
    b = np.array([a[0], np.roll(a[1], 17), a[2][::-1], np.roll(a[3][::-1], 5)])
    children, lengths, info, la, _ = cross(tsp, a, b, strategy, tries=5)
    assert np.array_equal(children, a)
    assert np.array_equal(lengths, la)
    assert (info.cycles == 0).all() and (info.children == 0).all()


def test_reproducible_and_counters_advance():
    tsp = clustered_tsp(250, 8)
    a, b = random_parents(tsp.n, 6, 4)
    c1, l1, _, _, ctr1 = cross(tsp, a, b, "rand", tries=3, seed=5)
    c2, l2, _, _, ctr2 = cross(tsp, a, b, "rand", tries=3, seed=5)
    assert np.array_equal(c1, c2) and np.array_equal(l1, l2) and np.array_equal(ctr1, ctr2)
    assert (ctr1 > 0).all()
    c3, *_ = cross(tsp, a, b, "rand", tries=3, seed=6)
    assert not np.array_equal(c1, c3)
    # a second call continues the streams from the advanced counters: other children
    data, neigh = tsp_data(tsp), neighbours(tsp, 8)
    la = np.array([tsp.tour_length(t) for t in a])
    batch = EAXBatch(tsp, data, neigh, len(a))
    counters = np.zeros(len(a), dtype=np.int64)
    first = to_host(batch(a, b, la, keys_for(6, 5), counters, "rand", 3)[0]).copy()
    assert np.array_equal(counters, ctr1) and np.array_equal(first, c1)
    second = to_host(batch(a, b, la, keys_for(6, 5), counters, "rand", 3)[0]).copy()
    assert not np.array_equal(first, second)


def test_atsp_transformation_agrees_with_its_matrix():
    """EAX on an ATSP's transformation: the on-the-fly TWIN distances and the full 2n x 2n matrix
    give the same children, with their exact lengths."""
    twin = asymmetric_tsp(50, seed=3).transformed().tsp
    rng = np.random.default_rng(4)
    a, b = twin.random_tours(8, rng), twin.random_tours(8, rng)
    on_the_fly = cross(twin, a, b, "single", tries=4)
    by_matrix = cross(twin, a, b, "single", tries=4, data=tsp_data(twin, use_matrix=True))
    assert tsp_data(twin).weight_code == WEIGHT_CODES["TWIN"] and tsp_data(twin, use_matrix=True).weight_code == 0
    assert np.array_equal(on_the_fly[0], by_matrix[0]) and np.array_equal(on_the_fly[1], by_matrix[1])
    assert [twin.tour_length(c) for c in on_the_fly[0]] == on_the_fly[1].tolist()
    assert not np.array_equal(on_the_fly[0], a)  # children were made


def test_matrix_instance_and_matrix_build_agree_with_coordinates():
    coords_tsp = uniform_tsp(150, 21)
    a, b = random_parents(coords_tsp.n, 6, 8)
    by_coords = cross(coords_tsp, a, b, "single", tries=4)
    by_matrix = cross(coords_tsp, a, b, "single", tries=4, data=tsp_data(coords_tsp, use_matrix=True))
    assert np.array_equal(by_coords[0], by_matrix[0]) and np.array_equal(by_coords[1], by_matrix[1])
    rng = np.random.default_rng(5)
    m = rng.integers(1, 1000, size=(60, 60))
    m = np.triu(m, 1) + np.triu(m, 1).T
    explicit = TSP("rand-explicit-60", "EXPLICIT", matrix=m)
    data = tsp_data(explicit)
    assert data.weight_code == 0
    a, b = random_parents(60, 10, 9)
    for strategy in STRATEGIES:
        children, lengths, info, la, _ = cross(explicit, a, b, strategy, tries=5, data=data)
        check_children(explicit, a, b, children, lengths, info, la)


@pytest.mark.parametrize("n", [5, 6, 7, 8, 10])
def test_tiny_instances(n):
    tsp = uniform_tsp(n, n)
    a, b = random_parents(n, 40, n)
    for strategy in STRATEGIES:
        for tries in (1, 4):
            children, lengths, info, la, _ = cross(tsp, a, b, strategy, tries=tries, seed=n + tries)
            check_children(tsp, a, b, children, lengths, info, la)


def test_wider_merge_search_when_neighbour_lists_stay_inside_groups():
    # lists that never leave a group of 10 cities: a sub-tour made of whole groups has no near
    # city outside it, so the merge must search beyond the lists (and still build exact tours)
    n, group = 40, 10
    tsp = uniform_tsp(n, 3)
    neigh = np.array([[g * group + j for j in range(group) if g * group + j != c] for c in range(n)
                      for g in [c // group]], dtype=np.int32)
    rng = np.random.default_rng(1)
    wide = 0
    for it in range(12):
        a = np.tile(np.arange(n), (16, 1))
        b = np.array([np.concatenate([blk[::-1] if rng.random() < 0.5 else blk
                                      for blk in (np.arange(g * group, (g + 1) * group)
                                                  for g in rng.permutation(n // group))]) for _ in range(16)])
        la = np.array([tsp.tour_length(t) for t in a])
        for strategy in STRATEGIES:
            counters = np.zeros(16, dtype=np.int64)
            children, lengths, info = eax_children(tsp, tsp_data(tsp), neigh, a, b, la, keys_for(16, it), counters,
                                                   strategy, tries=5, return_info=True)
            check_children(tsp, a, b, children, lengths, info, la)
            wide += int(info.wide.sum())
    assert wide > 0


def population_counts(tours) -> dict:
    out: dict = {}
    for t in tours:
        for e in edge_set(t):
            out[e] = out.get(e, 0) + 1
    return out


def test_edge_frequency_table_follows_the_population():
    tsp = uniform_tsp(80, 6)
    rng = np.random.default_rng(2)
    pop = np.array([rng.permutation(80) for _ in range(7)])
    freq = EdgeFrequency(pop)
    assert freq.frequencies() == population_counts(pop)
    for _ in range(3):  # replace a random subset by other tours (some by near copies)
        idx = rng.choice(7, size=3, replace=False)
        new = np.array([np.roll(pop[i], 3)[::-1] if rng.random() < 0.3 else rng.permutation(80) for i in idx])
        freq.replace(pop[idx], new)
        pop[idx] = new
        assert freq.frequencies() == population_counts(pop)
    with pytest.raises(MetaheurError, match="R x 80"):
        freq.replace(pop[:2], pop[:1])
    data, neigh = tsp_data(tsp), neighbours(tsp, 6)
    batch = EAXBatch(tsp, data, neigh, 7)
    la = np.array([tsp.tour_length(t) for t in pop])
    with pytest.raises(MetaheurError, match="EdgeFrequency"):
        batch(pop, np.roll(pop, 1, axis=0), la, keys_for(7), np.zeros(7, dtype=np.int64), select="entropy")


def test_entropy_selection_takes_an_improving_child_whenever_one_exists():
    tsp = clustered_tsp(300, 4)
    pop = local_optima(tsp, 12, 3)
    a, b = pop, np.roll(pop, 1, axis=0)
    la = np.array([tsp.tour_length(t) for t in a])
    data, neigh = tsp_data(tsp), neighbours(tsp, 8)
    freq = EdgeFrequency(pop)
    out = {}
    for select in ("greedy", "entropy"):
        for tries in (1, 12):
            counters = np.zeros(12, dtype=np.int64)
            children, lengths, info = eax_children(tsp, data, neigh, a, b, la, keys_for(12, 8), counters, "single",
                                                   tries=tries, select=select, freq=freq, return_info=True)
            check_children(tsp, a, b, children, lengths, info, la)
            out[select, tries] = (children, lengths, counters)
    # one child per pair: the same child whatever the selection (selection draws no numbers)
    assert all(np.array_equal(x, y) for x, y in zip(out["greedy", 1], out["entropy", 1], strict=True))
    # the same children are built; greedy returns the shortest, entropy an improving one if any
    g, e = out["greedy", 12][1], out["entropy", 12][1]
    assert np.array_equal(out["greedy", 12][2], out["entropy", 12][2])
    assert (g <= e).all()
    assert np.array_equal(g < la, e < la) and (e < la).any()


def test_frequency_table_follows_replacements_recorded_by_the_kernel():
    tsp = uniform_tsp(250, 9)
    pop, lengths = optima_with_lengths(tsp, 10, 4)
    data, neigh = tsp_data(tsp), neighbours(tsp, 8)
    freq = EdgeFrequency(pop, "cpu", data.defines)
    batch = EAXBatch(tsp, data, neigh, 10)
    counters = np.zeros(10, dtype=np.int64)
    for gen in range(4):
        order = np.random.default_rng(gen).permutation(10)
        children, child_len = batch(pop[order], pop[np.roll(order, -1)], lengths[order], keys_for(10), counters,
                                    "single", 6, select="entropy", freq=freq)
        children, child_len = to_host(children), to_host(child_len)
        better = np.flatnonzero(child_len < lengths[order])
        for blk in range(10):  # the recorded rows are exactly the cities whose neighbours changed
            rows = batch.changes[blk, :batch.info.changed[blk]]
            a, ch = pop[order[blk]], children[blk]
            moved = {int(c) for c in range(250) if edge_neighbours(a, c) != edge_neighbours(ch, c)}
            assert {int(c) for c in rows[:, 0]} == moved
        freq.replace_children(batch, better)
        pop[order[better]] = children[better]
        lengths[order[better]] = child_len[better]
        assert freq.frequencies() == population_counts(pop)
    batch(pop, pop, lengths, keys_for(10), counters, "single", 2)  # greedy: nothing recorded
    with pytest.raises(MetaheurError, match="select='entropy'"):
        freq.replace_children(batch, [0])


def edge_neighbours(tour, c) -> set[int]:
    t = np.asarray(tour)
    i = int(np.flatnonzero(t == c)[0])
    return {int(t[i - 1]), int(t[(i + 1) % len(t)])}


def test_any_block_shape_gives_the_same_children():
    # thread 0 of a block works, the others return: the fiber simulation with 8 threads a block
    # must reproduce the fast build (what a GPU launch with larger blocks relies on)
    tsp = uniform_tsp(90, 12)
    a, b = random_parents(90, 5, 6)
    children, lengths, _, la, counters = cross(tsp, a, b, "single", tries=4, seed=2)
    data, neigh = tsp_data(tsp), neighbours(tsp, 8)
    kernel = load_module("tsp/tsp_eax.cu", "cpu", data.defines, sim=True).kernel("tsp_eax")
    out, out_len = np.zeros((5, 90), np.int32), np.zeros(5, np.int64)
    ctr = np.zeros(5, np.int64)
    none_i, none_d = np.zeros(1, np.int32), np.zeros(1, np.float64)
    kernel(5, 8, (data.xy, data.mat, neigh, 90, neigh.shape[1], a.astype(np.int32), b.astype(np.int32), out,
                  out_len, la, keys_for(5, 2), ctr, STRATEGIES["single"], 4, np.zeros((5, work_ints(90)), np.int32),
                  np.zeros((5, N_INFO), np.int64), SELECTIONS["greedy"], none_i, none_i, none_i, 1, none_d, 1,
                  none_i, 0))
    assert np.array_equal(out, children) and np.array_equal(out_len, lengths) and np.array_equal(ctr, counters)


def test_eax_ga_improves_on_its_best_parent():
    tsp = uniform_tsp(200, 13)
    pop, lengths = optima_with_lengths(tsp, 16, 1)
    start_best = int(lengths.min())
    data, neigh = tsp_data(tsp), neighbours(tsp, 10)
    batch = EAXBatch(tsp, data, neigh, len(pop))
    keys, counters = keys_for(len(pop), 1), np.zeros(len(pop), dtype=np.int64)
    rng = np.random.default_rng(0)
    for _ in range(30):
        order = rng.permutation(len(pop))
        children, child_len = batch(pop[order], pop[np.roll(order, -1)], lengths[order], keys, counters, "single", 10)
        children, child_len = to_host(children), to_host(child_len)
        better = child_len < lengths[order]
        pop[order[better]] = children[better]
        lengths[order[better]] = child_len[better]
    best = int(lengths.min())
    assert best < start_best
    assert best == tsp.tour_length(pop[int(np.argmin(lengths))])


def test_work_size_and_input_validation():
    assert work_ints(1000) == 21004
    tsp = uniform_tsp(50, 1)
    data, neigh = tsp_data(tsp), neighbours(tsp, 5)
    a, b = random_parents(50, 3, 1)
    la = np.array([tsp.tour_length(t) for t in a])
    keys, ctr = keys_for(3), np.zeros(3, dtype=np.int64)
    batch = EAXBatch(tsp, data, neigh, 3)
    with pytest.raises(MetaheurError, match="strategy"):
        batch(a, b, la, keys, ctr, "block3")
    with pytest.raises(MetaheurError, match="tries"):
        batch(a, b, la, keys, ctr, "rand", 0)
    bad = a.copy()
    bad[1, 0] = bad[1, 1]
    with pytest.raises(MetaheurError, match=r"tours_a\[1\] is not a permutation"):
        batch(bad, b, la, keys, ctr)
    with pytest.raises(MetaheurError, match="3 rows"):
        batch(a[:2], b[:2], la[:2], keys[:2], ctr[:2])
    with pytest.raises(MetaheurError, match="keys"):
        batch(a, b, la, keys.astype(np.int64), ctr)
    with pytest.raises(MetaheurError, match="counters"):
        batch(a, b, la, keys, ctr.astype(np.int32))
    with pytest.raises(MetaheurError, match="len_a"):
        batch(a, b, la[:2], keys, ctr)
    with pytest.raises(MetaheurError, match=r"len_a\[2\] = .* is not the exact length"):
        batch(a, b, la + np.array([0, 0, 1]), keys, ctr, "single", 3)
    with pytest.raises(MetaheurError, match="neighbour lists"):
        EAXBatch(tsp, data, neigh[:10], 3)
    with pytest.raises(MetaheurError, match="C x 50"):
        batch(a[:, :10], b, la, keys, ctr)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_devices(), reason="no CUDA device visible to CuPy")
def test_gpu_matches_cpu():
    tsp = clustered_tsp(500, 3)
    a, b = random_parents(tsp.n, 16, 2)
    la = np.array([tsp.tour_length(t) for t in a])
    neigh = neighbours(tsp, 8)
    out = {}
    for dev in ("cpu", gpu_devices()[0].name):
        counters = np.zeros(16, dtype=np.int64)
        children, lengths = eax_children(tsp, tsp_data(tsp, dev), neigh, a, b, la, keys_for(16), counters, "single",
                                         dev, tries=8)
        out[dev] = (children, lengths, counters)
    (c1, l1, k1), (c2, l2, k2) = out.values()
    assert np.array_equal(c1, c2) and np.array_equal(l1, l2) and np.array_equal(k1, k2)
