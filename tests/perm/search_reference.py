"""Numpy references of the generic searches of kernels/engine/perm_search.cu (same rules, same random
draws through metaheur.engine.rng), move by move over a problem's ``evaluate``."""

from __future__ import annotations

import numpy as np

from metaheur.engine import rng as mrng
from metaheur.problem.permutation_check import apply_move, segment_code, segment_parts, segment_valid


def _u(key, ctr) -> float:
    return float(mrng.uniform(np.uint64(key), np.uint64(ctr)))


def _below(key, ctr, m) -> int:
    return int(mrng.below(np.uint64(key), np.uint64(ctr), m))


class Ref:
    """One search's state: current and best permutations and engine costs; its neighbourhoods:
    every move, the granular moves of the problem's candidate lists (``granular``) or ``sample``
    random moves a scan."""

    def __init__(self, pb, start, key, sample=0, granular=True):
        self.pb, self.n, self.sign, self.key = pb, pb.n, pb.engine_sign, int(key)
        self.p = np.asarray(start, dtype=np.int64).copy()
        self.cur = self.sign * pb.value(self.p)
        self.best, self.bp = self.cur, self.p.copy()
        self.ctr = self.iters = self.moves = 0
        self.longest, self.reversible = pb.segment_length, pb.segment_reverse
        cand = pb.candidates() if granular else None
        self.cand = None if cand is None else np.asarray(cand)
        self.sample = sample

    def value(self, p) -> int:
        return self.sign * int(self.pb.values(p[None, :])[0])

    # ------------------------------------------------------------ the moves
    def rows(self, move) -> int:
        return self.n * self.longest * 2 if move == "segment" else self.n

    def row_valid(self, move, r) -> bool:
        if move != "segment":
            return True
        s, length, rev = segment_parts(r, self.longest)
        return s + length <= self.n and length < self.n and (not rev or (self.reversible and length > 1))

    def pos(self, move, r) -> int:
        return segment_parts(r, self.longest)[0] if move == "segment" else r

    def valid(self, move, r, j) -> bool:
        if move == "segment":
            return segment_valid(r, j, self.n, self.longest, self.reversible)
        return r != j if move == "insert" else r < j

    def moved(self, move, r, j):
        return apply_move(self.p, move, r, j, self.longest)

    def cand_moves(self, move, r) -> list:
        """The granular moves of row r, in the kernel's order (mh_ps_cand_move)."""
        n, a = self.n, self.pos(move, r)
        length = segment_parts(r, self.longest)[1] if move == "segment" else 1
        at = np.argsort(self.p)
        out = []
        for c in self.cand[self.p[a]]:
            q = int(at[c])
            for side in (0, 1):
                if move == "swap":
                    j = q + 1 if side else q - 1
                    if 0 <= j < n and j != a:
                        out.append((min(a, j), max(a, j)))
                elif move == "reverse":
                    lo, hi = ((a + 1 if side else a, q if side else q - 1) if q > a
                              else (q if side else q + 1, a - 1 if side else a))
                    if lo < hi:
                        out.append((lo, hi))
                elif not a <= q < a + length:
                    j = q + side if q < a else q - length + side
                    if 0 <= j <= n - length and j != a:
                        out.append((r, j))
        return out

    def row_moves(self, move, r) -> list:
        if not self.row_valid(move, r):
            return []
        if self.cand is not None:
            return self.cand_moves(move, r)
        return [(r, j) for j in range(self.n) if self.valid(move, r, j)]

    def sample_moves(self, move) -> list:
        """``sample`` random moves, 4 draws each from the scan's counter (mh_ps_sample_move)."""
        n, out = self.n, []
        for m in range(self.sample):
            c = self.ctr + 4 * m
            if move == "segment":
                s = _below(self.key, c, n)
                length = 1 + _below(self.key, c + 1, min(self.longest, n - 1, n - s))
                rev = _below(self.key, c + 2, 2) if self.reversible and length > 1 else 0
                j = _below(self.key, c + 3, n - length)
                out.append((segment_code(s, length, rev, self.longest), j + (j >= s)))
                continue
            a = _below(self.key, c, n)
            b = _below(self.key, c + 1, n - 1)
            b += b >= a
            out.append((a, b) if move == "insert" else (min(a, b), max(a, b)))
        return out

    def scan(self, move) -> list:
        """The moves of a whole scan (a sample uses up its draws)."""
        if self.sample:
            out = self.sample_moves(move)
            self.ctr += 4 * self.sample
            return out
        return [m for r in range(self.rows(move)) for m in self.row_moves(move, r)]

    def delta(self, move, r, j) -> int:
        return self.value(self.moved(move, r, j)) - self.cur

    def apply(self, move, i, j, d) -> None:
        self.p = self.moved(move, i, j)
        self.cur += d
        if self.cur < self.best:
            self.best, self.bp = self.cur, self.p.copy()

    def descend(self, move, first) -> None:
        n, rows, r0, since = self.n, self.rows(move), 0, 0
        while True:
            moves = self.row_moves(move, r0) if first and not self.sample else self.scan(move)
            d, idx = min([(self.delta(move, r, j), r * n + j) for r, j in moves], default=(0, 0))
            if d < 0:
                self.apply(move, idx // n, idx % n, d)
                self.moves += 1
                since = 0
            elif not first or self.sample:
                break
            else:
                since += 1
                if since >= rows:
                    break
            if first:
                r0 = (r0 + 1) % rows


def tabu(pb, start, key, iters, move, scale, sample=0, granular=True):
    s, n = Ref(pb, start, key, sample, granular), pb.n
    tb = np.zeros((n, n), dtype=np.int64)
    for _ in range(iters):
        now = s.iters + 1
        cand = []
        for r, j in s.scan(move):
            d = s.delta(move, r, j)
            a = s.p[s.pos(move, r)]
            is_tabu = tb[a, j] >= now and (move != "swap" or tb[s.p[j], r] >= now)
            cls = 0 if s.cur + d < s.best else (2 if is_tabu else 1)
            cand.append((cls, d, r * n + j))
        _, d, idx = min(cand)
        r, j = idx // n, idx % n
        at = s.pos(move, r)
        u1, u2 = _u(s.key, s.ctr), _u(s.key, s.ctr + 1)
        s.ctr += 2
        span = int(scale * n)
        tb[s.p[at], at] = now + int(u1 * u1 * u1 * span)
        if move == "swap":
            tb[s.p[j], j] = now + int(u2 * u2 * u2 * span)
        s.iters = now
        s.apply(move, r, j, d)
    return s


def ils(pb, start, key, iters, move, first, kick_move, kick_moves, sample=0, granular=True):
    s, n = Ref(pb, start, key, sample, granular), pb.n
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
