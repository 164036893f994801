"""Numpy references of the generic searches of kernels/engine/perm_search.cu (same rules, same random
draws through metaheur.engine.rng), move by move over a problem's ``evaluate``."""

from __future__ import annotations

import numpy as np

from metaheur.engine import rng as mrng
from metaheur.problems.permutation_check import apply_move


def _u(key, ctr) -> float:
    return float(mrng.uniform(np.uint64(key), np.uint64(ctr)))


def _below(key, ctr, m) -> int:
    return int(mrng.below(np.uint64(key), np.uint64(ctr), m))


class Ref:
    """One search's state: current and best permutations and engine costs."""

    def __init__(self, pb, start, key):
        self.pb, self.n, self.sign, self.key = pb, pb.n, pb.engine_sign, int(key)
        self.p = np.asarray(start, dtype=np.int64).copy()
        self.cur = self.sign * pb.value(self.p)
        self.best, self.bp = self.cur, self.p.copy()
        self.ctr = self.iters = self.moves = 0

    def value(self, p) -> int:
        return self.sign * int(self.pb.values(p[None, :])[0])

    def valid(self, move, i, j) -> bool:
        return i != j if move == "insert" else i < j

    def row(self, move, i) -> np.ndarray:
        moved = np.array([apply_move(self.p, move, i, j) if j != i else self.p for j in range(self.n)])
        return self.sign * self.pb.values(moved) - self.cur

    def apply(self, move, i, j, d) -> None:
        self.p = apply_move(self.p, move, i, j)
        self.cur += d
        if self.cur < self.best:
            self.best, self.bp = self.cur, self.p.copy()

    def descend(self, move, first) -> None:
        n, i0, since = self.n, 0, 0
        while True:
            cand = []
            for i in ([i0] if first else range(n)):
                r = self.row(move, i)
                cand += [(int(r[j]), i * n + j) for j in range(n) if self.valid(move, i, j)]
            d, idx = min(cand) if cand else (0, 0)  # a swap row of the last position is empty
            if d < 0:
                self.apply(move, idx // n, idx % n, d)
                self.moves += 1
                since = 0
            elif not first:
                break
            else:
                since += 1
                if since >= n:
                    break
            if first:
                i0 = (i0 + 1) % n


def tabu(pb, start, key, iters, move, scale):
    s, n = Ref(pb, start, key), pb.n
    tb = np.zeros((n, n), dtype=np.int64)
    for _ in range(iters):
        now = s.iters + 1
        cand = []
        for i in range(n):
            r = s.row(move, i)
            for j in range(n):
                if not s.valid(move, i, j):
                    continue
                a, b = s.p[i], s.p[j]
                is_tabu = tb[a, j] >= now if move == "insert" else tb[a, j] >= now and tb[b, i] >= now
                cls = 0 if s.cur + r[j] < s.best else (2 if is_tabu else 1)
                cand.append((cls, int(r[j]), i * n + j))
        _, d, idx = min(cand)
        i, j = idx // n, idx % n
        u1, u2 = _u(s.key, s.ctr), _u(s.key, s.ctr + 1)
        s.ctr += 2
        span = int(scale * n)
        tb[s.p[i], i] = now + int(u1 * u1 * u1 * span)
        if move != "insert":
            tb[s.p[j], j] = now + int(u2 * u2 * u2 * span)
        s.iters = now
        s.apply(move, i, j, d)
    return s


def ils(pb, start, key, iters, move, first, kick_move, kick_moves):
    s, n = Ref(pb, start, key), pb.n
    s.descend(move, first)
    for _ in range(iters):
        before, saved = s.cur, s.p.copy()
        for _ in range(kick_moves):
            a = _below(s.key, s.ctr, n)
            b = _below(s.key, s.ctr + 1, n - 1)
            s.ctr += 2
            b += b >= a
            s.p = apply_move(s.p, kick_move, a, b)
        s.cur = s.value(s.p)
        s.iters += 1
        if s.cur < s.best:
            s.best, s.bp = s.cur, s.p.copy()
        s.descend(move, first)
        if s.cur > before:
            s.p, s.cur = saved, before
    return s


def iterated_greedy(pb, start, key, iters, first, destruct, temperature):
    s, n = Ref(pb, start, key), pb.n
    d = min(destruct, n - 1)
    s.descend("insert", first)
    for _ in range(iters):
        before, saved = s.cur, s.p.copy()
        seq, removed = list(s.p), []
        for m in range(d):
            r = _below(s.key, s.ctr, n - m)
            s.ctr += 1
            removed.append(seq.pop(r))
        s.iters += 1
        for e in removed:
            vals = [s.sign * pb.partial_value([*seq[:k], e, *seq[k:]]) for k in range(len(seq) + 1)]
            k = int(np.argmin(vals))
            seq.insert(k, e)
            s.cur = int(vals[k])
        s.p = np.array(seq, dtype=np.int64)
        if s.cur < s.best:
            s.best, s.bp = s.cur, s.p.copy()
        s.descend("insert", first)
        now = s.cur
        accept = now < before
        if not accept and temperature > 0:
            accept = _u(s.key, s.ctr) <= np.exp(-(now - before) / temperature)
            s.ctr += 1
        if not accept:
            s.p, s.cur = saved, before
    return s
