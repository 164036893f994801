/* qap_moves.cu - batched QAP swap-neighbourhood kernels. One block = one solution.
 *
 * Layout: a, b are n x n int32 (flow, distance); perm is nsol x n; delta is nsol x n x n long
 * long and holds the delta of swapping units (i, j) at [i * n + j] for i < j (entries i >= j are
 * not written). See qap_delta.cuh for the formulas (Taillard 1991).
 */
#include "mh_common.cuh"
#include "qap_delta.cuh"

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
extern "C" __global__ void __launch_bounds__(MH_MAX_BLOCK)
qap_best_move(const long long *delta, const int *perm, const int *tabu,
              const long long *iter, const long long *cost, const long long *best,
              int n, int *move_out, long long *delta_out) {
  const ll sol = mh_block();
  const int *p = perm + sol * n;
  const ll *d = delta + sol * n * n;
  const int *t = tabu + sol * n * n;
  const ll now = iter[sol], threshold = best[sol] - cost[sol];
  const ll BIG = MH_QAP_CATEGORY;
  ll key = MH_LL_MAX, idx = MH_LL_MAX;
  for (int i = threadIdx.y; i < n - 1; i += blockDim.y) {
    const int pi = p[i];
    for (int j = i + 1 + threadIdx.x; j < n; j += blockDim.x) {
      const ll dij = d[(ll)i * n + j];
      const bool is_tabu = t[(ll)i * n + p[j]] > now && t[(ll)j * n + pi] > now;
      const ll k = dij + (dij < threshold ? 0 : (is_tabu ? 2 * BIG : BIG));
      mh_argmin_step(&key, &idx, k, (ll)i * n + j);
    }
  }
  mh_block_argmin(&key, &idx);
  if (mh_tid() == 0) {
    move_out[2 * sol] = (int)(idx / n);
    move_out[2 * sol + 1] = (int)(idx % n);
    delta_out[sol] = d[idx];
  }
}
