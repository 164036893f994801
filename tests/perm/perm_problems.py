"""User problems of the generic engine's tests, written as a user would (metaheur.PermutationProblem):
the QAP with an O(n) swap pair delta, the QAP through the cache hooks (Taillard's delta matrix),
and the single-machine total weighted tardiness with insertion rows and partial insertions."""

from __future__ import annotations

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problem.permutation import PermutationProblem

QAP_VALUE = r"""
__device__ ll cost(const Data &d, const int *p) {
  ll c = 0;
  for (int i = 0; i < d.n; ++i)
    for (int j = 0; j < d.n; ++j) c += (ll)d.a[i * d.n + j] * d.b[p[i] * d.n + p[j]];
  return c;
}
"""

QAP_COST = QAP_VALUE + r"""
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

#: a swap delta read from the delta matrix a problem keeps in its cache
CACHED_SWAP_DELTA = r"""
__device__ ll swap_delta(const Data &d, const int *p, const cache_t *cache, int i, int j) { return cache[i * d.n + j]; }
"""

QAP_PAIR = QAP_COST + r"""
__device__ ll swap_delta(const Data &d, const int *p, const ll *cache, int i, int j) { return qap_pair(d, p, i, j); }
"""

#: Taillard (1991): the delta matrix kept per solution, O(1) per pair not touching the moved units.
QAP_CACHED = QAP_COST + r"""
__device__ ll swap_delta(const Data &d, const int *p, const ll *cache, int i, int j) { return cache[i * d.n + j]; }
__device__ void prepare(const Data &d, const int *p, ll *cache, ll *work) {
  for (int i = 0; i < d.n; ++i)
    for (int j = i + 1 + mh_tid(); j < d.n; j += mh_nthreads()) cache[i * d.n + j] = qap_pair(d, p, i, j);
}
__device__ void update_swap(const Data &d, const int *p, ll *cache, int r, int s, ll *work) {
  const int n = d.n; const int *a = d.a, *b = d.b;
  const int pr = p[r], ps = p[s];
  for (int i = 0; i < n; ++i) {
    const int pi = p[i];
    const int ari = a[r * n + i], asi = a[s * n + i], air = a[i * n + r], ais = a[i * n + s];
    const int bsi = b[ps * n + pi], bri = b[pr * n + pi], bis = b[pi * n + ps], bir = b[pi * n + pr];
    for (int j = i + 1 + mh_tid(); j < n; j += mh_nthreads()) {
      if (i == r || i == s || j == r || j == s) { cache[i * n + j] = qap_pair(d, p, i, j); continue; }
      const int pj = p[j];
      cache[i * n + j] += (ll)(ari - a[r * n + j] + a[s * n + j] - asi) *
                              (bsi - b[ps * n + pj] + b[pr * n + pj] - bri) +
                          (ll)(air - a[j * n + r] + a[j * n + s] - ais) *
                              (bis - b[pj * n + ps] + b[pj * n + pr] - bir);
    }
  }
}
"""


class UserQAP(PermutationProblem):
    """The QAP as a user writes it: cost and the O(n) swap delta."""

    kind = "uqap"
    title = "quadratic assignment (user)"
    moves = ("swap",)
    device_code = QAP_PAIR

    def __init__(self, a, b, name="uqap", cache_dtype="int64"):
        self.a, self.b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        self.cache_dtype = cache_dtype
        super().__init__(name=name, n=len(self.a))

    def data(self) -> dict:
        return {"a": self.a.astype(np.int32), "b": self.b.astype(np.int32)}

    def evaluate(self, perms):
        perms = np.asarray(perms)
        return np.array([(self.a * self.b[np.ix_(p, p)]).sum() for p in perms], dtype=np.int64)

    def value_bound(self) -> int:
        return int(np.abs(self.a).sum() * np.abs(self.b).max())

    def delta_bound(self) -> int:
        """The built-in's bound on a swap's delta and Taillard's sums (metaheur.problems.qap.device_data:
        delta_bound), which also bounds the cache's copies of b."""
        a, b = np.abs(self.a), np.abs(self.b)
        sums = [int(max(m.sum(axis=0).max(), m.sum(axis=1).max())) for m in (a, b)]
        amax, bmax = int(a.max()), int(b.max())
        return min(8 * bmax * sums[0], 8 * amax * sums[1]) + 64 * amax * bmax


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

    def partial_value(self, seq) -> int:
        """The tardiness of a partial sequence (the reference of partial_insert_row)."""
        seq = np.asarray(seq)
        done = np.cumsum(self.p[seq])
        return int((self.w[seq] * np.maximum(0, done - self.due[seq])).sum())

    def construction_key(self):
        return self.w / self.p

    def temperature_scale(self) -> float:
        return float(self.p.mean() * self.w.mean()) / 10


def random_tardiness(n: int, seed: int) -> Tardiness:
    rng = np.random.default_rng(seed)
    p = rng.integers(1, 20, size=n)
    return Tardiness(p, rng.integers(1, 10, size=n), rng.integers(0, int(p.sum() * 0.6), size=n))


#: The QAP through the cache hooks as Taillard's robust tabu search keeps it: the delta matrix
#: plus the permuted distance matrix P[x][y] = b[p[x]][p[y]] and its transpose, so that a move
#: swaps two rows and columns of P and every pair's O(1) update reads contiguous rows.
QAP_TAILLARD = r"""
__device__ ll tq_pair(const Data &d, const cache_t *P, const cache_t *PT, int r, int s) {
  const int n = d.n;
  const int *ar = d.a + r * n, *as = d.a + s * n, *atr = d.at + r * n, *ats = d.at + s * n;
  const cache_t *Pr = P + r * n, *Ps = P + s * n, *PTr = PT + r * n, *PTs = PT + s * n;
  ll dl = 0;
  for (int k = 0; k < n; ++k) dl += (ll)(atr[k] - ats[k]) * (PTs[k] - PTr[k]) + (ll)(ar[k] - as[k]) * (Ps[k] - Pr[k]);
  for (int t = 0; t < 2; ++t) {  // the sum ran over k = r and k = s too
    const int k = t ? s : r;
    dl -= (ll)(atr[k] - ats[k]) * (PTs[k] - PTr[k]) + (ll)(ar[k] - as[k]) * (Ps[k] - Pr[k]);
  }
  return dl + (ll)(ar[r] - as[s]) * (Ps[s] - Pr[r]) + (ll)(ar[s] - as[r]) * (Ps[r] - Pr[s]);
}
""" + QAP_VALUE + CACHED_SWAP_DELTA + r"""
__device__ void prepare(const Data &d, const int *p, cache_t *cache, ll *work) {
  const int n = d.n;
  cache_t *P = cache + n * n, *PT = P + n * n;
  for (int k = mh_tid(); k < n * n; k += mh_nthreads()) {
    const int x = k / n, y = k % n;
    P[k] = d.b[p[x] * n + p[y]];
    PT[y * n + x] = P[k];
  }
  __syncthreads();
  for (int i = 0; i < n; ++i)
    for (int j = i + 1 + mh_tid(); j < n; j += mh_nthreads()) cache[i * n + j] = tq_pair(d, P, PT, i, j);
}
__device__ ll tq_ends(const Data &d, const cache_t *P, const cache_t *PT, int k, int u) {
  // tq_pair(k, u) but its sum over m: the m = k, u terms of that sum out, the exact ones in
  const int n = d.n;
  const int *ak = d.a + k * n, *au = d.a + u * n, *tk = d.at + k * n, *tu = d.at + u * n;
  const cache_t *Pk = P + k * n, *Pu = P + u * n, *Qk = PT + k * n, *Qu = PT + u * n;
  ll dl = (ll)(ak[k] - au[u]) * (Pu[u] - Pk[k]) + (ll)(ak[u] - au[k]) * (Pu[k] - Pk[u]);
  for (int t = 0; t < 2; ++t) {
    const int m = t ? u : k;
    dl -= (ll)(tk[m] - tu[m]) * (Qu[m] - Qk[m]) + (ll)(ak[m] - au[m]) * (Pu[m] - Pk[m]);
  }
  return dl;
}
__device__ void update_swap(const Data &d, const int *p, cache_t *cache, int r, int s, ll *work) {
  const int n = d.n, t0 = mh_tid(), nt = mh_nthreads();
  const int *a = d.a, *at = d.at;
  cache_t *P = cache + n * n, *PT = P + n * n;
  for (int k = t0; k < n; k += nt) {  // rows r and s of P and PT trade places
    ll x = P[r * n + k]; P[r * n + k] = P[s * n + k]; P[s * n + k] = x;
    x = PT[r * n + k]; PT[r * n + k] = PT[s * n + k]; PT[s * n + k] = x;
  }
  __syncthreads();
  for (int k = t0; k < n; k += nt) {  // then columns r and s
    ll x = P[k * n + r]; P[k * n + r] = P[k * n + s]; P[k * n + s] = x;
    x = PT[k * n + r]; PT[k * n + r] = PT[k * n + s]; PT[k * n + s] = x;
  }
  __syncthreads();
  ll *U = work, *V = work + n, *W = work + 2 * n, *X = work + 3 * n;
  for (int k = t0; k < n; k += nt) {
    U[k] = a[r * n + k] - a[s * n + k];
    V[k] = P[s * n + k] - P[r * n + k];
    W[k] = at[r * n + k] - at[s * n + k];
    X[k] = PT[s * n + k] - PT[r * n + k];
  }
  __syncthreads();
  for (int i = 0; i < n; ++i) {  // Taillard's O(1) update of every pair (the touching ones redone below)
    const ll ui = U[i], vi = V[i], wi = W[i], xi = X[i];
    cache_t *row = cache + i * n;
    for (int j = i + 1 + t0; j < n; j += nt) row[j] += (ui - U[j]) * (vi - V[j]) + (wi - W[j]) * (xi - X[j]);
  }
  __syncthreads();
  // the pairs (k, r) and (k, s): tq_pair's sums over m for every k at once (row m of a, at, P,
  // PT holds column m of the transposes: a[m][k] = at[k][m]), then its end terms
  ll *sr = work, *ss = work + n;
  for (int k = t0; k < n; k += nt) { sr[k] = 0; ss[k] = 0; }
  for (int m = 0; m < n; ++m) {
    const int *am = a + m * n, *tm = at + m * n;
    const cache_t *Pm = P + m * n, *Qm = PT + m * n;
    const int tr = at[r * n + m], ts = at[s * n + m], ar = a[r * n + m], as = a[s * n + m];
    const ll cr = PT[r * n + m], cs = PT[s * n + m], br = P[r * n + m], bs = P[s * n + m];
    for (int k = t0; k < n; k += nt) {
      sr[k] += (ll)(am[k] - tr) * (cr - Pm[k]) + (ll)(tm[k] - ar) * (br - Qm[k]);
      ss[k] += (ll)(am[k] - ts) * (cs - Pm[k]) + (ll)(tm[k] - as) * (bs - Qm[k]);
    }
  }
  for (int k = t0; k < n; k += nt) {
    if (k == r || k == s) continue;
    cache[(k < r ? k : r) * n + (k < r ? r : k)] = sr[k] + tq_ends(d, P, PT, k, r);
    cache[(k < s ? k : s) * n + (k < s ? s : k)] = ss[k] + tq_ends(d, P, PT, k, s);
  }
  if (t0 == 0) cache[r * n + s] = tq_pair(d, P, PT, r, s);
}
"""


class TaillardQAP(UserQAP):
    """The QAP through the cache hooks with Taillard's layout (QAP_TAILLARD)."""

    kind = "tqap"
    device_code = QAP_TAILLARD

    def data(self) -> dict:
        a = self.a.astype(np.int32)
        return {"a": a, "at": np.ascontiguousarray(a.T), "b": self.b.astype(np.int32)}

    def cache_size(self) -> int:
        return 3 * self.n * self.n

    def work_size(self) -> int:
        return 4 * self.n


#: The same for a QAP whose two matrices are symmetric (Taillard's instances): the transposes are
#: the matrices themselves, so the formulas halve (as the built-in's MH_QAP_SYMMETRIC build does):
#: the cache is the delta matrix and P, every pair's O(1) update one product, doubled.
QAP_TAILLARD_SYM = r"""
__device__ ll sq_ends(const Data &d, const cache_t *P, int i, int j) {
  // the terms of sq_pair(i, j) outside its sum: the k = i, j terms out, the exact ones in
  const int n = d.n;
  const int *ai = d.a + i * n, *aj = d.a + j * n;
  const cache_t *bi = P + i * n, *bj = P + j * n;
  return -2 * (ai[i] - aj[i]) * (bj[i] - bi[i]) - 2 * (ai[j] - aj[j]) * (bj[j] - bi[j]) +
         (ai[i] - aj[j]) * (bj[j] - bi[i]) + (ai[j] - aj[i]) * (bj[i] - bi[j]);
}
__device__ ll sq_pair(const Data &d, const cache_t *P, int i, int j) {
  const int n = d.n;
  const int *ai = d.a + i * n, *aj = d.a + j * n;
  const cache_t *bi = P + i * n, *bj = P + j * n;
  ll sum = 0;
  for (int k = 0; k < n; ++k) sum += (ai[k] - aj[k]) * (bj[k] - bi[k]);
  return 2 * sum + sq_ends(d, P, i, j);
}
""" + QAP_VALUE + CACHED_SWAP_DELTA + r"""
__device__ void prepare(const Data &d, const int *p, cache_t *cache, ll *work) {
  const int n = d.n;
  cache_t *P = cache + n * n;
  for (int k = mh_tid(); k < n * n; k += mh_nthreads()) P[k] = d.b[p[k / n] * n + p[k % n]];
  __syncthreads();
  for (int i = 0; i < n; ++i)
    for (int j = i + 1 + mh_tid(); j < n; j += mh_nthreads()) cache[i * n + j] = sq_pair(d, P, i, j);
}
__device__ void update_swap(const Data &d, const int *p, cache_t *cache, int r, int s, ll *work) {
  const int n = d.n, t0 = mh_tid(), nt = mh_nthreads();
  const int *a = d.a;
  cache_t *P = cache + n * n;
  for (int k = t0; k < n; k += nt) { ll x = P[r * n + k]; P[r * n + k] = P[s * n + k]; P[s * n + k] = x; }
  __syncthreads();
  for (int k = t0; k < n; k += nt) { ll x = P[k * n + r]; P[k * n + r] = P[k * n + s]; P[k * n + s] = x; }
  __syncthreads();
  ll *U = work, *V = work + n;
  for (int k = t0; k < n; k += nt) {
    U[k] = a[r * n + k] - a[s * n + k];
    V[k] = P[s * n + k] - P[r * n + k];
  }
  __syncthreads();
  for (int i = 0; i < n; ++i) {  // Taillard's O(1) update of every pair (the touching ones redone below)
    const ll ui = U[i], vi = V[i];
    cache_t *row = cache + i * n;
    for (int j = i + 1 + t0; j < n; j += nt) row[j] += 2 * (ui - U[j]) * (vi - V[j]);
  }
  __syncthreads();
  // the pairs (k, r) and (k, s): sq_pair's sums for every k at once, one pass over the rows m
  ll *sr = work, *ss = work + n;
  for (int k = t0; k < n; k += nt) { sr[k] = 0; ss[k] = 0; }
  for (int m = 0; m < n; ++m) {
    const int *am = a + m * n;
    const cache_t *Pm = P + m * n;
    const int ar = a[r * n + m], as = a[s * n + m];
    const ll br = P[r * n + m], bs = P[s * n + m];
    for (int k = t0; k < n; k += nt) {
      sr[k] += (am[k] - ar) * (br - Pm[k]);
      ss[k] += (am[k] - as) * (bs - Pm[k]);
    }
  }
  for (int k = t0; k < n; k += nt) {
    if (k == r || k == s) continue;
    cache[(k < r ? k : r) * n + (k < r ? r : k)] = 2 * sr[k] + sq_ends(d, P, k, r);
    cache[(k < s ? k : s) * n + (k < s ? s : k)] = 2 * ss[k] + sq_ends(d, P, k, s);
  }
  if (t0 == 0) cache[r * n + s] = sq_pair(d, P, r, s);
}
"""


class SymmetricTaillardQAP(UserQAP):
    """The QAP of two symmetric matrices through the cache hooks (QAP_TAILLARD_SYM)."""

    kind = "sqap"
    device_code = QAP_TAILLARD_SYM

    def __init__(self, a, b, name="sqap", cache_dtype="int64"):
        super().__init__(a, b, name=name, cache_dtype=cache_dtype)
        if not ((self.a == self.a.T).all() and (self.b == self.b.T).all()):
            raise MetaheurError("sqap problem: both matrices must be symmetric")

    def cache_size(self) -> int:
        return 2 * self.n * self.n

    def work_size(self) -> int:
        return 2 * self.n


def random_symmetric_qap_arrays(n: int, seed: int):
    a, b = random_qap_arrays(n, seed)
    return a + a.T, b + b.T


#: The minimum latency problem (the travelling repairman, a route from a depot): each element's
#: arrival time is the path length from the depot to it; the value is their sum. Its cost keeps the
#: arrival times in the per-thread scratch (d.scratch); the reversal and segment moves get pair
#: deltas and rows that walk the moved route without copying it.
LATENCY_COST = r"""
__device__ ll cost(const Data &d, const int *perm) {
  const int m = d.n + 1;
  ll t = 0, total = 0;
  int prev = d.n;
  for (int k = 0; k < d.n; ++k) { t += d.dist[prev * m + perm[k]]; d.scratch[k] = t; prev = perm[k]; }
  for (int k = 0; k < d.n; ++k) total += d.scratch[k];
  return total;
}
"""
LATENCY_MOVES = LATENCY_COST + r"""
/* The element at position k after the segment move (s, len, j, rev), or the reversal of
 * positions s..j (len = 0). */
__device__ int lat_elem(const int *perm, int s, int len, int j, int rev, int k) {
  if (len == 0) return k >= s && k <= j ? perm[s + j - k] : perm[k];
  if (k >= j && k < j + len) return rev ? perm[s + len - 1 - (k - j)] : perm[s + k - j];
  const int x = k < j ? k : k - len;
  return x < s ? perm[x] : perm[x + len];
}
__device__ ll lat_moved(const Data &d, const int *perm, int s, int len, int j, int rev) {
  const int m = d.n + 1;
  ll t = 0, total = 0;
  int prev = d.n;
  for (int k = 0; k < d.n; ++k) {
    const int e = lat_elem(perm, s, len, j, rev, k);
    t += d.dist[prev * m + e];
    total += t;
    prev = e;
  }
  return total;
}
__device__ ll reverse_delta(const Data &d, const int *perm, const cache_t *cache, int i, int j) {
  return lat_moved(d, perm, i, 0, j, 0) - cost(d, perm);
}
__device__ ll segment_delta(const Data &d, const int *perm, const cache_t *cache, int i, int len, int j, int rev) {
  return lat_moved(d, perm, i, len, j, rev) - cost(d, perm);
}
__device__ void reverse_row(const Data &d, const int *perm, const cache_t *cache, int i, ll *out, ll *work) {
  for (int j = mh_tid(); j < d.n; j += mh_nthreads())
    out[j] = j == i ? 0 : reverse_delta(d, perm, cache, i < j ? i : j, i < j ? j : i);
}
__device__ void segment_row(const Data &d, const int *perm, const cache_t *cache, int i, int len, int rev, ll *out,
                            ll *work) {
  for (int j = mh_tid(); j <= d.n - len; j += mh_nthreads())
    out[j] = j == i ? 0 : segment_delta(d, perm, cache, i, len, j, rev);
}
"""


class Latency(PermutationProblem):
    """Minimum latency from a depot: scratch in cost, reversal and segment deltas and rows, and
    candidate lists (each element's nearest others)."""

    kind = "latency"
    title = "minimum latency (test)"
    moves = ("segment", "reverse", "insert", "swap")
    device_code = LATENCY_MOVES
    segment_length = 3

    def __init__(self, dist, neighbours: int = 4, name="latency"):
        self.dist = np.asarray(dist, dtype=np.int64)  # (n + 1) x (n + 1), the depot last
        self.neighbours = neighbours
        super().__init__(name=name, n=len(self.dist) - 1)

    def scratch_size(self) -> int:
        return self.n

    def data(self) -> dict:
        return {"dist": self.dist.astype(np.int32)}

    def evaluate(self, perms):
        perms = np.asarray(perms, dtype=np.int64).reshape(-1, self.n)
        prev = np.concatenate([np.full((len(perms), 1), self.n), perms[:, :-1]], axis=1)
        return np.cumsum(self.dist[prev, perms], axis=1).sum(axis=1).astype(np.int64)

    def candidates(self):
        if not self.neighbours:
            return None
        d = self.dist[:self.n, :self.n] + np.diag(np.full(self.n, 2**40))
        return np.argsort(d, axis=1, kind="stable")[:, :self.neighbours]


class LatencyCostOnly(Latency):
    """The same problem with its cost alone: every move is evaluated by cost after the move."""

    kind = "latency_cost"
    device_code = LATENCY_COST
    segment_length = 2
    segment_reverse = False


def random_latency(n: int, seed: int, cls=Latency, **kw) -> Latency:
    rng = np.random.default_rng(seed)
    xy = rng.integers(0, 100, size=(n + 1, 2))
    dist = np.rint(np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))).astype(np.int64)
    return cls(dist, **kw)
