/* perm_ga.cu - genetic operators for permutations as assignments (element i -> position p[i]):
 * the QAP's GA and a user problem's.
 * One block = one child; thread 0 builds it (O(n) work each, negligible next to tabu search).
 *
 * perm_crossover: op 0 = PMX, partially mapped crossover (Goldberg and Lingle 1985): a random
 *   slice of parent A, the other positions from B, repaired through the slice's mapping;
 *   op 1 = CX, cycle crossover (Oliver, Smith and Holland 1987): the cycles of the two parents
 *   alternate, so every unit keeps the location it has in A or in B (position-preserving);
 *   op 2 = UX, uniform crossover with repair (as in Misevicius' and Drezner's hybrid GAs):
 *   locations shared by both parents are kept, the others are taken from A or B at random when
 *   still free, and the remaining units get the remaining locations in random order.
 * perm_mutate: `swaps` random transpositions (swap mutation).
 * Random draws: stream keys[c], counter counters[c] (updated), see mh_rng.cuh.
 * pairs: C x 2 indices into pop (P x n); children: C x n; work: C x 2n ints.
 */
#include "mh_common.cuh"
#include "mh_rng.cuh"

extern "C" __global__ void perm_crossover(const int *pop, const int *pairs, int n, int op,
                                          const unsigned long long *keys, long long *counters, int *children,
                                          int *work) {
  const ll c = mh_block();
  if (mh_tid() != 0) return;
  const int *A = pop + (ll)pairs[2 * c] * n, *B = pop + (ll)pairs[2 * c + 1] * n;
  int *child = children + c * n;
  int *used = work + c * 2 * n, *aux = used + n; /* used: location taken; aux: scratch */
  const unsigned long long key = keys[c];
  unsigned long long ctr = (unsigned long long)counters[c];
  for (int i = 0; i < n; ++i) { child[i] = -1; used[i] = 0; }
  if (op == 0) {
    int lo = mh_below(key, ctr++, n), hi = mh_below(key, ctr++, n);
    if (lo > hi) { const int t = lo; lo = hi; hi = t; }
    for (int i = 0; i < n; ++i) aux[i] = -1;          /* aux[location] = unit holding it in A's slice */
    for (int i = lo; i <= hi; ++i) { child[i] = A[i]; used[A[i]] = 1; aux[A[i]] = i; }
    for (int i = 0; i < n; ++i) {
      if (i >= lo && i <= hi) continue;
      int v = B[i];
      while (used[v]) v = B[aux[v]];                  /* follow the mapping A-slice -> B */
      child[i] = v;
      used[v] = 1;
    }
  } else if (op == 1) {
    for (int i = 0; i < n; ++i) aux[B[i]] = i;        /* aux[location] = unit holding it in B */
    int from_a = 1;
    for (int start = 0; start < n; ++start) {
      if (child[start] >= 0) continue;
      int i = start;
      do {                                            /* one cycle: i -> unit holding A[i] in B */
        child[i] = from_a ? A[i] : B[i];
        i = aux[A[i]];
      } while (i != start);
      from_a = !from_a;
    }
  } else {
    int free_count = 0;
    for (int i = 0; i < n; ++i)
      if (A[i] == B[i]) { child[i] = A[i]; used[A[i]] = 1; }
    for (int i = 0; i < n; ++i) {
      if (child[i] >= 0) continue;
      const int first = (mh_rand64(key, ctr++) >> 63) ? A[i] : B[i], second = first == A[i] ? B[i] : A[i];
      if (!used[first]) { child[i] = first; used[first] = 1; }
      else if (!used[second]) { child[i] = second; used[second] = 1; }
    }
    for (int v = 0; v < n; ++v)
      if (!used[v]) aux[free_count++] = v;
    for (int m = free_count - 1; m > 0; --m) {        /* shuffle the free locations */
      const int r = mh_below(key, ctr++, m + 1), t = aux[m];
      aux[m] = aux[r]; aux[r] = t;
    }
    for (int i = 0, f = 0; i < n; ++i)
      if (child[i] < 0) child[i] = aux[f++];
  }
  counters[c] = (ll)ctr;
}

extern "C" __global__ void perm_mutate(int *children, int n, int swaps, const unsigned long long *keys,
                                       long long *counters) {
  const ll c = mh_block();
  if (mh_tid() != 0 || n < 2) return;
  int *p = children + c * n;
  const unsigned long long key = keys[c];
  unsigned long long ctr = (unsigned long long)counters[c];
  for (int m = 0; m < swaps; ++m) {
    const int i = mh_below(key, ctr++, n);
    int j = mh_below(key, ctr++, n - 1);
    j += j >= i;
    const int t = p[i]; p[i] = p[j]; p[j] = t;
  }
  counters[c] = (ll)ctr;
}
