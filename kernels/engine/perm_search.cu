/* perm_search.cu - the generic engine's batched local searches over a user problem's moves
 * (metaheur/search/perm_search.py). One block = one search; the iteration loop runs inside the
 * kernel; block-stride loops and block reductions, so one thread (the CPU build) and a GPU block
 * give the same trajectory. Costs are in the engine's sense: MH_SENSE * the problem's value,
 * minimised; ties go to the smallest move index.
 *
 * perm_tabu: tabu search over `move` (MH_SWAP, MH_INSERT, MH_REVERSE). Per iteration every move
 *   is evaluated (the problem's row function, else pair deltas, else cost after the move), the
 *   best one is taken in the order aspired (a new best) < allowed < tabu. Memory by (element,
 *   position) as in Taillard (1991): a swap or reversal is tabu when both elements would return
 *   to positions they left recently, an insertion when its element would; a move made marks the
 *   positions left for floor(u^3 * tenure_scale * n) iterations, u uniform in (0, 1] (Taillard's
 *   2006 rule).
 * perm_ils: descent (first- or best-improvement over `move`) then `iters` kicks of `kick_moves`
 *   random moves of type `kick_move` each followed by a descent; a kicked local optimum that is
 *   equal or better is accepted (Lourenco, Martin and Stuetzle 2003).
 * perm_ig: iterated greedy (Ruiz and Stuetzle 2007): `destruct` random elements removed, each
 *   reinserted at its best position by partial_insert_row (ties: the problem's partial_insert_tie
 *   where `ties`, then the first; mh_best_partial_insert), an insertion
 *   descent to a local optimum, acceptance of a better result, or of a worse one with
 *   probability exp(-(new - current) / temperature).
 *
 * `init` 1: start from perm (value, cache, empty memory); 0: go on from the saved state. State
 * (S searches): perm, best S x n; stats S x MH_PS_NSTATS; keys S; caches S x cs; work S x ws;
 * rows S x n; ibuf S x 4n ints; scratch S x blockDim x n ints; tabu S x 2 x n x n ints (perm_tabu:
 * the memory tb by (element, position), then a swap's tm by pair, see mh_ps_scan_range).
 * A search stops early once its best is at or below `target`.
 */
#include "mh_common.cuh"
#include "mh_rng.cuh"
#include "mh_user_problem.cuh"
#include "perm_moves.cuh"

#define MH_PS_COST 0   /* current cost */
#define MH_PS_BEST 1   /* best cost */
#define MH_PS_ITER 2   /* tabu iterations, kicks or greedy iterations done */
#define MH_PS_CTR 3    /* random draws used */
#define MH_PS_MOVES 4  /* improving moves of the descents */
#define MH_PS_NSTATS 5

/* One search: its arrays and the block's thread numbering. */
struct mh_ps_t {
  user::Data D;
  int n, cs, tid, nt;
  int *p, *bp, *ib, *scr, *tb, *tm;
  ll *st, *work, *rows;
  user::cache_t *cache;
  unsigned long long key;
};

__device__ __forceinline__ mh_ps_t mh_ps_make(const user::Data &D, ll s, int *perm, int *best, ll *stats,
                                              user::cache_t *caches,
                                              int cs, ll *work, int ws, ll *rows, int *ibuf, int *scratch, int *tabu,
                                              int with_tabu, const unsigned long long *keys) {
  mh_ps_t S;
  const int n = D.n;
  S.D = D; S.n = n; S.cs = cs; S.tid = mh_tid(); S.nt = mh_nthreads();
  S.p = perm + s * n; S.bp = best + s * n; S.ib = ibuf + s * 4 * n;
  S.scr = scratch + s * S.nt * n; S.tb = with_tabu ? tabu + s * 2 * n * n : tabu;
  S.tm = S.tb + (with_tabu ? n * n : 0);
  S.st = stats + s * MH_PS_NSTATS; S.cache = caches + s * cs; S.work = work + s * ws; S.rows = rows + s * n;
  S.key = keys[s];
  return S;
}

__device__ __forceinline__ void mh_ps_copy(int *to, const int *from, int n, int tid, int nt) {
  for (int k = tid; k < n; k += nt) to[k] = from[k];
  __syncthreads();
}

/* Start from S->p: its cost, its cache, best = it. */
__device__ __forceinline__ void mh_ps_start(mh_ps_t *S) {
  __syncthreads();
  if (S->tid == 0) {
    const ll c = MH_SENSE * user::cost(S->D, S->p);
    S->st[MH_PS_COST] = c; S->st[MH_PS_BEST] = c;
    S->st[MH_PS_ITER] = 0; S->st[MH_PS_CTR] = 0; S->st[MH_PS_MOVES] = 0;
  }
  mh_ps_copy(S->bp, S->p, S->n, S->tid, S->nt);
  mh_perm_prepare(S->D, S->p, S->cache, S->cs, S->work);
}

/* best = the current solution when it is better (every thread reads the costs before any writes). */
__device__ __forceinline__ void mh_ps_keep_best(mh_ps_t *S) {
  const int better = S->st[MH_PS_COST] < S->st[MH_PS_BEST];
  __syncthreads();
  if (better) {
    if (S->tid == 0) S->st[MH_PS_BEST] = S->st[MH_PS_COST];
    mh_ps_copy(S->bp, S->p, S->n, S->tid, S->nt);
  }
  __syncthreads();
}

/* Apply move (type, i, j) of engine delta `d` to the current solution, keep its cache and the best. */
__device__ __forceinline__ void mh_ps_apply(mh_ps_t *S, int type, int i, int j, ll d) {
  __syncthreads();
  if (S->tid == 0) { mh_perm_apply(S->p, type, i, j); S->st[MH_PS_COST] += d; }
  __syncthreads();
  mh_perm_update(S->D, S->p, S->cache, S->cs, type, i, j, S->work);
  mh_ps_keep_best(S);
}

/* Row i of `type` into S->rows (engine sense not applied). */
__device__ __forceinline__ void mh_ps_row(mh_ps_t *S, int type, int i) {
  __syncthreads();
  mh_perm_row(S->D, S->p, S->cache, type, i, MH_SENSE * S->st[MH_PS_COST], S->rows, S->work, S->scr);
}

/* Engine delta of move (T, i, j) in a scan: the row function's S->rows[j] where `rowfn`, else the
 * pair delta (or the cost after the move). A swap is scanned as i < j. */
template <int T>
__device__ __forceinline__ ll mh_ps_delta(const mh_ps_t *S, int rowfn, int i, int j, ll base, int *scratch) {
  if (rowfn) return MH_SENSE * S->rows[j];
  if (T == MH_SWAP) {
#ifdef MH_USER_HAS_SWAP_DELTA
    return MH_SENSE * user::swap_delta(S->D, S->p, S->cache, i, j);
#endif
  }
  return MH_SENSE * mh_perm_delta_t<T>(S->D, S->p, S->cache, i, j, base, scratch);
}

/* A scan's delta type: int where the problem declares every delta below 2^30 (MH_USER_DELTA32,
 * from delta_bound; twice the lanes in the CPU build's vectorised min pass), else ll. */
#ifdef MH_USER_DELTA32
typedef int mh_ps_d_t;
#define MH_PS_D_MAX 2147483647
#define MH_PS_D_LIM (1 << 30)
#else
typedef ll mh_ps_d_t;
#define MH_PS_D_MAX MH_LL_MAX
#define MH_PS_D_LIM MH_LL_MAX
#endif

/* MH_PS_D_MAX where `out`, else d: a select written with masks, which gcc vectorises in a min
 * reduction (a conditional expression there it leaves as a branch). */
__device__ __forceinline__ mh_ps_d_t mh_ps_shut(mh_ps_d_t d, int out) {
  const mh_ps_d_t m = -(mh_ps_d_t)out;
  return (d & ~m) | (MH_PS_D_MAX & m);
}

/* One thread's part of the scan of moves (i, j), lo <= j < hi, of type T: its best (key, idx),
 * idx = i * n + j, by engine delta. Tabu search (TABU): a move is shut out (key MH_LL_MAX) when
 * it is tabu and not aspired (d >= thr = best - cost); the others rank by delta alone, since an
 * aspired move's delta is below every allowed one's, and a scan that shuts out every move is
 * redone without the tabu test (all tabu: the smallest delta). Tabu times of row i are read
 * contiguously: S->tm[i * n + j] (a swap: the pair's sooner expiry) or S->tb[p[i] * n + j] (an
 * insertion). Per row a branch-free min pass, then a pass that locates it (the first j). */
template <int T, int TABU>
__device__ __forceinline__ void mh_ps_scan_range(const mh_ps_t *S, int rowfn, int i, int lo, int hi, int now, ll thr,
                                                 ll *key, ll *idx) {
  const int n = S->n, tid = mh_tid(), nt = mh_nthreads(); /* constants in the CPU build */
  const ll base = MH_SENSE * S->st[MH_PS_COST];
  const int *tr = T == MH_SWAP ? S->tm + (ll)i * n : S->tb + (ll)S->p[i] * n;
  int *scratch = S->scr + (ll)tid * n;
  /* thr clamped to the deltas' range (|d| < MH_PS_D_LIM) keeps every test d >= thr */
  const mh_ps_d_t t = (mh_ps_d_t)(thr < -MH_PS_D_LIM ? -MH_PS_D_LIM : thr > MH_PS_D_LIM ? MH_PS_D_LIM : thr);
  mh_ps_d_t rmin = MH_PS_D_MAX;
  for (int j = lo + tid; j < hi; j += nt) {
    const mh_ps_d_t d = (mh_ps_d_t)mh_ps_delta<T>(S, rowfn, i, j, base, scratch);
    const mh_ps_d_t x = mh_ps_shut(d, TABU && (tr[j] >= now) & (d >= t));
    rmin = x < rmin ? x : rmin;
  }
  const ll r = rmin == MH_PS_D_MAX ? MH_LL_MAX : (ll)rmin; /* every move shut out: none */
  if (r >= *key) return;
  for (int j = lo + tid; j < hi; j += nt) {
    const mh_ps_d_t d = (mh_ps_d_t)mh_ps_delta<T>(S, rowfn, i, j, base, scratch);
    const mh_ps_d_t x = mh_ps_shut(d, TABU && (tr[j] >= now) & (d >= t));
    if (x == rmin) { *key = r; *idx = (ll)i * n + j; return; }
  }
}

template <int T, int TABU>
__device__ __forceinline__ void mh_ps_scan_row(const mh_ps_t *S, int rowfn, int i, int now, ll thr, ll *key, ll *idx) {
  if (T == MH_INSERT) {
    mh_ps_scan_range<T, TABU>(S, rowfn, i, 0, i, now, thr, key, idx);
    mh_ps_scan_range<T, TABU>(S, rowfn, i, i + 1, S->n, now, thr, key, idx);
  } else {
    mh_ps_scan_range<T, TABU>(S, rowfn, i, i + 1, S->n, now, thr, key, idx);
  }
}

/* Row i of the scan of `type` (the row function first, where the problem has one). */
template <int TABU>
__device__ __forceinline__ void mh_ps_scan(mh_ps_t *S, int type, int rowfn, int i, int now, ll thr, ll *key, ll *idx) {
  if (rowfn) mh_ps_row(S, type, i);
  if (type == MH_SWAP) mh_ps_scan_row<MH_SWAP, TABU>(S, rowfn, i, now, thr, key, idx);
  else if (type == MH_INSERT) mh_ps_scan_row<MH_INSERT, TABU>(S, rowfn, i, now, thr, key, idx);
  else mh_ps_scan_row<MH_REVERSE, TABU>(S, rowfn, i, now, thr, key, idx);
}

/* The best move of the whole neighbourhood (block-wide, ties to the smallest index; idx
 * MH_LL_MAX when there is none, or when the time is up before the scan ends: mh_time_up between
 * rows); tabu search (TABU) with the order aspired < allowed < tabu. */
template <int TABU>
__device__ __forceinline__ void mh_ps_best_move(mh_ps_t *S, int type, int rowfn, int now, ll *key, ll *idx) {
  const ll thr = S->st[MH_PS_BEST] - S->st[MH_PS_COST];
  *key = MH_LL_MAX; *idx = MH_LL_MAX;
  for (int i = 0; i < S->n; ++i) {
    if (mh_time_up()) { *key = MH_LL_MAX; *idx = MH_LL_MAX; return; }
    mh_ps_scan<TABU>(S, type, rowfn, i, now, thr, key, idx);
  }
  mh_block_argmin(key, idx);
  if (TABU && *idx == MH_LL_MAX) { /* every move tabu and none aspired */
    for (int i = 0; i < S->n; ++i) mh_ps_scan<0>(S, type, rowfn, i, now, thr, key, idx);
    mh_block_argmin(key, idx);
  }
}

/* After the swap (i, j): the sooner expiry tm[lo * n + hi] = min(tb[p[lo]][hi], tb[p[hi]][lo]) of
 * the pairs touching i or j, the only ones whose elements or tabu times changed. */
__device__ __forceinline__ void mh_ps_tabu_pairs(const mh_ps_t *S, int i, int j) {
  const int n = S->n;
  const int *p = S->p, *tb = S->tb;
  __syncthreads();
  for (int k = S->tid; k < n; k += S->nt)
    for (int t = 0; t < 2; ++t) {
      const int u = t ? j : i, lo = k < u ? k : u, hi = k < u ? u : k;
      if (k == u || (t == 1 && k == i)) continue; /* the pair (i, j) once */
      const int x = tb[(ll)p[lo] * n + hi], y = tb[(ll)p[hi] * n + lo];
      S->tm[(ll)lo * n + hi] = x < y ? x : y;
    }
  __syncthreads();
}

/* Descent to a local optimum of `type`: best-improvement (first == 0: the best move of the whole
 * neighbourhood) or first-improvement (the best move of the first row with an improving one,
 * rows scanned cyclically from where the last improvement was found). Stops at `target`. */
__device__ __forceinline__ void mh_ps_descend(mh_ps_t *S, int type, int first, ll target) {
  const int n = S->n;
  const int rowfn = mh_perm_has_row(type);
  int i0 = 0, since = 0;
  while (S->st[MH_PS_BEST] > target && !mh_time_up()) {
    ll key = MH_LL_MAX, idx = MH_LL_MAX;
    if (first) {
      mh_ps_scan<0>(S, type, rowfn, i0, 0, 0, &key, &idx);
      mh_block_argmin(&key, &idx);
    } else {
      mh_ps_best_move<0>(S, type, rowfn, 0, &key, &idx);
    }
    if (key < 0) {
      mh_ps_apply(S, type, (int)(idx / n), (int)(idx % n), key);
      if (S->tid == 0) S->st[MH_PS_MOVES] += 1;
      since = 0;
    } else if (!first || ++since >= n) {
      break;
    }
    if (first) i0 = (i0 + 1) % n;
  }
  __syncthreads();
}

extern "C" __global__ void perm_tabu(int *perm, int *best, long long *stats, const unsigned long long *keys, int k,
                                     int n, int type, int iters, double tenure_scale, int init, long long target,
                                     /*@CACHE_T@*/long long *caches, int cs, long long *work, int ws, long long *rows, int *ibuf,
                                     int *scratch, int *tabu /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
  const ll s = mh_block();
  if (s >= k) return;
  mh_ps_t S = mh_ps_make(D, s, perm, best, stats, caches, cs, work, ws, rows, ibuf, scratch, tabu, 1, keys);
  const int rowfn = mh_perm_has_row(type);
  if (init) {
    for (ll e = S.tid; e < 2 * (ll)n * n; e += S.nt) S.tb[e] = 0; /* tb and tm */
    mh_ps_start(&S);
  }
  for (int it = 0; it < iters && S.st[MH_PS_BEST] > target && n > 1 && !mh_time_up(); ++it) {
    const int now = (int)S.st[MH_PS_ITER] + 1;
    ll key, idx;
    mh_ps_best_move<1>(&S, type, rowfn, now, &key, &idx);
    if (idx == MH_LL_MAX) break;
    const int i = (int)(idx / n), j = (int)(idx % n);
    __syncthreads();
    if (S.tid == 0) {
      unsigned long long ctr = (unsigned long long)S.st[MH_PS_CTR];
      const double u1 = mh_uniform(S.key, ctr++), u2 = mh_uniform(S.key, ctr++);
      const ll scale = (ll)(tenure_scale * n);
      S.tb[(ll)S.p[i] * n + i] = now + (int)(u1 * u1 * u1 * scale);
      if (type != MH_INSERT) S.tb[(ll)S.p[j] * n + j] = now + (int)(u2 * u2 * u2 * scale);
      S.st[MH_PS_CTR] = (ll)ctr;
      S.st[MH_PS_ITER] = now;
    }
    mh_ps_apply(&S, type, i, j, key);
    if (type == MH_SWAP) mh_ps_tabu_pairs(&S, i, j);
  }
}

extern "C" __global__ void perm_ils(int *perm, int *best, long long *stats, const unsigned long long *keys, int k,
                                    int n, int type, int first, int kick_move, int kick_moves, int iters, int init,
                                    long long target, /*@CACHE_T@*/long long *caches, int cs, long long *work, int ws,
                                    long long *rows, int *ibuf, int *scratch /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
  const ll s = mh_block();
  if (s >= k) return;
  mh_ps_t S = mh_ps_make(D, s, perm, best, stats, caches, cs, work, ws, rows, ibuf, scratch, ibuf, 0, keys);
  int *save = S.ib;
  if (init) {
    mh_ps_start(&S);
    mh_ps_descend(&S, type, first, target);
  }
  for (int it = 0; it < iters && S.st[MH_PS_BEST] > target && n > 1 && !mh_time_up(); ++it) {
    const ll before = S.st[MH_PS_COST];
    mh_ps_copy(save, S.p, n, S.tid, S.nt);
    if (S.tid == 0) {
      unsigned long long ctr = (unsigned long long)S.st[MH_PS_CTR];
      for (int m = 0; m < kick_moves; ++m) {
        const int a = mh_below(S.key, ctr++, n);
        int b = mh_below(S.key, ctr++, n - 1);
        b += b >= a;
        mh_perm_apply(S.p, kick_move, a, b);
      }
      S.st[MH_PS_CTR] = (ll)ctr;
      S.st[MH_PS_COST] = MH_SENSE * user::cost(S.D, S.p);
      S.st[MH_PS_ITER] += 1;
    }
    __syncthreads();
    mh_perm_prepare(S.D, S.p, S.cache, S.cs, S.work);
    mh_ps_keep_best(&S);
    mh_ps_descend(&S, type, first, target);
    if (S.st[MH_PS_COST] > before) { /* worse: back to the saved local optimum */
      mh_ps_copy(S.p, save, n, S.tid, S.nt);
      if (S.tid == 0) S.st[MH_PS_COST] = before;
      mh_perm_prepare(S.D, S.p, S.cache, S.cs, S.work);
    }
    __syncthreads();
  }
}

/* Defined for every problem (the loader reads every signature); empty without partial_insert_row. */
extern "C" __global__ void perm_ig(int *perm, int *best, long long *stats, const unsigned long long *keys, int k,
                                   int n, int first, int destruct, double temperature, int ties, int iters, int init,
                                   long long target, /*@CACHE_T@*/long long *caches, int cs, long long *work, int ws,
                                   long long *rows, int *ibuf, int *scratch /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
#ifdef MH_USER_HAS_PARTIAL_INSERT_ROW
  const ll s = mh_block();
  if (s >= k) return;
  mh_ps_t S = mh_ps_make(D, s, perm, best, stats, caches, cs, work, ws, rows, ibuf, scratch, ibuf, 0, keys);
  int *save = S.ib, *removed = S.ib + n;
  const int d = destruct < n ? destruct : n - 1;
  if (init) {
    mh_ps_start(&S);
    mh_ps_descend(&S, MH_INSERT, first, target);
  }
  for (int it = 0; it < iters && S.st[MH_PS_BEST] > target && n > 1 && !mh_time_up(); ++it) {
    const ll before = S.st[MH_PS_COST];
    mh_ps_copy(save, S.p, n, S.tid, S.nt);
    if (S.tid == 0) { /* destruction: d random elements out of p, which keeps the rest in order */
      unsigned long long ctr = (unsigned long long)S.st[MH_PS_CTR];
      for (int m = 0, len = n; m < d; ++m, --len) {
        const int r = mh_below(S.key, ctr++, len);
        removed[m] = S.p[r];
        for (int q = r; q < len - 1; ++q) S.p[q] = S.p[q + 1];
      }
      S.st[MH_PS_CTR] = (ll)ctr;
      S.st[MH_PS_ITER] += 1;
    }
    __syncthreads();
    for (int m = 0, len = n - d; m < d; ++m, ++len) { /* construction: best insertion */
      ll key, idx;
      mh_best_partial_insert(S.D, S.p, len, removed[m], ties, S.rows, S.work, &key, &idx);
      if (S.tid == 0) {
        for (int q = len; q > (int)idx; --q) S.p[q] = S.p[q - 1];
        S.p[idx] = removed[m];
        S.st[MH_PS_COST] = key;
      }
      __syncthreads();
    }
    if (d == 0 && S.tid == 0) S.st[MH_PS_COST] = MH_SENSE * user::cost(S.D, S.p);
    __syncthreads();
    mh_perm_prepare(S.D, S.p, S.cache, S.cs, S.work);
    mh_ps_keep_best(&S);
    mh_ps_descend(&S, MH_INSERT, first, target);
    const ll now = S.st[MH_PS_COST];
    int accept = now < before;
    if (!accept && temperature > 0.0) {
      const unsigned long long ctr = (unsigned long long)S.st[MH_PS_CTR];
      accept = mh_uniform(S.key, ctr) <= exp(-(double)(now - before) / temperature);
    }
    __syncthreads();
    if (S.tid == 0) S.st[MH_PS_CTR] += temperature > 0.0 && now >= before;
    if (!accept) {
      mh_ps_copy(S.p, save, n, S.tid, S.nt);
      if (S.tid == 0) S.st[MH_PS_COST] = before;
      mh_perm_prepare(S.D, S.p, S.cache, S.cs, S.work);
    }
    __syncthreads();
  }
#endif
}

/* values[s] = MH_SENSE * cost(best[s]), recomputed from scratch (the exact result of a search). */
extern "C" __global__ void perm_best_values(const int *best, int k, int n, long long *values /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
  const ll s = mh_block();
  if (s < k && mh_tid() == 0) values[s] = MH_SENSE * user::cost(D, best + s * n);
}
