"""User problems of the generic engine's tests, written as a user would (metaheur.PermutationProblem):
the QAP with an O(n) swap pair delta, the QAP through the cache hooks (Taillard's delta matrix),
and the single-machine total weighted tardiness with insertion rows and partial insertions."""

from __future__ import annotations

import numpy as np

from metaheur.problems.permutation import PermutationProblem

QAP_COST = r"""
__device__ ll cost(const Data &d, const int *p) {
  ll c = 0;
  for (int i = 0; i < d.n; ++i)
    for (int j = 0; j < d.n; ++j) c += (ll)d.a[i * d.n + j] * d.b[p[i] * d.n + p[j]];
  return c;
}
__device__ ll qap_pair(const Data &d, const int *p, int r, int s) {
  const int n = d.n; const int *a = d.a, *b = d.b;
  const int pr = p[r], ps = p[s];
  ll dl = (ll)(a[r * n + r] - a[s * n + s]) * (b[ps * n + ps] - b[pr * n + pr]) +
          (ll)(a[r * n + s] - a[s * n + r]) * (b[ps * n + pr] - b[pr * n + ps]);
  for (int k = 0; k < n; ++k) {
    if (k == r || k == s) continue;
    const int pk = p[k];
    dl += (ll)(a[k * n + r] - a[k * n + s]) * (b[pk * n + ps] - b[pk * n + pr]) +
          (ll)(a[r * n + k] - a[s * n + k]) * (b[ps * n + pk] - b[pr * n + pk]);
  }
  return dl;
}
"""

QAP_PAIR = QAP_COST + r"""
__device__ ll swap_delta(const Data &d, const int *p, const ll *cache, int i, int j) { return qap_pair(d, p, i, j); }
"""

#: Taillard (1991): the delta matrix kept per solution, O(1) per pair not touching the moved units.
QAP_CACHED = QAP_COST + r"""
__device__ ll swap_delta(const Data &d, const int *p, const ll *cache, int i, int j) { return cache[i * d.n + j]; }
__device__ void prepare(const Data &d, const int *p, ll *cache, ll *work) {
  const int n = d.n;
  for (int k = mh_tid(); k < n * n; k += mh_nthreads()) {
    const int i = k / n, j = k % n;
    if (i < j) cache[k] = qap_pair(d, p, i, j);
  }
}
__device__ void update_swap(const Data &d, const int *p, ll *cache, int r, int s, ll *work) {
  const int n = d.n; const int *a = d.a, *b = d.b;
  const int pr = p[r], ps = p[s];
  for (int k = mh_tid(); k < n * n; k += mh_nthreads()) {
    const int i = k / n, j = k % n;
    if (i >= j) continue;
    if (i == r || i == s || j == r || j == s) { cache[k] = qap_pair(d, p, i, j); continue; }
    const int pi = p[i], pj = p[j];
    cache[k] += (ll)(a[r * n + i] - a[r * n + j] + a[s * n + j] - a[s * n + i]) *
                    (b[ps * n + pi] - b[ps * n + pj] + b[pr * n + pj] - b[pr * n + pi]) +
                (ll)(a[i * n + r] - a[j * n + r] + a[j * n + s] - a[i * n + s]) *
                    (b[pi * n + ps] - b[pj * n + ps] + b[pj * n + pr] - b[pi * n + pr]);
  }
}
"""


class UserQAP(PermutationProblem):
    """The QAP as a user writes it: cost and the O(n) swap delta."""

    kind = "uqap"
    title = "quadratic assignment (user)"
    moves = ("swap",)
    device_code = QAP_PAIR

    def __init__(self, a, b, name="uqap"):
        self.a, self.b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        super().__init__(name=name, n=len(self.a))

    def data(self) -> dict:
        return {"a": self.a.astype(np.int32), "b": self.b.astype(np.int32)}

    def evaluate(self, perms):
        perms = np.asarray(perms)
        return np.array([(self.a * self.b[np.ix_(p, p)]).sum() for p in perms], dtype=np.int64)

    def value_bound(self) -> int:
        return int(np.abs(self.a).sum() * np.abs(self.b).max())


class CachedQAP(UserQAP):
    """The QAP through the cache hooks: Taillard's delta matrix, updated in O(1) per pair."""

    kind = "cqap"
    device_code = QAP_CACHED

    def cache_size(self) -> int:
        return self.n * self.n


class MaxQAP(UserQAP):
    """The QAP maximised (a problem of sense max)."""

    kind = "maxqap"
    sense = "max"


def random_qap_arrays(n: int, seed: int):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 10, size=(n, n)), rng.integers(0, 10, size=(n, n))


WT_CODE = r"""
__device__ ll wt_from(const Data &d, const int *seq, int len, int elem, int at) {
  ll t = 0, c = 0;
  for (int q = 0; q <= len; ++q) {
    const int e = q == at ? elem : seq[q < at ? q : q - 1];
    if (elem < 0 && q == len) break;
    t += d.p[e];
    if (t > d.due[e]) c += (ll)d.w[e] * (t - d.due[e]);
  }
  return c;
}
__device__ ll cost(const Data &d, const int *perm) { return wt_from(d, perm, d.n, -1, d.n); }
__device__ void partial_insert_row(const Data &d, const int *seq, int len, int elem, ll *out, ll *work) {
  for (int k = mh_tid(); k <= len; k += mh_nthreads()) out[k] = wt_from(d, seq, len, elem, k);
}
__device__ void insert_row(const Data &d, const int *perm, const ll *cache, int i, ll *out, ll *work) {
  const int n = d.n;
  for (int j = mh_tid(); j < n; j += mh_nthreads()) {
    ll t = 0, c = 0, base = 0;
    for (int q = 0; q < n; ++q) {
      const int e = perm[q];
      t += d.p[e];
      if (t > d.due[e]) base += (ll)d.w[e] * (t - d.due[e]);
    }
    t = 0;
    for (int q = 0; q < n; ++q) {
      const int src = q == j ? i : (i < j ? (q >= i && q < j ? q + 1 : q) : (q > j && q <= i ? q - 1 : q));
      const int e = perm[src];
      t += d.p[e];
      if (t > d.due[e]) c += (ll)d.w[e] * (t - d.due[e]);
    }
    out[j] = j == i ? 0 : c - base;
  }
}
"""


class Tardiness(PermutationProblem):
    """Single-machine total weighted tardiness: insertion rows, partial insertions, swaps by cost."""

    kind = "wtt"
    title = "single-machine total weighted tardiness (test)"
    moves = ("insert", "swap")
    device_code = WT_CODE

    def __init__(self, p, w, due, name="wtt"):
        self.p, self.w, self.due = (np.asarray(x, dtype=np.int64) for x in (p, w, due))
        super().__init__(name=name, n=len(self.p))

    def data(self) -> dict:
        return {"p": self.p.astype(np.int32), "w": self.w.astype(np.int32), "due": self.due.astype(np.int32)}

    def evaluate(self, perms):
        perms = np.asarray(perms)
        done = np.cumsum(self.p[perms], axis=1)
        return (self.w[perms] * np.maximum(0, done - self.due[perms])).sum(axis=1).astype(np.int64)

    def construction_key(self):
        return self.w / self.p

    def temperature_scale(self) -> float:
        return float(self.p.mean() * self.w.mean()) / 10


def random_tardiness(n: int, seed: int) -> Tardiness:
    rng = np.random.default_rng(seed)
    p = rng.integers(1, 20, size=n)
    return Tardiness(p, rng.integers(1, 10, size=n), rng.integers(0, int(p.sum() * 0.6), size=n))
