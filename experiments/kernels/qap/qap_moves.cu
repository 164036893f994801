/* qap_moves.cu - batched QAP swap-neighbourhood kernels. One block = one solution.
 *
 * Not part of the package (nothing in it launches them; solve() runs the fused kernels of
 * kernels/qap/qap_tabu.cu): the separate steps for the kernel tests and benchmarks, loaded by path
 * (load_module(path, device, defines)).
 *
 * Layout: a, b are n x n int32 (flow, distance); perm is nsol x n; delta is nsol x n x n long
 * long and holds the delta of swapping units (i, j) at [i * n + j] for i < j (entries i >= j are
 * not written). See qap_delta.cuh for the formulas (Taillard 1991).
 */
#include "mh_common.cuh"
/* the QAP's header, by its name under kernels/ (metaheur/engine/source.py) */
#include "qap/qap_delta.cuh"

#define MH_QAP_CATEGORY (1LL << 61) /* rank offset of a move category (aspired < allowed < tabu) */

/* Full delta matrix of every solution: n(n-1)/2 O(n) evaluations per block. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
qap_delta_full(const int *a, const int *b, const int *perm, long long *delta, int n) {
  const ll sol = mh_block();
  const int *p = perm + sol * n;
  ll *d = delta + sol * n * n;
  for (int i = threadIdx.y; i < n - 1; i += blockDim.y)
    for (int j = i + 1 + threadIdx.x; j < n; j += blockDim.x) d[(ll)i * n + j] = mh_qap_delta(a, b, p, n, i, j);
}

/* O(1) update of every solution's delta matrix after its move (move[2 sol], move[2 sol + 1])
 * was applied to perm (perm already holds the permutation after the move; r == s: no move).
 * work: nsol x 4n int scratch. */
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
qap_delta_update(const int *a, const int *b, const int *perm, const int *move,
                 long long *delta, int *work, int n) {
  const ll sol = mh_block();
  const int *p = perm + sol * n;
  ll *d = delta + sol * n * n;
  const int r = move[2 * sol], s = move[2 * sol + 1];
  if (r == s) return;
  int *u = work + sol * 4 * n, *v = u + n, *u2 = u + 2 * n, *v2 = u + 3 * n;
  const int tid = mh_tid(), nt = mh_nthreads();
  const int pr = p[r], ps = p[s];
  for (int k = tid; k < n; k += nt) {
    const int pk = p[k];
    u[k] = a[(ll)r * n + k] - a[(ll)s * n + k];
    v[k] = b[(ll)ps * n + pk] - b[(ll)pr * n + pk];
    u2[k] = a[(ll)k * n + r] - a[(ll)k * n + s];
    v2[k] = b[(ll)pk * n + ps] - b[(ll)pk * n + pr];
  }
  __syncthreads();
  /* every pair; those touching r or s are overwritten below after the barrier */
  for (int i = threadIdx.y; i < n - 1; i += blockDim.y) {
    const ll ui = u[i], vi = v[i], u2i = u2[i], v2i = v2[i];
    ll *di = d + (ll)i * n;
    for (int j = i + 1 + threadIdx.x; j < n; j += blockDim.x) {
#ifdef MH_QAP_SYMMETRIC
      di[j] += 2 * (ui - u[j]) * (vi - v[j]);
#else
      di[j] += (ui - u[j]) * (vi - v[j]) + (u2i - u2[j]) * (v2i - v2[j]);
#endif
    }
  }
  __syncthreads();
  for (int k = tid; k < n; k += nt) {
    if (k != r && k != s) {
      d[(ll)mh_imin(k, r) * n + mh_imax(k, r)] = mh_qap_delta(a, b, p, n, mh_imin(k, r), mh_imax(k, r));
      d[(ll)mh_imin(k, s) * n + mh_imax(k, s)] = mh_qap_delta(a, b, p, n, mh_imin(k, s), mh_imax(k, s));
    }
  }
  if (tid == 0) d[(ll)mh_imin(r, s) * n + mh_imax(r, s)] = mh_qap_delta(a, b, p, n, r, s);
}

/* Best admissible swap of every solution under the robust-tabu rules (Taillard 1991):
 * (i, j) is tabu when BOTH units would return to a location they left recently, i.e.
 * tabu[i * n + p[j]] > iter[sol] and tabu[j * n + p[i]] > iter[sol] (tabu: nsol x n x n, by unit and
 * location); a move is aspired when it gives a new best, cost + delta < best. Preference: aspired,
 * then non-tabu, then tabu (all tabu: the least bad); ties go to the smallest i * n + j.
 * Out: move_out[2 sol], move_out[2 sol + 1] = (i, j), delta_out[sol]. */
/* The rank of the move (i, j): its delta, plus a category offset (aspired < allowed < tabu). */
__device__ __forceinline__ ll mh_qap_move_key(const ll *d, const int *p, const int *t, int n, int i, int j, ll now,
                                              ll threshold) {
  const ll dij = d[(ll)i * n + j];
  const bool is_tabu = t[(ll)i * n + p[j]] > now && t[(ll)j * n + p[i]] > now;
  return dij + (dij < threshold ? 0 : (is_tabu ? 2 * MH_QAP_CATEGORY : MH_QAP_CATEGORY));
}

/* The block's best move of its threads' (key, idx), written out by thread 0. */
__device__ __forceinline__ void mh_qap_move_out(ll key, ll idx, const ll *d, int n, ll sol, int *move_out,
                                                long long *delta_out) {
  mh_block_argmin(&key, &idx);
  if (mh_tid() == 0) {
    move_out[2 * sol] = (int)(idx / n);
    move_out[2 * sol + 1] = (int)(idx % n);
    delta_out[sol] = d[idx];
  }
}

extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
qap_best_move(const long long *delta, const int *perm, const int *tabu,
              const long long *iter, const long long *cost, const long long *best,
              int n, int *move_out, long long *delta_out) {
  const ll sol = mh_block();
  const int *p = perm + sol * n, *t = tabu + sol * n * n;
  const ll *d = delta + sol * n * n;
  const ll now = iter[sol], threshold = best[sol] - cost[sol];
  ll key = MH_LL_MAX, idx = MH_LL_MAX;
  for (int i = threadIdx.y; i < n - 1; i += blockDim.y)
    for (int j = i + 1 + threadIdx.x; j < n; j += blockDim.x)
      mh_argmin_step(&key, &idx, mh_qap_move_key(d, p, t, n, i, j, now, threshold), (ll)i * n + j);
  mh_qap_move_out(key, idx, d, n, sol, move_out, delta_out);
}

/* ================================================================================================
 * The streaming variants of qap_delta_update and qap_best_move (the same values and moves; the
 * issue of the QAP kernels, side by side until a GPU decides): every thread owns fixed pairs of
 * the packed triangle (mh_qap_pair_first), so a warp keeps many independent loads in flight
 * instead of walking a row; the 2n - 3 pairs touching the moved units are recomputed from sums
 * over m that the whole block builds with coalesced reads (row m of a, of its transpose at, and
 * one row of b and of its transpose bt gathered through p), the m range split between groups of
 * threads; the pair (r, s) is summed by the block. work: nsol x 8n ints. */

__device__ __forceinline__ void mh_qs_add(ll *x, ll v) { atomicAdd((unsigned long long *)x, (unsigned long long)v); }

/* Row m's terms of the sums of mh_qap_delta(k, x) over its loop (k the thread's unit, x = r or s). */
#ifdef MH_QAP_SYMMETRIC
#define MH_QS_TERMS(m, k, x, acc)                                                                          \
  acc += (ll)(a[(ll)(m) * n + (k)] - a[(ll)(x) * n + (m)]) * (b[(ll)p[x] * n + p[m]] - b[(ll)p[m] * n + p[k]])
#else
#define MH_QS_TERMS(m, k, x, acc)                                                                          \
  do {                                                                                                     \
    const int pm = p[m];                                                                                   \
    acc += (ll)(a[(ll)(m) * n + (k)] - a[(ll)(m) * n + (x)]) * (b[(ll)pm * n + p[x]] - b[(ll)pm * n + p[k]]) + \
           (ll)(at[(ll)(m) * n + (k)] - a[(ll)(x) * n + (m)]) * (b[(ll)p[x] * n + pm] - bt[(ll)pm * n + p[k]]); \
  } while (0)
#endif

extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
qap_delta_update_stream(const int *a, const int *at, const int *b, const int *bt, const int *perm, const int *move,
                        long long *delta, int *work, int n) {
  const ll sol = mh_block();
  const int *p = perm + sol * n;
  ll *d = delta + sol * n * n;
  const int r = move[2 * sol], s = move[2 * sol + 1];
  if (r == s) return;
  int *u = work + sol * 8 * n, *v = u + n, *u2 = u + 2 * n, *v2 = u + 3 * n;
  ll *sr = (ll *)(u + 4 * n), *ss = sr + n;
  const int tid = mh_tid(), nt = mh_nthreads();
  const int pr = p[r], ps = p[s];
  (void)at; (void)bt;
  for (int k = tid; k < n; k += nt) {
    const int pk = p[k];
    u[k] = a[(ll)r * n + k] - a[(ll)s * n + k];
    v[k] = b[(ll)ps * n + pk] - b[(ll)pr * n + pk];
    u2[k] = a[(ll)k * n + r] - a[(ll)k * n + s];
    v2[k] = b[(ll)pk * n + ps] - b[(ll)pk * n + pr];
    sr[k] = 0;
    ss[k] = 0;
  }
  __syncthreads();
  const int groups = nt >= n ? nt / n : 1;
  for (int w = tid; w < groups * n; w += nt) {
    const int k = w % n, g = w / n;
    const int m0 = (int)((ll)g * n / groups), m1 = (int)((ll)(g + 1) * n / groups);
    ll xr = 0, xs = 0;
    for (int m = m0; m < m1; ++m) {
      MH_QS_TERMS(m, k, r, xr);
      MH_QS_TERMS(m, k, s, xs);
    }
    mh_qs_add(&sr[k], xr);
    mh_qs_add(&ss[k], xs);
  }
  /* the pair (r, s): its sum over k by the block */
  ll part = 0;
  for (int k = tid; k < n; k += nt) {
    const int pk = p[k];
#ifdef MH_QAP_SYMMETRIC
    part += (ll)(a[(ll)r * n + k] - a[(ll)s * n + k]) * (b[(ll)ps * n + pk] - b[(ll)pr * n + pk]);
#else
    part += (ll)(a[(ll)k * n + r] - a[(ll)k * n + s]) * (b[(ll)pk * n + ps] - b[(ll)pk * n + pr]) +
            (ll)(a[(ll)r * n + k] - a[(ll)s * n + k]) * (b[(ll)ps * n + pk] - b[(ll)pr * n + pk]);
#endif
  }
  const int lo = mh_imin(r, s), hi = mh_imax(r, s);
  const ll drs = mh_qap_delta_rest(a, b, p, n, r, s, mh_block_sum(part)); /* barriers: the sums too */
  int i, j;
  for (mh_qap_pair_first(n, tid, &i, &j); i < n - 1; mh_qap_pair_next(n, nt, &i, &j)) {
    ll *dij = d + (ll)i * n + j;
    if (i == lo && j == hi) {
      *dij = drs;
    } else if (i == r || i == s || j == r || j == s) {
      const int x = (i == r || j == r) ? r : s, k = i == x ? j : i;
      *dij = mh_qap_delta_rest(a, b, p, n, k, x, x == r ? sr[k] : ss[k]); /* the sum's order: (k, x) */
    } else {
#ifdef MH_QAP_SYMMETRIC
      *dij += 2 * (ll)(u[i] - u[j]) * (v[i] - v[j]);
#else
      *dij += (ll)(u[i] - u[j]) * (v[i] - v[j]) + (ll)(u2[i] - u2[j]) * (v2[i] - v2[j]);
#endif
    }
  }
}

extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
qap_best_move_stream(const long long *delta, const int *perm, const int *tabu,
                     const long long *iter, const long long *cost, const long long *best,
                     int n, int *move_out, long long *delta_out) {
  const ll sol = mh_block();
  const int *p = perm + sol * n, *t = tabu + sol * n * n;
  const ll *d = delta + sol * n * n;
  const ll now = iter[sol], threshold = best[sol] - cost[sol];
  ll key = MH_LL_MAX, idx = MH_LL_MAX;
  int i, j;
  for (mh_qap_pair_first(n, mh_tid(), &i, &j); i < n - 1; mh_qap_pair_next(n, mh_nthreads(), &i, &j)) {
    const ll k = mh_qap_move_key(d, p, t, n, i, j, now, threshold);
    if (k < key) { key = k; idx = (ll)i * n + j; } /* a thread's pairs come in increasing ij */
  }
  mh_qap_move_out(key, idx, d, n, sol, move_out, delta_out);
}
