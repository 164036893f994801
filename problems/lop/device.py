"""The linear ordering problem's device code (the device contract of docs/problems.md), one source
for both builds. ``m`` is M and ``d`` is D = M - M^T, both row-major, int32 when their entries fit;
values and deltas in the problem's own sense.

* ``cost``: the sum over i < j of M[p_i][p_j], one thread, O(n^2).
* ``swap_delta``, ``insert_delta``: O(j - i) sums of D entries.
* ``insert_row``: every insertion of one item in O(n) (Schiavinotto and Stuetzle 2004), by two
  running sums on one thread, by a block's exclusive prefix sums on a GPU.
* ``partial_insert_row``: every insertion of an item into a partial order (NEH, iterated greedy).
"""

from __future__ import annotations

DEVICE_CODE = r"""
/* The value: sum over i < j of M[p_i][p_j]; one thread, O(n^2). */
__device__ ll cost(const Data &d, const int *perm) {
  ll v = 0;
  for (int i = 0; i + 1 < d.n; ++i) {
    const auto *row = d.m + (ll)perm[i] * d.n;
    for (int j = i + 1; j < d.n; ++j) v += row[perm[j]];
  }
  return v;
}

/* Swap positions i < j (items a, b): the pair (a, b) turns, and each item c between changes
 * sides with both: -D[a][b] + sum_c (D[b][c] - D[a][c]). */
__device__ ll swap_delta(const Data &d, const int *perm, const ll *cache, int i, int j) {
  const auto *ra = d.d + (ll)perm[i] * d.n, *rb = d.d + (ll)perm[j] * d.n;
  ll v = -(ll)ra[perm[j]];
  for (int k = i + 1; k < j; ++k) v += (ll)rb[perm[k]] - (ll)ra[perm[k]];
  return v;
}

/* Move the item x at position i to position j: x passes the items between, each pair turns:
 * -sum D[x][p_k] over k in (i, j] (moving right), +sum D[x][p_k] over k in [j, i) (left). */
__device__ ll insert_delta(const Data &d, const int *perm, const ll *cache, int i, int j) {
  const auto *rx = d.d + (ll)perm[i] * d.n;
  ll v = 0;
  if (i < j) for (int k = i + 1; k <= j; ++k) v -= rx[perm[k]];
  else for (int k = j; k < i; ++k) v += rx[perm[k]];
  return v;
}

/* In place, a[k] <- a[0] + ... + a[k-1] for k < m (exclusive prefix sums), every thread of the
 * block together (each scans a contiguous chunk; the chunks' totals are added after a barrier). */
__device__ void lop_block_exclusive_scan(ll *a, int m) {
  __shared__ ll s_total[MH_MAX_BLOCK];
  const int t = mh_tid(), nt = mh_nthreads(), chunk = (m + nt - 1) / nt;
  const int lo = mh_imin(m, t * chunk), hi = mh_imin(m, lo + chunk);
  ll run = 0;
  for (int k = lo; k < hi; ++k) { const ll x = a[k]; a[k] = run; run += x; }
  s_total[t] = run;
  __syncthreads();
  ll offset = 0;
  for (int u = 0; u < t; ++u) offset += s_total[u];
  for (int k = lo; k < hi; ++k) a[k] += offset;
  __syncthreads();
}

/* out[j] = insert_delta(i, j) for every j in O(n): one thread keeps a running sum each way from i;
 * a block of threads uses, with t_k = D[x][p_k] (t_i = 0) and E its exclusive prefix sums,
 * out[j] = E(i) - E(j) for j <= i and E(i) - E(j) - t_j for j > i. */
__device__ void insert_row(const Data &d, const int *perm, const ll *cache, int i, ll *out, ll *work) {
  const auto *rx = d.d + (ll)perm[i] * d.n;
  const int t = mh_tid(), nt = mh_nthreads();
  if (nt == 1) { /* one thread (the CPU build): the two running sums, outwards from i */
    ll v = 0;
    out[i] = 0;
    for (int k = i + 1; k < d.n; ++k) out[k] = v -= rx[perm[k]];
    v = 0;
    for (int k = i - 1; k >= 0; --k) out[k] = v += rx[perm[k]];
    return;
  }
  for (int k = t; k < d.n; k += nt) out[k] = k == i ? 0 : (ll)rx[perm[k]];
  __syncthreads();
  lop_block_exclusive_scan(out, d.n);
  const ll at_i = out[i];
  __syncthreads();
  for (int k = t; k < d.n; k += nt) out[k] = at_i - out[k] - (k > i ? (ll)rx[perm[k]] : 0);
  __syncthreads();
}

/* out[k] = value of the partial order seq[0..len) with elem inserted at position k, k = 0..len:
 * the partial order's own value, plus elem's pairs: sum M[elem][s] with elem first, each step
 * right past seq_k adding -D[elem][seq_k]. */
__device__ void partial_insert_row(const Data &d, const int *seq, int len, int elem, ll *out, ll *work) {
  const auto *me = d.m + (ll)elem * d.n;
  const auto *de = d.d + (ll)elem * d.n;
  const int t = mh_tid(), nt = mh_nthreads();
  ll part = 0;
  for (int s = t; s < len; s += nt) {
    const auto *row = d.m + (ll)seq[s] * d.n;
    part += me[seq[s]];
    for (int u = s + 1; u < len; ++u) part += row[seq[u]];
  }
  const ll base = mh_block_sum(part);
  for (int k = t; k <= len; k += nt) out[k] = k < len ? -(ll)de[seq[k]] : 0;
  __syncthreads();
  lop_block_exclusive_scan(out, len + 1);
  for (int k = t; k <= len; k += nt) out[k] += base;
  __syncthreads();
}
"""
