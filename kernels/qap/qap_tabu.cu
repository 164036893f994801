/* qap_tabu.cu - robust tabu search for the QAP (Taillard 1991, "Robust taboo search for the
 * quadratic assignment problem", Parallel Computing 17; tenure rule of Taillard's 2006 code).
 * One block = one search; the whole iteration loop runs inside the kernel, so a launch advances
 * every search of the batch by `iters` iterations (or until its best reaches `target`).
 *
 * Per iteration: the full swap neighbourhood is scanned for the best move (aspired < allowed <
 * tabu, ties to the smallest i * n + j), the move is applied, and the delta matrix is updated in
 * O(1) per pair, with the O(n) formula for the 2n - 3 pairs touching the moved units.
 *  - tabu memory by (unit, location): tabu[u * n + l] = iteration until which unit u may not
 *    return to location l; a swap is tabu only when BOTH units would return to a location they
 *    left recently;
 *  - tenure: rule 0 (Taillard 2006) draws floor(u^3 * c n) per entry, u uniform in (0, 1], with
 *    c = `tenure_scale` (Taillard: 8; c n below 2^30, as tabu times are int32 from a base); rule 1
 *    (Taillard 1991) uses one tenure drawn uniformly in [floor(0.9n), ceil(1.1n)] and redrawn
 *    every 2 ceil(1.1n) iterations;
 *  - aspiration by new best (cost + delta < best) and by long-term diversification: a swap
 *    that puts both units on locations they have not left for more than `aspiration`
 *    iterations (Taillard: 5n^2) is taken first.
 * The layout follows the yardstick shared/yardsticks/rots.c so that one thread per block runs
 * contiguous, vectorisable row loops: permuted copies bp[x][y] = b[p[x]][p[y]] and its transpose
 * bpt are kept, swapped in O(n) per move, and per pair the smaller tabu time (tmin) and the
 * aspiration time (lpick: the later of the two units' last departures) are stored next to the
 * delta. With the same random stream and start, a search follows rots.c's trajectory exactly.
 *
 * `init`: 1 starts every search afresh from `perm` (empty tabu memory); 2 resumes searches saved
 * earlier (perm, best_perm, stats, tabu, left as they were), rebuilding the tables derived from
 * them (bp, bpt, delta, tmin, lpick), so a search continued in another launch, process or machine
 * follows the trajectory of one uninterrupted search.
 *
 * State (S searches): perm, best_perm S x n; stats S x MH_TS_NSTATS; keys S (random stream keys);
 * delta S x n x n (pairs i < j); tabu, left, tmin, lpick, bp, bpt S x n x n int32 holding
 * iteration numbers relative to stats[MH_TS_BASE]; work S x 8n (qap_tabu_run uses the first 4n).
 * Matrix entries must be below 2^29 in magnitude (checked on the host) so the int32 differences below cannot overflow.
 *
 * With MH_QAP_DELTA32 defined (the host's bound on every swap delta,
 * metaheur.problems.qap.device_data.delta_bound, is below 2^28) deltas are int32 (mh_dt): the scan and the update then move half the bytes and
 * run twice the SIMD lanes, and the move keys d + {0, 2^29, 2^30} still fit in int32 and rank
 * aspired < allowed < tabu. Values, and so trajectories, are the same as with int64 deltas.
 */
#include "mh_common.cuh"
#include "mh_rng.cuh"
#include "qap_delta.cuh"

#define MH_TS_COST 0      /* current cost */
#define MH_TS_BEST 1      /* best cost found */
#define MH_TS_ITER 2      /* iterations done */
#define MH_TS_BASE 3      /* iteration number that relative times count from */
#define MH_TS_CTR 4       /* random draws used */
#define MH_TS_TENURE 5    /* current tenure (rule 1) */
#define MH_TS_BEST_ITER 6 /* iteration of the last improvement of the best */
#define MH_TS_NSTATS 7
#define MH_TS_MAX_BLOCK 256 /* launch bounds: blocks of up to 256 threads, 2 resident per SM */
#define MH_TS_REBASE (1 << 30)
#define MH_TS_ENTRY_LIMIT (1 << 29)   /* |matrix entries| below this (checked on the host) */
#define MH_TS_DELTA32_LIMIT (1 << 28) /* the host's delta bound below which MH_QAP_DELTA32 is used */
#define MH_TS_DELTA_LIMIT (1LL << 60) /* the host's cost bound: half of the int64 MH_TS_BIG, a move category's rank offset */

#ifdef MH_QAP_DELTA32
typedef int mh_dt;
#define MH_TS_BIG (1 << 29)
#define MH_TS_DT_MAX 0x7fffffff
#define MH_TS_THR_MIN (-(1LL << 30))
#else
typedef ll mh_dt;
#define MH_TS_BIG (1LL << 61)
#define MH_TS_DT_MAX MH_LL_MAX
#define MH_TS_THR_MIN (-(1LL << 62))
#endif

/* Everything stored for the pair {i, j}: its delta dij, tmin, lpick. */
__device__ __forceinline__ void mh_ts_store_pair(const int *p, const int *tabu, const int *left, mh_dt *d, int *tmin,
                                                 int *lpick, int n, int i, int j, ll dij) {
  if (i > j) { const int t = i; i = j; j = t; }
  const ll ij = (ll)i * n + j;
  const int t1 = tabu[(ll)i * n + p[j]], t2 = tabu[(ll)j * n + p[i]];
  const int l1 = left[(ll)i * n + p[j]], l2 = left[(ll)j * n + p[i]];
  d[ij] = (mh_dt)dij;
  tmin[ij] = t1 < t2 ? t1 : t2;
  lpick[ij] = l1 > l2 ? l1 : l2;
}

__device__ __forceinline__ int mh_ts_shift(int t, ll shift) {
  const ll x = (ll)t - shift;
  return (int)(x < -(1LL << 30) ? -(1LL << 30) : x);
}

__device__ __forceinline__ void mh_ts_swap_rows(int *m, int n, int r, int s, int tid, int nt) {
  for (int k = tid; k < n; k += nt) {
    const int t = m[(ll)r * n + k];
    m[(ll)r * n + k] = m[(ll)s * n + k];
    m[(ll)s * n + k] = t;
  }
}

__device__ __forceinline__ void mh_ts_swap_cols(int *m, int n, int r, int s, int tid, int nt) {
  for (int k = tid; k < n; k += nt) {
    const int t = m[(ll)k * n + r];
    m[(ll)k * n + r] = m[(ll)k * n + s];
    m[(ll)k * n + s] = t;
  }
}

/* One search's arrays (block `sol`) and the block's thread numbering. */
struct mh_ts_t {
  const int *a, *at, *b;
  int n;
  ll nn;
  int *p, *bestp;
  mh_dt *d;
  int *tb, *lf, *tm, *lp, *P, *PT;
  int *u, *v, *u2, *v2;
  int tid, nt;
};

/* Rebuild the tables derived from perm, tabu and left (bp, bpt, delta, tmin, lpick) and return
 * the cost; init == 1 also empties the tabu memory first. */
__device__ __forceinline__ ll mh_ts_init(const mh_ts_t *T, int init) {
  const int n = T->n, tid = T->tid, nt = T->nt;
  const int *p = T->p;
  for (ll k = tid; k < T->nn; k += nt) {
    const int x = (int)(k / n), y = (int)(k % n);
    T->P[k] = T->b[(ll)p[x] * n + p[y]];
#ifndef MH_QAP_SYMMETRIC
    T->PT[(ll)y * n + x] = T->P[k];
#endif
    if (init == 1) {
      T->tb[k] = 0;
      T->lf[k] = 0;
    }
  }
  __syncthreads();
  for (int i = threadIdx.y; i < n - 1; i += blockDim.y)
    for (int j = i + 1 + threadIdx.x; j < n; j += blockDim.x)
      mh_ts_store_pair(p, T->tb, T->lf, T->d, T->tm, T->lp, n, i, j,
                       mh_qap_delta_rows(T->a, T->at, T->P, T->PT, n, i, j));
  ll c = 0;
  for (ll k = tid; k < T->nn; k += nt) c += (ll)T->a[k] * T->P[k];
  return mh_block_sum(c);
}

/* Shift every relative time back by `shift` (clamping very old times changes no comparison,
 * since every threshold is within 2^29 of the present). */
__device__ __forceinline__ void mh_ts_rebase(const mh_ts_t *T, ll shift) {
  for (ll k = T->tid; k < T->nn; k += T->nt) {
    T->tb[k] = mh_ts_shift(T->tb[k], shift);
    T->lf[k] = mh_ts_shift(T->lf[k], shift);
    T->tm[k] = mh_ts_shift(T->tm[k], shift);
    T->lp[k] = mh_ts_shift(T->lp[k], shift);
  }
  __syncthreads();
}

/* The key of a pair's move: aspired (a new best, or both units long away) < allowed < tabu. */
__device__ __forceinline__ mh_dt mh_ts_key(mh_dt d, int tm, int lp, int now, int lim, mh_dt thr) {
  const mh_dt BIG = MH_TS_BIG;
  return d + (((d < thr) | (lp < lim)) ? 0 : (tm > now ? 2 * BIG : BIG));
}

/* The best move, as the pair index i * n + j: aspired (a new best, or both units long away:
 * lpick < lim) < allowed < tabu (tmin > now); per row a vectorisable min pass, then locate it. */
__device__ __forceinline__ ll mh_ts_scan(const mh_ts_t *T, int now, int lim, mh_dt thr) {
  const int n = T->n;
  ll bkey = MH_LL_MAX, bidx = MH_LL_MAX;
  for (int i = threadIdx.y; i < n - 1; i += blockDim.y) {
    const mh_dt *di = T->d + (ll)i * n;
    const int *ti = T->tm + (ll)i * n, *li = T->lp + (ll)i * n;
    mh_dt rowmin = MH_TS_DT_MAX;
    for (int j = i + 1 + threadIdx.x; j < n; j += blockDim.x) {
      const mh_dt x = mh_ts_key(di[j], ti[j], li[j], now, lim, thr);
      rowmin = x < rowmin ? x : rowmin;
    }
    if (rowmin < bkey) {
      for (int j = i + 1 + threadIdx.x; j < n; j += blockDim.x) {
        const mh_dt x = mh_ts_key(di[j], ti[j], li[j], now, lim, thr);
        if (x == rowmin) { bkey = rowmin; bidx = (ll)i * n + j; break; }
      }
    }
  }
  mh_block_argmin(&bkey, &bidx);
  return bidx;
}

/* Swap units r and s: the permutation, tabu and departure times of the locations they leave
 * (thread 0), rows and columns of bp (and bpt), and the best permutation when `improved`. */
__device__ __forceinline__ void mh_ts_apply(const mh_ts_t *T, int r, int s, int now, int t1, int t2, bool improved) {
  const int n = T->n, tid = T->tid, nt = T->nt;
  const int pr = T->p[r], ps = T->p[s];
  __syncthreads();
  if (tid == 0) {
    T->p[r] = ps; T->p[s] = pr;
    T->tb[(ll)r * n + pr] = now + t1;
    T->tb[(ll)s * n + ps] = now + t2;
    T->lf[(ll)r * n + pr] = now;
    T->lf[(ll)s * n + ps] = now;
  }
  mh_ts_swap_rows(T->P, n, r, s, tid, nt);
#ifndef MH_QAP_SYMMETRIC
  mh_ts_swap_rows(T->PT, n, r, s, tid, nt);
#endif
  __syncthreads();
  mh_ts_swap_cols(T->P, n, r, s, tid, nt);
#ifndef MH_QAP_SYMMETRIC
  mh_ts_swap_cols(T->PT, n, r, s, tid, nt);
#endif
  if (improved)
    for (int k = tid; k < n; k += nt) T->bestp[k] = T->p[k];
  __syncthreads();
}

/* The deltas after the move (r, s): the O(1) update of the pairs disjoint from {r, s} (rots.c's
 * u, v vectors), then the O(n) formula for the pairs touching r or s (overwriting the
 * meaningless O(1) updates), its sums for all k at once (mh_qap_delta_sums2). */
__device__ __forceinline__ void mh_ts_update(const mh_ts_t *T, int r, int s) {
  const int n = T->n, tid = T->tid, nt = T->nt;
  const int *a = T->a, *at = T->at, *P = T->P, *PT = T->PT;
  int *u = T->u, *v = T->v, *u2 = T->u2, *v2 = T->v2;
  const int *ar = a + (ll)r * n, *as = a + (ll)s * n, *tr = at + (ll)r * n, *ts = at + (ll)s * n;
  const int *Pr = P + (ll)r * n, *Ps = P + (ll)s * n, *Qr = PT + (ll)r * n, *Qs = PT + (ll)s * n;
  for (int k = tid; k < n; k += nt) {
    u[k] = ar[k] - as[k];
    v[k] = Ps[k] - Pr[k];
    u2[k] = tr[k] - ts[k];
    v2[k] = Qs[k] - Qr[k];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < n - 1; i += blockDim.y) {
    mh_dt *di = T->d + (ll)i * n;
    const int ui = u[i], vi = v[i];
#ifdef MH_QAP_SYMMETRIC
    for (int j = i + 1 + threadIdx.x; j < n; j += blockDim.x) di[j] += 2 * (mh_dt)(ui - u[j]) * (vi - v[j]);
#else
    const int u2i = u2[i], v2i = v2[i];
    for (int j = i + 1 + threadIdx.x; j < n; j += blockDim.x)
      di[j] += (mh_dt)(ui - u[j]) * (vi - v[j]) + (mh_dt)(u2i - u2[j]) * (v2i - v2[j]);
#endif
  }
  __syncthreads();
  mh_qacc *sr = (mh_qacc *)u, *ss = sr + n; /* u, v, u2, v2 are free again: 4n ints */
  mh_qap_delta_sums2(a, at, P, PT, n, r, s, sr, ss, tid, nt);
  const int *p = T->p;
  for (int k = tid; k < n; k += nt)
    if (k != r && k != s) {
      mh_ts_store_pair(p, T->tb, T->lf, T->d, T->tm, T->lp, n, k, r,
                       MH_QAP_SUM_SCALE * (ll)sr[k] + mh_qap_delta_ends(a, at, P, PT, n, k, r));
      mh_ts_store_pair(p, T->tb, T->lf, T->d, T->tm, T->lp, n, k, s,
                       MH_QAP_SUM_SCALE * (ll)ss[k] + mh_qap_delta_ends(a, at, P, PT, n, k, s));
    }
  if (tid == 0)
    mh_ts_store_pair(p, T->tb, T->lf, T->d, T->tm, T->lp, n, r, s, mh_qap_delta_rows(a, at, P, PT, n, r, s));
  __syncthreads();
}

/* ================================================================================================
 * qap_tabu_stream: the same search, move for move (same moves in the same order for the same
 * keys and starts: every delta is exact and the best move is chosen by the same rule), laid out
 * for a GPU's latency rather than a core's vector units (GPU_REVIEW "third read"; the issue of
 * the QAP kernels, docs/decisions/ once a GPU has measured both):
 *  - every thread owns fixed pairs of the packed triangle (pair q = tid, tid + nt, ... in the
 *    order of i * n + j), so the loads of a pass are independent, none waits on a row's minimum;
 *  - the delta update of iteration t and the scan of iteration t + 1 are one pass over the
 *    pairs: each thread updates its pairs (O(1), or the O(n) formula for the 2n - 3 pairs
 *    touching the moved units from sums prepared by the whole block) and ranks them at once;
 *  - u, v and the sums live in shared memory (n <= MH_TSS_SHARED_N; beyond, in `work`), the sums
 *    over m split between groups of threads (every thread busy), the pair (r, s) summed by the
 *    block; the best move by warp shuffles (mh_block_argmin);
 *  - with MH_QAP_TABLES_SHARED (n <= MH_TSS_TABLE_N), the flow matrix a and its transpose at, read
 *    by every sum, are copied into shared memory at the launch's start.
 * State and `work` as qap_tabu_run (work: S x 8n ints), so either kernel continues the other's
 * searches. */
#define MH_TSS_TABLE_N 64 /* MH_QAP_TABLES_SHARED (the host: n <= this): a and at in shared memory */
#ifdef MH_QAP_TABLES_SHARED
#define MH_TSS_SHARED_N MH_TSS_TABLE_N /* within the 48 KB of static shared memory with the tables */
#else
#define MH_TSS_SHARED_N 512
#endif

/* The best move of the stored deltas (as mh_ts_scan), each thread over its own pairs. */
__device__ __forceinline__ ll mh_tss_scan(const mh_ts_t *T, int now, int lim, mh_dt thr) {
  const int n = T->n;
  ll bkey = MH_LL_MAX, bidx = MH_LL_MAX;
  int i, j;
  for (mh_qap_pair_first(n, T->tid, &i, &j); i < n - 1; mh_qap_pair_next(n, T->nt, &i, &j)) {
    const ll ij = (ll)i * n + j;
    const ll x = (ll)mh_ts_key(T->d[ij], T->tm[ij], T->lp[ij], now, lim, thr);
    if (x < bkey) { bkey = x; bidx = ij; } /* a thread's pairs come in increasing ij */
  }
  mh_block_argmin(&bkey, &bidx);
  return bidx;
}

__device__ __forceinline__ void mh_tss_add(mh_qacc *x, mh_qacc v) {
#ifdef MH_QAP_DELTA32
  atomicAdd(x, v);
#else
  atomicAdd((unsigned long long *)x, (unsigned long long)v);
#endif
}

/* The sums over m of mh_qap_delta_rows(k, r) and (k, s) for every k into sr and ss, the m range
 * split between nt / n groups of threads (integer additions: any order gives the same sums). */
__device__ __forceinline__ void mh_tss_sums2(const mh_ts_t *T, int r, int s, mh_qacc *sr, mh_qacc *ss) {
  const int n = T->n, tid = T->tid, nt = T->nt;
  const int *a = T->a, *at = T->at, *bp = T->P, *bpt = T->PT;
  const int *ar = a + (ll)r * n, *as = a + (ll)s * n, *br = bp + (ll)r * n, *bs = bp + (ll)s * n;
  const int *tr = at + (ll)r * n, *ts = at + (ll)s * n, *cr = bpt + (ll)r * n, *cs = bpt + (ll)s * n;
  (void)tr; (void)ts; (void)cr; (void)cs;
  for (int k = tid; k < n; k += nt) { sr[k] = 0; ss[k] = 0; }
  __syncthreads();
  const int groups = nt >= n ? nt / n : 1;
  for (int w = tid; w < groups * n; w += nt) {
    const int k = w % n, g = w / n;
    const int m0 = (int)((ll)g * n / groups), m1 = (int)((ll)(g + 1) * n / groups);
    mh_qacc xr = 0, xs = 0;
    for (int m = m0; m < m1; ++m) MH_QAP_SUMS2_TERMS(m, k, xr, xs);
    mh_tss_add(&sr[k], xr);
    mh_tss_add(&ss[k], xs);
  }
}

/* mh_qap_delta_rows(r, s), its sum over k shared by the block. */
__device__ __forceinline__ ll mh_tss_delta_rows(const mh_ts_t *T, int r, int s) {
  const int n = T->n;
  const int *a = T->a, *at = T->at, *P = T->P, *PT = T->PT;
  const int *ai = a + (ll)r * n, *aj = a + (ll)s * n, *bi = P + (ll)r * n, *bj = P + (ll)s * n;
  ll part = 0;
#ifdef MH_QAP_SYMMETRIC
  (void)at; (void)PT;
  for (int k = T->tid; k < n; k += T->nt) part += (ll)(ai[k] - aj[k]) * (bj[k] - bi[k]);
#else
  const int *ti = at + (ll)r * n, *tj = at + (ll)s * n, *ci = PT + (ll)r * n, *cj = PT + (ll)s * n;
  for (int k = T->tid; k < n; k += T->nt)
    part += (ll)(ti[k] - tj[k]) * (cj[k] - ci[k]) + (ll)(ai[k] - aj[k]) * (bj[k] - bi[k]);
#endif
  return MH_QAP_SUM_SCALE * mh_block_sum(part) + mh_qap_delta_ends(a, at, P, PT, n, r, s);
}

/* After the move (r, s) (applied): every pair's delta updated, tmin and lpick of the pairs
 * touching r or s stored, and the best move of the next iteration (now, lim, thr) returned. */
__device__ __forceinline__ ll mh_tss_update_scan(const mh_ts_t *T, int r, int s, int now, int lim, mh_dt thr,
                                                 int *u, int *v, int *u2, int *v2, mh_qacc *sr, mh_qacc *ss) {
  const int n = T->n, tid = T->tid, nt = T->nt;
  const int *a = T->a, *at = T->at, *P = T->P, *PT = T->PT, *p = T->p;
  const int *ar = a + (ll)r * n, *as = a + (ll)s * n, *tr = at + (ll)r * n, *ts = at + (ll)s * n;
  const int *Pr = P + (ll)r * n, *Ps = P + (ll)s * n, *Qr = PT + (ll)r * n, *Qs = PT + (ll)s * n;
  for (int k = tid; k < n; k += nt) {
    u[k] = ar[k] - as[k];
    v[k] = Ps[k] - Pr[k];
    u2[k] = tr[k] - ts[k];
    v2[k] = Qs[k] - Qr[k];
  }
  mh_tss_sums2(T, r, s, sr, ss);
  const ll drs = mh_tss_delta_rows(T, r, s); /* its barriers also publish u, v and the sums */
  const int lo = r < s ? r : s, hi = r < s ? s : r;
  ll bkey = MH_LL_MAX, bidx = MH_LL_MAX;
  int i, j;
  for (mh_qap_pair_first(n, tid, &i, &j); i < n - 1; mh_qap_pair_next(n, nt, &i, &j)) {
    const ll ij = (ll)i * n + j;
    mh_dt dij;
    int tm, lp;
    if (i == r || i == s || j == r || j == s) {
      ll value;
      if (i == lo && j == hi) {
        value = drs;
      } else {
        const int x = (i == r || j == r) ? r : s, k = i == x ? j : i;
        value = MH_QAP_SUM_SCALE * (ll)(x == r ? sr[k] : ss[k]) + mh_qap_delta_ends(a, at, P, PT, n, k, x);
      }
      dij = (mh_dt)value;
      const int t1 = T->tb[(ll)i * n + p[j]], t2 = T->tb[(ll)j * n + p[i]];
      const int l1 = T->lf[(ll)i * n + p[j]], l2 = T->lf[(ll)j * n + p[i]];
      tm = t1 < t2 ? t1 : t2;
      lp = l1 > l2 ? l1 : l2;
      T->tm[ij] = tm;
      T->lp[ij] = lp;
    } else {
#ifdef MH_QAP_SYMMETRIC
      dij = T->d[ij] + 2 * (mh_dt)(u[i] - u[j]) * (v[i] - v[j]);
#else
      dij = T->d[ij] + (mh_dt)(u[i] - u[j]) * (v[i] - v[j]) + (mh_dt)(u2[i] - u2[j]) * (v2[i] - v2[j]);
#endif
      tm = T->tm[ij];
      lp = T->lp[ij];
    }
    T->d[ij] = dij;
    const ll key = (ll)mh_ts_key(dij, tm, lp, now, lim, thr);
    if (key < bkey) { bkey = key; bidx = ij; }
  }
  mh_block_argmin(&bkey, &bidx); /* its barriers keep u, v and the sums until every thread is done */
  return bidx;
}

/* The iteration's scalars from `now`: the aspiration limit, and the new-best threshold (a delta
 * below best - cost, clamped where no delta can be below). */
__device__ __forceinline__ void mh_ts_limits(int now, ll asp, ll best, ll cost, int *lim, mh_dt *thr) {
  const ll lim_ll = (ll)now - asp;
  *lim = (int)(lim_ll < -(1LL << 30) ? -(1LL << 30) : lim_ll);
  *thr = (mh_dt)(best - cost < MH_TS_THR_MIN ? MH_TS_THR_MIN : best - cost);
}

/* Search `sol`'s arrays, but u, v (the kernels' own). */
__device__ __forceinline__ void mh_ts_bind(mh_ts_t *T, const int *a, const int *at, const int *b, int n, int *perm,
                                           int *best_perm, void *delta, int *tabu, int *left, int *tmin,
                                           int *lpick, int *bp, int *bpt, ll sol) {
  const ll nn = (ll)n * n;
  T->a = a; T->at = at; T->b = b; T->n = n; T->nn = nn;
  T->p = perm + sol * n; T->bestp = best_perm + sol * n;
  T->d = (mh_dt *)delta + sol * nn;
  T->tb = tabu + sol * nn; T->lf = left + sol * nn; T->tm = tmin + sol * nn; T->lp = lpick + sol * nn;
  T->P = bp + sol * nn;
#ifdef MH_QAP_SYMMETRIC
  T->PT = T->P; /* symmetric: bp is its own transpose, bpt is not used */
  (void)bpt;
#else
  T->PT = bpt + sol * nn;
#endif
  T->tid = mh_tid(); T->nt = mh_nthreads();
}

/* Both kernels' search: (re)start from the state, `iters` iterations (or to `target`, or the
 * time), the state saved. STREAM: qap_tabu_stream's layout (one scan before the loop, then the
 * update fused with the next scan, u, v and the sums `sr`, `ss` of the block), else
 * qap_tabu_run's (a scan, then the update, each iteration); the same moves either way. */
template <int STREAM>
__device__ __forceinline__ void mh_ts_search(mh_ts_t *T, ll *st, unsigned long long key, int tenure_rule,
                                             int tenure_scale, ll aspiration, ll iters, ll target, int init,
                                             mh_qacc *sr, mh_qacc *ss) {
  const int n = T->n;
  if (init) {
    const ll c = mh_ts_init(T, init);
    if (init == 1) {
      for (int k = T->tid; k < n; k += T->nt) T->bestp[k] = T->p[k];
      if (T->tid == 0) {
        st[MH_TS_BEST] = c; st[MH_TS_ITER] = 0; st[MH_TS_BASE] = 0; st[MH_TS_TENURE] = 0; st[MH_TS_BEST_ITER] = 0;
      }
    }
    if (T->tid == 0) st[MH_TS_COST] = c;
    __syncthreads();
  }

  ll cost = st[MH_TS_COST], best = st[MH_TS_BEST], iter = st[MH_TS_ITER], base = st[MH_TS_BASE];
  unsigned long long ctr = (unsigned long long)st[MH_TS_CTR];
  ll tenure = st[MH_TS_TENURE], best_iter = st[MH_TS_BEST_ITER];
  const ll asp = aspiration < (1LL << 29) ? aspiration : (1LL << 29);
  const int tlo = (int)(0.9 * n), thi = (int)ceil(1.1 * n);
  __syncthreads();

  /* keep relative times in int32: shift them all back when they grow large */
  if (iter - base + 1 >= MH_TS_REBASE) {
    const ll shift = iter - base - (1 << 20);
    mh_ts_rebase(T, shift);
    base += shift;
  }

  int now = (int)(iter - base + 1), lim;
  mh_dt thr;
  mh_ts_limits(now, asp, best, cost, &lim, &thr);
  ll bidx = STREAM && iters > 0 && best > target ? mh_tss_scan(T, now, lim, thr) : 0;
  for (ll it = 0; it < iters && best > target && bidx != MH_LL_MAX && ((it & 63) || !mh_time_up()); ++it) {
    if (!STREAM) bidx = mh_ts_scan(T, now, lim, thr);
    const int r = (int)(bidx / n), s = (int)(bidx % n);
    /* every thread keeps the same scalars */
    cost += T->d[bidx];
    int t1, t2;
    if (tenure_rule == 0) {
      const double u1 = mh_uniform(key, ctr++), w2 = mh_uniform(key, ctr++);
      t1 = (int)(u1 * u1 * u1 * tenure_scale * n);
      t2 = (int)(w2 * w2 * w2 * tenure_scale * n);
    } else {
      if (iter % (2 * thi) == 0) tenure = tlo + mh_below(key, ctr++, thi - tlo + 1);
      t1 = t2 = (int)tenure;
    }
    const bool improved = cost < best;
    if (improved) { best = cost; best_iter = iter + 1; }
    mh_ts_apply(T, r, s, now, t1, t2, improved);
    ++iter;
    now = (int)(iter - base + 1);
    mh_ts_limits(now, asp, best, cost, &lim, &thr);
    if (STREAM) bidx = mh_tss_update_scan(T, r, s, now, lim, thr, T->u, T->v, T->u2, T->v2, sr, ss);
    else mh_ts_update(T, r, s);
  }

  if (T->tid == 0) {
    st[MH_TS_COST] = cost; st[MH_TS_BEST] = best; st[MH_TS_ITER] = iter; st[MH_TS_BASE] = base;
    st[MH_TS_CTR] = (ll)ctr; st[MH_TS_TENURE] = tenure; st[MH_TS_BEST_ITER] = best_iter;
  }
}

extern "C" __global__ void __launch_bounds__(MH_TS_MAX_BLOCK, 2)
qap_tabu_run(const int *a, const int *at, const int *b, int n, int *perm, int *best_perm, long long *stats,
             const unsigned long long *keys, void *delta, int *tabu, int *left, int *tmin, int *lpick, int *bp,
             int *bpt, int *work, int tenure_rule, int tenure_scale, long long aspiration, long long iters,
             long long target, int init) {
  const ll sol = mh_block();
  mh_ts_t T;
  mh_ts_bind(&T, a, at, b, n, perm, best_perm, delta, tabu, left, tmin, lpick, bp, bpt, sol);
  T.u = work + sol * 8 * n; T.v = T.u + n; T.u2 = T.u + 2 * n; T.v2 = T.u + 3 * n;
  mh_ts_search<0>(&T, stats + sol * MH_TS_NSTATS, keys[sol], tenure_rule, tenure_scale, aspiration, iters, target,
                  init, NULL, NULL);
}

extern "C" __global__ void __launch_bounds__(MH_TS_MAX_BLOCK, 2)
qap_tabu_stream(const int *a, const int *at, const int *b, int n, int *perm, int *best_perm, long long *stats,
                const unsigned long long *keys, void *delta, int *tabu, int *left, int *tmin, int *lpick, int *bp,
                int *bpt, int *work, int tenure_rule, int tenure_scale, long long aspiration, long long iters,
                long long target, int init) {
  __shared__ int s_uv[4 * MH_TSS_SHARED_N];
  __shared__ mh_qacc s_sums[2 * MH_TSS_SHARED_N];
  const ll sol = mh_block();
  mh_ts_t T;
  mh_ts_bind(&T, a, at, b, n, perm, best_perm, delta, tabu, left, tmin, lpick, bp, bpt, sol);
#ifdef MH_QAP_TABLES_SHARED
  __shared__ int s_a[MH_TSS_TABLE_N * MH_TSS_TABLE_N], s_at[MH_TSS_TABLE_N * MH_TSS_TABLE_N];
  for (ll k = T.tid; k < T.nn; k += T.nt) { s_a[k] = a[k]; s_at[k] = at[k]; }
  __syncthreads();
  T.a = s_a; T.at = s_at;
#endif
  int *w = work + sol * 8 * n;
  const bool fits = n <= MH_TSS_SHARED_N;
  T.u = fits ? s_uv : w; T.v = T.u + n; T.u2 = T.u + 2 * n; T.v2 = T.u + 3 * n;
  mh_qacc *sr = fits ? s_sums : (mh_qacc *)(w + 4 * n);
  mh_ts_search<1>(&T, stats + sol * MH_TS_NSTATS, keys[sol], tenure_rule, tenure_scale, aspiration, iters, target,
                  init, sr, sr + n);
}
