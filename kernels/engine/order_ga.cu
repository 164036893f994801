/* order_ga.cu - genetic operators for orders (a tour's cities, a schedule's jobs): the TSP's GA and
 * a user problem's. One block = one child, thread 0.
 *
 * order_crossover: OX (Davis 1985; Oliver, Smith and Holland 1987): a random slice of parent A
 *   is copied in place, the other positions take the remaining cities in the order
 *   they appear in B after the slice (it keeps A's slice edges and much of B's relative order).
 * order_reversals: `count` random segment reversals of at most `window` cities each (a
 *   2-opt move between nearby positions: the edge-preserving counterpart of swap mutation).
 * Random draws: stream keys[c], counter counters[c] (updated), see mh_rng.cuh.
 * pairs: C x 2 indices into pop (P x n); children: C x n; work: C x n ints.
 */
#include "mh_common.cuh"
#include "mh_rng.cuh"

extern "C" __global__ void order_crossover(const int *pop, const int *pairs, int n, const unsigned long long *keys,
                                           long long *counters, int *children, int *work) {
  const ll c = mh_block();
  if (mh_tid() != 0) return;
  const int *A = pop + (ll)pairs[2 * c] * n, *B = pop + (ll)pairs[2 * c + 1] * n;
  int *child = children + c * n, *in_slice = work + c * n;
  const unsigned long long key = keys[c];
  unsigned long long ctr = (unsigned long long)counters[c];
  int lo = mh_below(key, ctr++, n), hi = mh_below(key, ctr++, n);
  if (lo > hi) { const int t = lo; lo = hi; hi = t; }
  for (int v = 0; v < n; ++v) in_slice[v] = 0;
  for (int i = lo; i <= hi; ++i) { child[i] = A[i]; in_slice[A[i]] = 1; }
  int out = (hi + 1) % n;
  for (int m = 1; m <= n; ++m) {
    const int v = B[(hi + m) % n];
    if (in_slice[v]) continue;
    child[out] = v;
    out = (out + 1) % n;
  }
  counters[c] = (ll)ctr;
}

extern "C" __global__ void order_reversals(int *children, int n, int count, int window,
                                           const unsigned long long *keys, long long *counters) {
  const ll c = mh_block();
  if (mh_tid() != 0 || n < 4) return;
  int *t = children + c * n;
  const unsigned long long key = keys[c];
  unsigned long long ctr = (unsigned long long)counters[c];
  const int w = mh_imax(2, mh_imin(window, n - 1));
  for (int m = 0; m < count; ++m) {
    int i = mh_below(key, ctr++, n);
    int len = 2 + mh_below(key, ctr++, w - 1);
    int j = (i + len - 1) % n;
    for (int s = len / 2; s > 0; --s) {
      const int x = t[i];
      t[i] = t[j]; t[j] = x;
      i = mh_pos_next(i, n);
      j = mh_pos_prev(j, n);
    }
  }
  counters[c] = (ll)ctr;
}
