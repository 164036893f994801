/* tsp_moves.cu - batched TSP neighbourhood evaluation. One block = one tour.
 *
 * Every kernel evaluates one neighbourhood of every tour and returns its best move (smallest
 * delta, ties to the smallest move index) in move_out[4 sol ..] and delta_out[sol]; "no valid
 * move" is move (-1, -1, -1, -1) with delta 0. With write_all != 0 it also writes the delta of
 * every move index to all_out (MH_LL_MAX for invalid ones): small instances and the tests.
 * Arrays: tours, pos (position of each city) are nsol x n int32; neigh is n x k int32 (k nearest
 * cities of each city); xy is n x 2 double and mat n x n int32 (see tsp_dist.cuh).
 */
#include "mh_common.cuh"
#include "tsp_moves.cuh"

__device__ __forceinline__ void mh_store_best(ll key, ll idx, int *out, ll *delta_out, ll sol, int m0, int m1,
                                              int m2, int m3) {
  if (mh_tid() != 0) return;
  const bool none = idx == MH_LL_MAX;
  out[4 * sol] = none ? -1 : m0;
  out[4 * sol + 1] = none ? -1 : m1;
  out[4 * sol + 2] = none ? -1 : m2;
  out[4 * sol + 3] = none ? -1 : m3;
  delta_out[sol] = none ? 0 : key;
}

/* Full 2-opt neighbourhood, n(n-3)/2 moves. Move index i * n + j; move_out = (i, j, 0, 0). */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_2opt_full(const double *xy, const int *mat, const int *tours, int n, int write_all,
              long long *all_out, int *move_out, long long *delta_out) {
  const ll sol = mh_block();
  const int *t = tours + sol * n;
  ll *all = all_out + sol * n * n;
  ll key = MH_LL_MAX, idx = MH_LL_MAX;
  for (int i = threadIdx.y; i < n; i += blockDim.y)
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
      const bool valid = j >= i + 2 && !(i == 0 && j == n - 1);
      if (valid) {
        const ll d = mh_2opt_delta(xy, mat, t, n, i, j);
        mh_argmin_step(&key, &idx, d, (ll)i * n + j);
        if (write_all) all[(ll)i * n + j] = d;
      } else if (write_all) {
        all[(ll)i * n + j] = MH_LL_MAX;
      }
    }
  mh_block_argmin(&key, &idx);
  mh_store_best(key, idx, move_out, delta_out, sol, (int)(idx / n), (int)(idx % n), 0, 0);
}

/* Full Or-opt neighbourhood: segments of 1-3 cities, every insertion edge, both orientations
 * (one for single cities). Move index ((i * 3 + L - 1) * n + j) * 2 + rev; move_out = (i, L, j, rev). */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_oropt_full(const double *xy, const int *mat, const int *tours, int n, int write_all,
               long long *all_out, int *move_out, long long *delta_out) {
  const ll sol = mh_block();
  const int *t = tours + sol * n;
  ll *all = all_out + sol * (ll)n * 3 * n * 2;
  ll key = MH_LL_MAX, idx = MH_LL_MAX;
  for (int row = threadIdx.y; row < 3 * n; row += blockDim.y) {
    const int i = row / 3, L = row % 3 + 1;
    for (int j = threadIdx.x; j < n; j += blockDim.x)
      for (int rev = 0; rev < 2; ++rev) {
        const ll e = ((ll)row * n + j) * 2 + rev;
        const bool valid = n >= L + 3 && mh_oropt_valid(n, i, L, j) && (rev == 0 || L > 1);
        if (valid) {
          const ll d = mh_oropt_delta(xy, mat, t, n, i, L, j, rev);
          mh_argmin_step(&key, &idx, d, e);
          if (write_all) all[e] = d;
        } else if (write_all) {
          all[e] = MH_LL_MAX;
        }
      }
  }
  mh_block_argmin(&key, &idx);
  const ll row = idx / 2 / n;
  mh_store_best(key, idx, move_out, delta_out, sol, (int)(row / 3), (int)(row % 3) + 1, (int)(idx / 2 % n),
                (int)(idx % 2));
}

/* Candidate 2-opt: for each position i (city a) and each of a's k neighbours c (at position j),
 * variant 0 joins a-c and succ(a)-succ(c), variant 1 joins a-c and pred(a)-pred(c).
 * Move index (i * k + q) * 2 + v; move_out = the equivalent full 2-opt move (x, y, 0, 0), x < y. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_2opt_cand(const double *xy, const int *mat, const int *tours, const int *pos,
              const int *neigh, int n, int k, int write_all, long long *all_out,
              int *move_out, long long *delta_out) {
  const ll sol = mh_block();
  const int *t = tours + sol * n, *ps = pos + sol * n;
  ll *all = all_out + sol * (ll)n * k * 2;
  ll key = MH_LL_MAX, idx = MH_LL_MAX;
  const int tid = mh_tid(), nt = mh_nthreads();
  for (ll e = tid; e < (ll)n * k; e += nt) {
    const int i = (int)(e / k), a = t[i], c = neigh[(ll)a * k + (int)(e % k)], j = ps[c];
    for (int v = 0; v < 2; ++v) {
      const int bi = v == 0 ? (i + 1 == n ? 0 : i + 1) : (i == 0 ? n - 1 : i - 1);
      const int dj = v == 0 ? (j + 1 == n ? 0 : j + 1) : (j == 0 ? n - 1 : j - 1);
      const int b = t[bi], d = t[dj];
      const bool valid = c != a && c != b && d != a;
      if (valid) {
        const ll delta = MH_D(a, c) + MH_D(b, d) - MH_D(a, b) - MH_D(c, d);
        mh_argmin_step(&key, &idx, delta, e * 2 + v);
        if (write_all) all[e * 2 + v] = delta;
      } else if (write_all) {
        all[e * 2 + v] = MH_LL_MAX;
      }
    }
  }
  mh_block_argmin(&key, &idx);
  int x = -1, y = -1;
  if (idx != MH_LL_MAX) {
    const ll e = idx / 2;
    const int v = (int)(idx % 2), i = (int)(e / k), j = ps[neigh[(ll)t[i] * k + (int)(e % k)]];
    x = v == 0 ? i : (i == 0 ? n - 1 : i - 1);
    y = v == 0 ? j : (j == 0 ? n - 1 : j - 1);
    if (x > y) { const int tmp = x; x = y; y = tmp; }
  }
  mh_store_best(key, idx, move_out, delta_out, sol, x, y, 0, 0);
}

/* Candidate Or-opt: a segment (i, L) is inserted next to a neighbour c of one of its end cities,
 * so that this end city becomes adjacent to c: variants 0/1 (neighbours of the first city,
 * forward after c / reversed before c) and 2/3 (of the last city, forward before c / reversed
 * after c). Move index ((i * 3 + L - 1) * k + q) * 4 + v; move_out = (i, L, j, rev). */
__device__ __forceinline__ void mh_oropt_cand_move(const int *t, const int *ps, const int *neigh, int n, int k,
                                                   ll e, int v, int *pi, int *pl, int *pj, int *prev) {
  const ll row = e / k;
  const int i = (int)(row / 3), L = (int)(row % 3) + 1, q = (int)(e % k);
  const int end_city = v < 2 ? t[i] : t[(i + L - 1) % n];
  const int c = neigh[(ll)end_city * k + q], pc = ps[c];
  const bool after_c = v == 0 || v == 3;  /* segment goes between c and succ(c) */
  *pi = i; *pl = L;
  *pj = after_c ? pc : (pc == 0 ? n - 1 : pc - 1);
  *prev = (v == 1 || v == 3) ? 1 : 0;
}

extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_oropt_cand(const double *xy, const int *mat, const int *tours, const int *pos,
               const int *neigh, int n, int k, int write_all, long long *all_out,
               int *move_out, long long *delta_out) {
  const ll sol = mh_block();
  const int *t = tours + sol * n, *ps = pos + sol * n;
  ll *all = all_out + sol * (ll)n * 3 * k * 4;
  ll key = MH_LL_MAX, idx = MH_LL_MAX;
  const int tid = mh_tid(), nt = mh_nthreads();
  for (ll e = tid; e < (ll)n * 3 * k; e += nt)
    for (int v = 0; v < 4; ++v) {
      int i, L, j, rev;
      mh_oropt_cand_move(t, ps, neigh, n, k, e, v, &i, &L, &j, &rev);
      const bool valid = n >= L + 3 && mh_oropt_valid(n, i, L, j) && (rev == 0 || L > 1);
      if (valid) {
        const ll delta = mh_oropt_delta(xy, mat, t, n, i, L, j, rev);
        mh_argmin_step(&key, &idx, delta, e * 4 + v);
        if (write_all) all[e * 4 + v] = delta;
      } else if (write_all) {
        all[e * 4 + v] = MH_LL_MAX;
      }
    }
  mh_block_argmin(&key, &idx);
  int i = -1, L = -1, j = -1, rev = -1;
  if (idx != MH_LL_MAX) mh_oropt_cand_move(t, ps, neigh, n, k, idx / 4, (int)(idx % 4), &i, &L, &j, &rev);
  mh_store_best(key, idx, move_out, delta_out, sol, i, L, j, rev);
}

/* pos[sol][tours[sol][i]] = i. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_positions(const int *tours, int *pos, int n) {
  const ll sol = mh_block();
  for (int i = mh_tid(); i < n; i += mh_nthreads()) pos[sol * n + tours[sol * n + i]] = i;
}

/* Reverse the m positions a, a + 1, ..., a + m - 1 (mod n) of tour t and keep ps (the position
 * of each city) up to date; every thread of the block calls it. */
__device__ void mh_reverse_cyclic(int *t, int *ps, int n, int a, int m) {
  for (int q = mh_tid(); q < m / 2; q += mh_nthreads()) {
    const int x = (a + q) % n, y = (a + m - 1 - q) % n, cx = t[x], cy = t[y];
    t[x] = cy;
    t[y] = cx;
    ps[cy] = x;
    ps[cx] = y;
  }
  __syncthreads();
}

/* One step of best-improvement descent (the GPU local search of Luong, Melab and Talbi 2013: the
 * whole neighbourhood is evaluated in parallel, then the best move is applied): each tour takes
 * the better of its best 2-opt move (move2, delta2: tsp_2opt_cand or tsp_2opt_full) and its best
 * Or-opt move (moveo, deltao: tsp_oropt_cand or tsp_oropt_full), the 2-opt move on ties, when it
 * shortens the tour; cost[sol] += delta and moves[sol] += 1 then. A move is made of reversals of
 * cyclic position ranges: 2-opt (x, y) reverses t[x+1 .. y] or the other side, whichever is
 * shorter; Or-opt (i, L, j, rev) exchanges the segment t[i .. i+L-1] with the cities between it
 * and the insertion point, on the side (after it up to t[j], or from t[j+1] up to it) with fewer. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_apply_best(int *tours, int *pos, int n, const int *move2, const long long *delta2,
               const int *moveo, const long long *deltao, long long *cost,
               long long *moves) {
  const ll sol = mh_block();
  int *t = tours + sol * n, *ps = pos + sol * n;
  const ll d2 = delta2[sol], dor = deltao[sol];
  if (d2 >= 0 && dor >= 0) return;
  const int *m2 = move2 + 4 * sol, *mo = moveo + 4 * sol;
  if (d2 <= dor) {
    const int x = m2[0], y = m2[1], inner = y - x;
    if (inner <= n - inner) mh_reverse_cyclic(t, ps, n, x + 1, inner);
    else mh_reverse_cyclic(t, ps, n, (y + 1) % n, n - inner);
  } else {
    const int i = mo[0], L = mo[1], j = mo[2], rev = mo[3];
    const int after = (j - (i + L - 1) + 2 * n) % n, before = n - L - after;
    if (after <= before) {  /* S M -> M S' */
      if (rev == 0) mh_reverse_cyclic(t, ps, n, i, L);
      mh_reverse_cyclic(t, ps, n, (i + L) % n, after);
      mh_reverse_cyclic(t, ps, n, i, L + after);
    } else {  /* M S -> S' M */
      const int start = (j + 1) % n;
      mh_reverse_cyclic(t, ps, n, start, before);
      if (rev == 0) mh_reverse_cyclic(t, ps, n, i, L);
      mh_reverse_cyclic(t, ps, n, start, before + L);
    }
  }
  if (mh_tid() == 0) {
    cost[sol] += d2 <= dor ? d2 : dor;
    moves[sol] += 1;
  }
}
