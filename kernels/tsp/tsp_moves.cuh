/* tsp_moves.cuh - exact deltas of the TSP moves on a tour stored as an array of cities.
 *
 * 2-opt (i, j), 0 <= i, i + 2 <= j <= n - 1, (i, j) != (0, n - 1): reverse t[i+1 .. j], replacing
 *   edges (t_i, t_i+1), (t_j, t_j+1) by (t_i, t_j), (t_i+1, t_j+1)      (Croes 1958)
 * Or-opt (i, L, j, rev), L in 1..3: move the segment t[i .. i+L-1] (positions mod n) between t_j and
 *   t_j+1, reversed when rev; j must not be i-1 .. i+L-1 (mod n)       (Or 1976)
 */
#ifndef MH_TSP_MOVES_CUH
#define MH_TSP_MOVES_CUH

#include "tsp_dist.cuh"

#define MH_D(x, y) ((ll)mh_tsp_dist(xy, mat, n, (x), (y)))

__device__ __forceinline__ ll mh_2opt_delta(const double *xy, const int *mat, const int *t, int n, int i, int j) {
  const int a = t[i], b = t[i + 1], c = t[j], d = t[j + 1 == n ? 0 : j + 1];
  return MH_D(a, c) + MH_D(b, d) - MH_D(a, b) - MH_D(c, d);
}

/* Position offset of j past i - 1 (mod n): the Or-opt move (i, L, j) is valid iff it exceeds L. */
__device__ __forceinline__ bool mh_oropt_valid(int n, int i, int L, int j) {
  int off = j - i + 1;
  off = off < 0 ? off + n : (off >= n ? off - n : off);
  return off > L;
}

__device__ __forceinline__ ll mh_oropt_delta(const double *xy, const int *mat, const int *t, int n, int i, int L,
                                             int j, int rev) {
  const int prev = t[i == 0 ? n - 1 : i - 1];
  const int s0 = t[i], sl = t[(i + L - 1) % n], next = t[(i + L) % n];
  const int tj = t[j], tj1 = t[j + 1 == n ? 0 : j + 1];
  const ll removed = MH_D(prev, s0) + MH_D(sl, next) + MH_D(tj, tj1);
  const ll added = MH_D(prev, next) + (rev ? MH_D(tj, sl) + MH_D(s0, tj1) : MH_D(tj, s0) + MH_D(sl, tj1));
  return added - removed;
}

/* d(t[p], t[q]) from the tour-order cache of tsp_cache_tour (tsp_moves.cu): for coordinate weights
 * the coordinates txy[2 p], txy[2 q] (stored along the tour, so neighbouring positions are
 * neighbouring addresses; one position is one city), else the distance of the cities t[p], t[q]. */
__device__ __forceinline__ ll mh_dist_at(const double *xy, const int *mat, const int *t, const double *txy, int n,
                                         int p, int q) {
#if MH_TSP_COORDS
  return (ll)mh_tsp_dist(txy, mat, n, p, q);
#else
  return MH_D(t[p], t[q]);
#endif
}

#endif /* MH_TSP_MOVES_CUH */
