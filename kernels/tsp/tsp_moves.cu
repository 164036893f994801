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

/* Full 2-opt neighbourhood, n(n-3)/2 moves. Move index i * n + j; move_out = (i, j, 0, 0). A row i
 * scans only its valid columns j >= i + 2, from i + 2 rounded down to a multiple of 32 (so that a
 * warp's columns stay in aligned 128-byte lines); with write_all the columns before are written
 * invalid by a loop of their own. Rows i = part (mod parts) of the tour, parts blocks a tour (1
 * for tsp_2opt_full). CACHED (tsp_2opt_cached): a move computes the two distances it adds, from
 * the tour-order coordinates txy, and reads the two it removes, the tour's own edges, from e
 * (tsp_cache_tour); else (tsp_2opt_full) four distances of cities gathered by number. The same
 * deltas, exact integers, either way. */
template <bool CACHED>
__device__ __forceinline__ void mh_2opt_scan(const double *__restrict__ xy, const int *__restrict__ mat,
                                             const int *__restrict__ t, const double *__restrict__ txy,
                                             const int *__restrict__ e, int n, int part, int parts, int write_all,
                                             ll *__restrict__ all, ll *key, ll *idx) {
  for (int i = part + parts * (int)threadIdx.y; i < n; i += parts * (int)blockDim.y) {
    const int start = (i + 2) & ~31;
    const ll ei = CACHED ? e[i] : 0;
    if (write_all)
      for (int j = threadIdx.x; j < start && j < n; j += blockDim.x) all[(ll)i * n + j] = MH_LL_MAX;
    for (int j = start + threadIdx.x; j < n; j += blockDim.x) {
      const bool valid = j >= i + 2 && !(i == 0 && j == n - 1);
      if (valid) {
        const ll d = CACHED ? mh_dist_at(xy, mat, t, txy, n, i, j) +
                                  mh_dist_at(xy, mat, t, txy, n, i + 1, j + 1 == n ? 0 : j + 1) - ei - e[j]
                            : mh_2opt_delta(xy, mat, t, n, i, j);
        mh_argmin_step(key, idx, d, (ll)i * n + j);
        if (write_all) all[(ll)i * n + j] = d;
      } else if (write_all) {
        all[(ll)i * n + j] = MH_LL_MAX;
      }
    }
  }
}

/* The block's best full 2-opt move (key, index i * n + j) as (i, j, 0, 0) into out[4 b ..]. */
__device__ __forceinline__ void mh_2opt_store(ll key, ll idx, int *out, ll *delta_out, ll b, int n) {
  mh_store_best(key, idx, out, delta_out, b, (int)(idx / n), (int)(idx % n), 0, 0);
}

extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_2opt_full(const double *xy, const int *mat, const int *tours, int n, int write_all,
              long long *all_out, int *move_out, long long *delta_out) {
  const ll sol = mh_block();
  ll key = MH_LL_MAX, idx = MH_LL_MAX;
  mh_2opt_scan<false>(xy, mat, tours + sol * n, xy, mat, n, 0, 1, write_all, all_out + sol * n * n, &key, &idx);
  mh_block_argmin(&key, &idx);
  mh_2opt_store(key, idx, move_out, delta_out, sol, n);
}

/* Full Or-opt neighbourhood: segments of 1-3 cities, every insertion edge, both orientations
 * (one for single cities). Move index ((i * 3 + L - 1) * n + j) * 2 + rev; move_out = (i, L, j, rev).
 * Rows (i, L) = part (mod parts), parts blocks a tour (1 for tsp_oropt_full). CACHED
 * (tsp_oropt_cached): the three removed edges come from e, and d(prev, next) - the two removed
 * at the segment is computed once a row, so a move computes the two distances that insert the
 * segment, from the tour-order coordinates; else (tsp_oropt_full) six distances a move. */
template <bool CACHED>
__device__ __forceinline__ void mh_oropt_scan(const double *__restrict__ xy, const int *__restrict__ mat,
                                              const int *__restrict__ t, const double *__restrict__ txy,
                                              const int *__restrict__ e, int n, int part, int parts,
                                              int write_all, ll *__restrict__ all, ll *key, ll *idx) {
  for (int row = part + parts * (int)threadIdx.y; row < 3 * n; row += parts * (int)blockDim.y) {
    const int i = row / 3, L = row % 3 + 1;
    const int prev = i == 0 ? n - 1 : i - 1, sl = (i + L - 1) % n, next = (i + L) % n;
    /* the row's part of a cached delta: d(prev, next) added, the segment's two edges removed */
    const ll base = CACHED && n >= L + 3 ? mh_dist_at(xy, mat, t, txy, n, prev, next) - e[prev] - e[sl] : 0;
    for (int j = threadIdx.x; j < n; j += blockDim.x)
      for (int rev = 0; rev < 2; ++rev) {
        const ll m = ((ll)row * n + j) * 2 + rev;
        const bool valid = n >= L + 3 && mh_oropt_valid(n, i, L, j) && (rev == 0 || L > 1);
        if (valid) {
          ll d;
          if (CACHED) {
            const int j1 = j + 1 == n ? 0 : j + 1, near = rev ? sl : i, far = rev ? i : sl;
            d = base + mh_dist_at(xy, mat, t, txy, n, j, near) + mh_dist_at(xy, mat, t, txy, n, far, j1) - e[j];
          } else {
            d = mh_oropt_delta(xy, mat, t, n, i, L, j, rev);
          }
          mh_argmin_step(key, idx, d, m);
          if (write_all) all[m] = d;
        } else if (write_all) {
          all[m] = MH_LL_MAX;
        }
      }
  }
}

/* The block's best full Or-opt move (key, its index) as (i, L, j, rev) into out[4 b ..]. */
__device__ __forceinline__ void mh_oropt_store(ll key, ll idx, int *out, ll *delta_out, ll b, int n) {
  const ll row = idx / 2 / n;
  mh_store_best(key, idx, out, delta_out, b, (int)(row / 3), (int)(row % 3) + 1, (int)(idx / 2 % n), (int)(idx % 2));
}

extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_oropt_full(const double *xy, const int *mat, const int *tours, int n, int write_all,
               long long *all_out, int *move_out, long long *delta_out) {
  const ll sol = mh_block();
  ll key = MH_LL_MAX, idx = MH_LL_MAX;
  mh_oropt_scan<false>(xy, mat, tours + sol * n, xy, mat, n, 0, 1, write_all, all_out + sol * (ll)n * 3 * n * 2,
                       &key, &idx);
  mh_block_argmin(&key, &idx);
  mh_oropt_store(key, idx, move_out, delta_out, sol, n);
}

/* The tour-order cache of tsp_2opt_cached and tsp_oropt_cached, one block a tour: for each
 * position p the length of the tour's own edge there, edge[p] = d(t[p], t[p + 1 mod n]) (nsol x n
 * int32), and for coordinate weights the coordinates of its city, txy[2 p ..] (nsol x n x 2
 * double; not touched for a matrix, which may then be a placeholder). Issue 62: the tour's own
 * edges are two of a 2-opt move's four distances, and coordinates read in tour order are read
 * contiguously where a gather by city number is scattered. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_cache_tour(const double *xy, const int *mat, const int *tours, int n, double *txy_out, int *edge_out) {
  const ll sol = mh_block();
  const int *t = tours + sol * n;
  int *e = edge_out + sol * n;
  for (int p = mh_tid(); p < n; p += mh_nthreads()) {
    const int c = t[p];
#if MH_TSP_COORDS
    txy_out[(sol * n + p) * 2] = xy[2 * c];
    txy_out[(sol * n + p) * 2 + 1] = xy[2 * c + 1];
#endif
    e[p] = mh_tsp_dist(xy, mat, n, c, t[p + 1 == n ? 0 : p + 1]);
  }
}

/* The moves of tsp_2opt_full (CACHED) or tsp_oropt_full from the cache of tsp_cache_tour (txy,
 * edge), bit for bit the same all_out and best moves; parts blocks a tour (grid nsol x parts,
 * so that few tours still fill a GPU's block slots): block b scans tour b / parts, rows = b %
 * parts (mod parts), and writes the best of its rows to move_out[4 b ..], delta_out[b], which
 * tsp_best_of_parts reduces to the tour's (parts = 1: the tour's best move, in place). */
template <bool TWO_OPT>
__device__ __forceinline__ void mh_full_cached(const double *xy, const int *mat, const int *tours, const double *txy,
                                               const int *edge, int n, int parts, int write_all, ll *all_out,
                                               int *move_out, ll *delta_out) {
  const ll b = mh_block(), sol = b / parts;
  const int part = (int)(b % parts);
  const double *tx = MH_TSP_COORDS ? txy + sol * n * 2 : txy;
  ll key = MH_LL_MAX, idx = MH_LL_MAX;
  if (TWO_OPT)
    mh_2opt_scan<true>(xy, mat, tours + sol * n, tx, edge + sol * n, n, part, parts, write_all,
                       all_out + sol * n * n, &key, &idx);
  else
    mh_oropt_scan<true>(xy, mat, tours + sol * n, tx, edge + sol * n, n, part, parts, write_all,
                        all_out + sol * (ll)n * 3 * n * 2, &key, &idx);
  mh_block_argmin(&key, &idx);
  if (TWO_OPT) mh_2opt_store(key, idx, move_out, delta_out, b, n);
  else mh_oropt_store(key, idx, move_out, delta_out, b, n);
}

extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_2opt_cached(const double *xy, const int *mat, const int *tours, const double *txy, const int *edge, int n,
                int parts, int write_all, long long *all_out, int *move_out, long long *delta_out) {
  mh_full_cached<true>(xy, mat, tours, txy, edge, n, parts, write_all, all_out, move_out, delta_out);
}

extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_oropt_cached(const double *xy, const int *mat, const int *tours, const double *txy, const int *edge, int n,
                 int parts, int write_all, long long *all_out, int *move_out, long long *delta_out) {
  mh_full_cached<false>(xy, mat, tours, txy, edge, n, parts, write_all, all_out, move_out, delta_out);
}

/* The best move of each tour from the parts blocks of tsp_2opt_cached (oropt = 0) or
 * tsp_oropt_cached (oropt = 1): smallest delta, ties to the smallest move index (the kernel's),
 * so the move one block a tour finds; a part without a valid move (-1, ...) is skipped. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_best_of_parts(int n, int parts, int oropt, const int *move_in, const long long *delta_in, int *move_out,
                  long long *delta_out) {
  const ll sol = mh_block();
  ll key = MH_LL_MAX, idx = MH_LL_MAX;
  for (int p = mh_tid(); p < parts; p += mh_nthreads()) {
    const ll b = sol * parts + p;
    const int *m = move_in + 4 * b;
    if (m[0] < 0) continue;
    mh_argmin_step(&key, &idx, delta_in[b], oropt ? (((ll)m[0] * 3 + m[1] - 1) * n + m[2]) * 2 + m[3]
                                                  : (ll)m[0] * n + m[1]);
  }
  mh_block_argmin(&key, &idx);
  if (oropt) mh_oropt_store(key, idx, move_out, delta_out, sol, n);
  else mh_2opt_store(key, idx, move_out, delta_out, sol, n);
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
 * of each city) up to date. ``lanes`` threads share the work, this one being ``lane``: the whole
 * block (lanes = block size, every thread calls it, and it ends on a barrier) or one thread alone
 * (lanes = 1, no barrier). */
__device__ __forceinline__ void mh_reverse_cyclic(int *t, int *ps, int n, int a, int m, int lane, int lanes) {
  for (int q = lane; q < m / 2; q += lanes) {
    const int x = (a + q) % n, y = (a + m - 1 - q) % n, cx = t[x], cy = t[y];
    t[x] = cy;
    t[y] = cx;
    ps[cy] = x;
    ps[cx] = y;
  }
  if (lanes > 1) __syncthreads();
}

/* A move as reversals of cyclic position ranges. (a, 0, b, -): 2-opt (x, y) = (a, b) reverses
 * t[x+1 .. y] or the other side, whichever is shorter; (a, L, b, rev), L >= 1: Or-opt (i, L, j,
 * rev) = (a, L, b, rev) exchanges the segment t[i .. i+L-1] with the cities between it and the
 * insertion point, on the side (after it up to t[j], or from t[j+1] up to it) with fewer. */
__device__ __forceinline__ void mh_apply_move(int *t, int *ps, int n, int a, int L, int b, int rev, int lane,
                                              int lanes) {
  if (L == 0) {
    const int inner = b - a;
    if (inner <= n - inner) mh_reverse_cyclic(t, ps, n, a + 1, inner, lane, lanes);
    else mh_reverse_cyclic(t, ps, n, (b + 1) % n, n - inner, lane, lanes);
    return;
  }
  const int after = (b - (a + L - 1) + 2 * n) % n, before = n - L - after;
  if (after <= before) {  /* S M -> M S' */
    if (rev == 0) mh_reverse_cyclic(t, ps, n, a, L, lane, lanes);
    mh_reverse_cyclic(t, ps, n, (a + L) % n, after, lane, lanes);
    mh_reverse_cyclic(t, ps, n, a, L + after, lane, lanes);
  } else {  /* M S -> S' M */
    const int start = (b + 1) % n;
    mh_reverse_cyclic(t, ps, n, start, before, lane, lanes);
    if (rev == 0) mh_reverse_cyclic(t, ps, n, a, L, lane, lanes);
    mh_reverse_cyclic(t, ps, n, start, before + L, lane, lanes);
  }
}

/* The cyclic range of positions (first, first + 1, ..., first + *len - 1 mod n) that the move of
 * mh_apply_move reads (the cities at the ends of the edges it removes) or writes: two moves whose
 * ranges are disjoint have the same delta before and after each other. */
__device__ __forceinline__ void mh_move_span(int n, int a, int L, int b, int *first, int *len) {
  if (L == 0) {
    const int inner = b - a;
    if (inner <= n - inner) { *first = a; *len = inner + 2; }
    else { *first = b; *len = n - inner + 2; }
    return;
  }
  const int after = (b - (a + L - 1) + 2 * n) % n, before = n - L - after;
  if (after <= before) { *first = a == 0 ? n - 1 : a - 1; *len = L + after + 2; }
  else { *first = b; *len = before + L + 2; }
}

/* One step of best-improvement descent (the GPU local search of Luong, Melab and Talbi 2013: the
 * whole neighbourhood is evaluated in parallel, then the best move is applied): each tour takes
 * the better of its best 2-opt move (move2, delta2: tsp_2opt_cand or tsp_2opt_full) and its best
 * Or-opt move (moveo, deltao: tsp_oropt_cand or tsp_oropt_full), the 2-opt move on ties, when it
 * shortens the tour (mh_apply_move); cost[sol] += delta and moves[sol] += 1 then. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_apply_best(int *tours, int *pos, int n, const int *move2, const long long *delta2,
               const int *moveo, const long long *deltao, long long *cost,
               long long *moves) {
  const ll sol = mh_block();
  int *t = tours + sol * n, *ps = pos + sol * n;
  const ll d2 = delta2[sol], dor = deltao[sol];
  if (d2 >= 0 && dor >= 0) return;
  const int *m2 = move2 + 4 * sol, *mo = moveo + 4 * sol, lane = mh_tid(), lanes = mh_nthreads();
  if (d2 <= dor) mh_apply_move(t, ps, n, m2[0], 0, m2[1], 0, lane, lanes);
  else mh_apply_move(t, ps, n, mo[0], mo[1], mo[2], mo[3], lane, lanes);
  if (mh_tid() == 0) {
    cost[sol] += d2 <= dor ? d2 : dor;
    moves[sol] += 1;
  }
}

/* The best improving candidate move anchored at position i of tour t: the 2-opt moves
 * of tsp_2opt_cand and the Or-opt moves of tsp_oropt_cand whose first index is i (smallest
 * delta, ties to the 2-opt moves, then the smallest q and variant).
 * Returns its delta (< 0; 0 when no move at i improves) and writes the move to m[0 .. 3] in the
 * form of mh_apply_move, (x, 0, y, 0) or (i, L, j, rev), (-1, -1, -1, -1) when none. */
__device__ __forceinline__ ll mh_best_move_at(const double *xy, const int *mat, const int *t, const int *ps,
                                              const int *neigh, int n, int k, int i, int *m) {
  ll key = 0, idx = MH_LL_MAX;
  const int a = t[i];
  for (int q = 0; q < k; ++q) {
    const int c = neigh[(ll)a * k + q], j = ps[c];
    for (int v = 0; v < 2; ++v) {
      const int bi = v == 0 ? (i + 1 == n ? 0 : i + 1) : (i == 0 ? n - 1 : i - 1);
      const int dj = v == 0 ? (j + 1 == n ? 0 : j + 1) : (j == 0 ? n - 1 : j - 1);
      const int b = t[bi], d = t[dj];
      if (c == a || c == b || d == a) continue;
      const ll delta = MH_D(a, c) + MH_D(b, d) - MH_D(a, b) - MH_D(c, d);
      if (delta < 0) mh_argmin_step(&key, &idx, delta, q * 2 + v);
    }
  }
  for (int L = 1; L <= 3 && n >= L + 3; ++L)
    for (int q = 0; q < k; ++q)
      for (int v = 0; v < 4; ++v) {
        int mi, ml, mj, rev;
        mh_oropt_cand_move(t, ps, neigh, n, k, ((ll)i * 3 + L - 1) * k + q, v, &mi, &ml, &mj, &rev);
        if (!mh_oropt_valid(n, mi, ml, mj) || (rev == 1 && L == 1)) continue;
        const ll delta = mh_oropt_delta(xy, mat, t, n, mi, ml, mj, rev);
        if (delta < 0) mh_argmin_step(&key, &idx, delta, 2 * k + ((L - 1) * k + q) * 4 + v);
      }
  m[0] = m[1] = m[2] = m[3] = -1;
  if (idx < 2 * k) {  /* 2-opt: as the full move (x, y), x < y */
    const int q = (int)(idx / 2), v = (int)(idx % 2), j = ps[neigh[(ll)a * k + q]];
    int x = v == 0 ? i : (i == 0 ? n - 1 : i - 1), y = v == 0 ? j : (j == 0 ? n - 1 : j - 1);
    if (x > y) { const int tmp = x; x = y; y = tmp; }
    m[0] = x; m[1] = 0; m[2] = y; m[3] = 0;
  } else if (idx != MH_LL_MAX) {
    const ll r = idx - 2 * k;
    mh_oropt_cand_move(t, ps, neigh, n, k, (ll)i * 3 * k + r / 4, (int)(r % 4), &m[0], &m[1], &m[2], &m[3]);
  }
  return key;
}

/* mh_best_move_at of every position i of every tour, one thread a position: delta_at[sol][i],
 * move_at[sol][i]. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_best_at(const double *xy, const int *mat, const int *tours, const int *pos, const int *neigh, int n,
            int k, int *move_at, long long *delta_at) {
  const ll sol = mh_block();
  const int *t = tours + sol * n, *ps = pos + sol * n;
  for (int i = mh_tid(); i < n; i += mh_nthreads())
    delta_at[sol * n + i] = mh_best_move_at(xy, mat, t, ps, neigh, n, k, i, move_at + (sol * n + i) * 4);
}

/* A Fenwick tree (Fenwick 1994) over the n positions of a tour, f[1 .. n]: how many positions of a
 * range are taken, in O(log n). */
__device__ __forceinline__ void mh_fen_take(int *f, int n, int p) {
  for (++p; p <= n; p += p & -p) f[p] += 1;
}
__device__ __forceinline__ int mh_fen_prefix(const int *f, int p) {  /* positions 0 .. p - 1 */
  int s = 0;
  for (; p > 0; p -= p & -p) s += f[p];
  return s;
}
__device__ __forceinline__ int mh_fen_taken(const int *f, int n, int first, int len) {
  if (len >= n) return mh_fen_prefix(f, n);
  const int last = first + len;
  if (last <= n) return mh_fen_prefix(f, last) - mh_fen_prefix(f, first);
  return mh_fen_prefix(f, n) - mh_fen_prefix(f, first) + mh_fen_prefix(f, last - n);
}

/* One pass of a descent that makes several moves (tsp_best_at's moves of each tour): the best
 * one (smallest delta, then position), then, in the order of their positions, every other one
 * whose position range (mh_move_span) meets none of the ranges taken before (a Fenwick tree of
 * the taken positions answers in O(log n): the choice costs O(n log n) a pass). The chosen
 * moves' ranges are disjoint, so each keeps its delta: the tour shortens by exactly their sum.
 * taken (nsol x (n + 1)) and chosen (nsol x n) are scratch. cost[sol] and moves[sol] grow by the
 * deltas and the number of moves; best[sol] is the best move's delta (0: no move improves, the
 * tour is a local optimum). The best move is applied by the whole block, the others by one
 * thread each. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_apply_disjoint(int *tours, int *pos, int n, const int *move_at, const long long *delta_at, int *taken,
                   int *chosen, long long *cost, long long *moves, long long *best) {
  __shared__ int s_count;
  const ll sol = mh_block();
  int *t = tours + sol * n, *ps = pos + sol * n, *f = taken + sol * (n + 1), *ch = chosen + sol * n;
  const int *mv = move_at + sol * n * 4;
  const ll *da = delta_at + sol * n;
  const int lane = mh_tid(), lanes = mh_nthreads();
  ll key = MH_LL_MAX, idx = MH_LL_MAX;
  for (int i = lane; i <= n; i += lanes) f[i] = 0;
  for (int i = lane; i < n; i += lanes)
    if (da[i] < 0) mh_argmin_step(&key, &idx, da[i], i);
  mh_block_argmin(&key, &idx);  /* its barriers also order the clearing of f before its use */
  if (idx == MH_LL_MAX) {
    if (lane == 0) best[sol] = 0;
    return;
  }
  const int g = (int)idx;
  if (lane == 0) {
    ll total = key;
    int count = 0, first, len;
    mh_move_span(n, mv[4 * g], mv[4 * g + 1], mv[4 * g + 2], &first, &len);
    for (int p = 0; p < len && p < n; ++p) mh_fen_take(f, n, (first + p) % n);
    for (int i = 0; i < n; ++i) {
      if (i == g || da[i] >= 0) continue;
      mh_move_span(n, mv[4 * i], mv[4 * i + 1], mv[4 * i + 2], &first, &len);
      if (mh_fen_taken(f, n, first, len) > 0) continue;
      for (int p = 0; p < len; ++p) mh_fen_take(f, n, (first + p) % n);
      ch[count++] = i;
      total += da[i];
    }
    s_count = count;
    cost[sol] += total;
    moves[sol] += count + 1;
    best[sol] = key;
  }
  __syncthreads();
  const int count = s_count;
  mh_apply_move(t, ps, n, mv[4 * g], mv[4 * g + 1], mv[4 * g + 2], mv[4 * g + 3], lane, lanes);
  for (int c = lane; c < count; c += lanes) {
    const int *m = mv + 4 * ch[c];
    mh_apply_move(t, ps, n, m[0], m[1], m[2], m[3], 0, 1);
  }
}

/* ---- The don't-look-bit pass (TSPDescentBatch(several_kernel="dlb"); issue 62). A pass looks only
 * at the positions of the cities on the tour's work list, the endpoints of the edges that the
 * previous pass changed (the don't-look bits of Bentley, "Fast algorithms for geometric traveling
 * salesman problems", ORSA J. Computing 1992), and every thread of the block selects the moves:
 * in rounds, each live improving move claims every position of its range (mh_move_span) with an
 * atomic min of its key (delta, position); a move that holds all its claims wins, a move that
 * meets a winner dies, the others claim again. The winners are exactly the moves that the
 * sequential greedy in key order takes (a move is taken when its range meets no range taken
 * before), whatever the thread order, and their ranges are disjoint, so each keeps its delta.
 * The list after a pass: the ends of the changed edges and the two cities before each end in the
 * new tour, so every position whose own moves remove a changed edge (a 2-opt move at i removes
 * the edge at i - 1 or i, an Or-opt move the edges at i - 1 and i + L - 1, L <= 3) is looked at.
 * Per tour: count[sol] >= 0, list[sol][0 .. count - 1] the cities to look at (dirty[sol][c] = 1
 * for them); MH_DLB_ALL: every position (the first pass, and a pass after one that found no
 * move, so that the descent ends only at a local optimum of the whole candidate neighbourhood);
 * MH_DLB_DONE: a pass over every position found no improving move, nothing left to do. */
#define MH_DLB_ALL (-1)
#define MH_DLB_DONE (-2)
#define MH_DLB_NONE 0 /* state[sol][i]: no improving move at i (or i not looked at) */
#define MH_DLB_LIVE 1
#define MH_DLB_WON 2
#define MH_DLB_DEAD 3

/* The best move of each position of the work list (mh_best_move_at): delta_at, move_at and
 * state (MH_DLB_LIVE when it improves) at that position; the list's cities become positions in
 * anchor[sol][0 .. count - 1] (for MH_DLB_ALL, the positions are 0 .. n - 1 and anchor is not
 * written) and their don't-look bits are set again (dirty = 0). One thread a listed position. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_dlb_best_at(const double *xy, const int *mat, const int *tours, const int *pos, const int *neigh, int n, int k,
                const int *list, const int *count, int *dirty, int *anchor, int *move_at, long long *delta_at,
                int *state) {
  const ll sol = mh_block();
  const int m = count[sol];
  if (m == MH_DLB_DONE) return;
  const int *t = tours + sol * n, *ps = pos + sol * n;
  const int total = m == MH_DLB_ALL ? n : m;
  for (int e = mh_tid(); e < total; e += mh_nthreads()) {
    int i = e;
    if (m != MH_DLB_ALL) {
      const int c = list[sol * n + e];
      dirty[sol * n + c] = 0;
      i = anchor[sol * n + e] = ps[c];
    }
    const ll d = mh_best_move_at(xy, mat, t, ps, neigh, n, k, i, move_at + (sol * n + i) * 4);
    delta_at[sol * n + i] = d;
    state[sol * n + i] = d < 0 ? MH_DLB_LIVE : MH_DLB_NONE;
  }
}

/* The cities at the ends of the edges that move m (the form of mh_apply_move) removes, which are
 * also those of the edges it adds: 4 for a 2-opt move, 6 for an Or-opt move (the count). */
__device__ __forceinline__ int mh_move_ends(const int *t, int n, const int *m, int *ends) {
  const int a = m[0], L = m[1], b = m[2];
  if (L == 0) {
    ends[0] = t[a]; ends[1] = t[(a + 1) % n]; ends[2] = t[b]; ends[3] = t[(b + 1) % n];
    return 4;
  }
  ends[0] = t[(a + n - 1) % n]; ends[1] = t[a]; ends[2] = t[(a + L - 1) % n]; ends[3] = t[(a + L) % n];
  ends[4] = t[b]; ends[5] = t[(b + 1) % n];
  return 6;
}

/* The position whose move made claim key (delta * n + position, delta < 0). */
__device__ __forceinline__ int mh_dlb_owner(ll key, int n) {
  const ll r = key % n;
  return (int)(r < 0 ? r + n : r);
}

/* City c onto the tour's work list lst (count entries), once: its don't-look bit is cleared by an
 * atomic exchange of dirty[c]. */
__device__ __forceinline__ void mh_dlb_list(int *dirty, int *lst, int *count, int c) {
  if (atomicExch(&dirty[c], 1) == 0) lst[atomicAdd(count, 1)] = c;
}

/* The phases of a claim round, each over the pass's live moves (this thread's share): RESET their
 * ranges' claims, CLAIM every position of a range with an atomic min of the move's key, CHECK
 * (a move that holds all its claims wins), DROP (a live move whose range holds a claim of this
 * round's winner drops out; returns the moves that stay live). */
#define MH_DLB_RESET 0
#define MH_DLB_CLAIM 1
#define MH_DLB_CHECK 2
#define MH_DLB_DROP 3
__device__ __forceinline__ ll mh_dlb_phase(int phase, int n, int m, int total, const int *an, const int *mv,
                                           const ll *da, int *st, ll *cl, int lane, int lanes) {
  ll live = 0;
  for (int e = lane; e < total; e += lanes) {
    const int i = m == MH_DLB_ALL ? e : an[e];
    if (st[i] != MH_DLB_LIVE) continue;
    const ll key = da[i] * n + i;
    int first, len;
    mh_move_span(n, mv[4 * i], mv[4 * i + 1], mv[4 * i + 2], &first, &len);
    bool hit = false;  /* CHECK: a claim lost; DROP: a claim of this round's winner */
    for (int p = 0; p < len && p < n && !hit; ++p) {
      ll *c = &cl[(first + p) % n];
      if (phase == MH_DLB_RESET) *c = MH_LL_MAX;
      else if (phase == MH_DLB_CLAIM) atomicMin(c, key);
      else if (phase == MH_DLB_CHECK) hit = *c != key;
      else hit = st[mh_dlb_owner(*c, n)] == MH_DLB_WON;
    }
    if (phase == MH_DLB_CHECK && !hit) st[i] = MH_DLB_WON;
    if (phase == MH_DLB_DROP && hit) st[i] = MH_DLB_DEAD;
    if (phase == MH_DLB_DROP && !hit) live += 1;
  }
  return live;
}

/* The moves of the listed positions (tsp_dlb_best_at) selected by claims (the rule above), then
 * applied, one thread a winner (their ranges are disjoint); the ends of their edges (mh_move_ends)
 * and the two cities before each end make the next list, each city once (its don't-look bit, dirty, cleared by an atomic exchange; the
 * list's order depends on the thread order, what a pass does does not). claim (nsol x n) is
 * scratch. cost[sol] and moves[sol] grow by the winners' deltas and number; best[sol] is 0 when
 * the tour is a local optimum of the candidate neighbourhood (a pass over every position found no
 * improving move), -1 while it is not known to be one. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_dlb_apply(int *tours, int *pos, int n, int *list, int *count, int *dirty, const int *anchor,
              const int *move_at, const long long *delta_at, int *state, long long *claim, long long *cost,
              long long *moves, long long *best) {
  const ll sol = mh_block();
  const int m = count[sol];
  const int lane = mh_tid(), lanes = mh_nthreads();
  if (m == MH_DLB_DONE) {
    if (lane == 0) best[sol] = 0;
    return;
  }
  int *t = tours + sol * n, *ps = pos + sol * n, *st = state + sol * n, *lst = list + sol * n;
  const int *mv = move_at + sol * n * 4, *an = anchor + sol * n;
  const ll *da = delta_at + sol * n;
  ll *cl = claim + sol * n;
  const int total = m == MH_DLB_ALL ? n : m;
  for (;;) {  /* one round of claims, its phases separated by barriers */
    mh_dlb_phase(MH_DLB_RESET, n, m, total, an, mv, da, st, cl, lane, lanes);
    __syncthreads();
    mh_dlb_phase(MH_DLB_CLAIM, n, m, total, an, mv, da, st, cl, lane, lanes);
    __syncthreads();
    mh_dlb_phase(MH_DLB_CHECK, n, m, total, an, mv, da, st, cl, lane, lanes);
    __syncthreads();
    if (mh_block_sum(mh_dlb_phase(MH_DLB_DROP, n, m, total, an, mv, da, st, cl, lane, lanes)) == 0) break;
  }
  if (lane == 0) count[sol] = 0;
  __syncthreads();
  ll gain = 0, made = 0;
  for (int e = lane; e < total; e += lanes) {
    const int i = m == MH_DLB_ALL ? e : an[e];
    if (st[i] != MH_DLB_WON) continue;
    const int *mi = mv + 4 * i;
    int ends[6];
    const int ne = mh_move_ends(t, n, mi, ends);  /* inside the move's own range: no other winner writes there */
    mh_apply_move(t, ps, n, mi[0], mi[1], mi[2], mi[3], 0, 1);
    for (int q = 0; q < ne; ++q) mh_dlb_list(dirty + sol * n, lst, count + sol, ends[q]);
    gain += da[i];
    made += 1;
  }
  __syncthreads();
  const int ends = count[sol];
  __syncthreads();  /* every thread has read the ends' count before the list grows */
  for (int e = lane; e < ends; e += lanes) {  /* the two cities before each end, in the new tour */
    const int p = ps[lst[e]];
    for (int back = 1; back <= 2; ++back) mh_dlb_list(dirty + sol * n, lst, count + sol, t[(p - back + n) % n]);
  }
  gain = mh_block_sum(gain);
  made = mh_block_sum(made);
  if (lane == 0) {
    cost[sol] += gain;
    moves[sol] += made;
    best[sol] = made == 0 && m == MH_DLB_ALL ? 0 : -1;
    if (made == 0) count[sol] = m == MH_DLB_ALL ? MH_DLB_DONE : MH_DLB_ALL;
  }
}

/* lengths[sol] = the exact length of tour sol. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_lengths(const double *xy, const int *mat, const int *tours, int n, long long *lengths) {
  const ll sol = mh_block();
  const int *t = tours + sol * n;
  ll sum = 0;
  for (int i = mh_tid(); i < n; i += mh_nthreads()) sum += MH_D(t[i], t[i + 1 == n ? 0 : i + 1]);
  sum = mh_block_sum(sum);
  if (mh_tid() == 0) lengths[sol] = sum;
}

/* Tour sol of best (length best_len[sol]) becomes tour sol of cand when that one is not longer. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
tsp_keep_better(int *best, long long *best_len, const int *cand, const long long *cand_len, int n) {
  const ll sol = mh_block();
  const bool take = cand_len[sol] <= best_len[sol];
  __syncthreads();  /* every thread has read best_len[sol] before thread 0 writes it */
  if (!take) return;
  for (int i = mh_tid(); i < n; i += mh_nthreads()) best[sol * n + i] = cand[sol * n + i];
  if (mh_tid() == 0) best_len[sol] = cand_len[sol];
}
