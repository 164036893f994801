/* perm_search.cu - the generic engine's batched local searches over a user problem's moves
 * (metaheur/search/perm_search.py). One block = one search; the iteration loop runs inside the
 * kernel; block-stride loops and block reductions, so one thread (the CPU build) and a GPU block
 * give the same trajectory. Costs are in the engine's sense: MH_SENSE * the problem's value,
 * minimised; ties go to the smallest move index.
 *
 * perm_tabu: tabu search over `move` (MH_SWAP, MH_INSERT, MH_SEGMENT). Per iteration every move
 *   is evaluated (the problem's row function, else pair deltas, else cost after the move), the
 *   best one is taken in the order aspired (a new best) < allowed < tabu. Memory by (element,
 *   position) as in Taillard (1991): a swap is tabu when both elements would return to positions
 *   they left recently, an insertion or a segment move when its (first) element would; a move
 *   made marks the positions left for floor(u^3 * tenure_scale * n) iterations, u uniform in
 *   (0, 1] (Taillard's 2006 rule).
 * Every scan (tabu iterations, descents) covers one of three neighbourhoods:
 *   - all the moves of `move`, row by row (mh_ps_scan_row);
 *   - `granular`, where the problem gives candidate lists (D.mh_cand, D.mh_ck per element, the
 *     granular neighbourhoods of Toth and Vigo 2003): per row only the moves that put the row's
 *     element (a segment) right before or after one of its candidates (mh_ps_cand_move), by pair
 *     deltas or cost, never rows;
 *   - `sample` > 0: `sample` random moves drawn from the search's stream (4 draws a move,
 *     mh_ps_sample_move), whatever thread evaluates them; a descent over samples stops at the
 *     first sample without an improving move.
 * How a scan's rows are split (mh_ps_split): by default (the old scan) one row at a time by the
 *   whole block; with MH_PS_ROWS (PermSearchParams(scan="warps")) the scans by pair deltas or cost
 *   (whole or granular) give each warp of the block rows of their own, w, w + W, ..., its lanes the
 *   row's moves, each thread its own (key, idx) and one block argmin at the end: the argmin over
 *   (delta, r * n + j) does not depend on the split, so the best move is the same. A
 *   first-improvement descent scans W consecutive rows at once and takes the first of them with an
 *   improving move (mh_ps_first_part): the sequential scan's move. The problem's row functions
 *   (whole-block functions) keep one row at a time; sampled scans split moves, not rows.
 * perm_ils: descent (first- or best-improvement over `move`) then `iters` kicks of `kick_moves`
 *   random moves of type `kick_move` each followed by a descent; a kicked local optimum that is
 *   equal or better is accepted (Lourenco, Martin and Stuetzle 2003). The kick's cost: `cost` by
 *   thread 0, or with the warp kernels (MH_PS_WARP) on a block of threads the kick moves' deltas
 *   from the problem's row function (mh_ps_kick_rows): the same values.
 * perm_ig: iterated greedy (Ruiz and Stuetzle 2007): `destruct` random elements removed, each
 *   reinserted at its best position by partial_insert_row (ties: the problem's partial_insert_tie
 *   where `ties`, then the first; mh_best_partial_insert), an insertion
 *   descent to a local optimum, acceptance of a better result, or of a worse one with
 *   probability exp(-(new - current) / temperature).
 *
 * `init` 1: start from perm (value, cache, empty memory); 0: go on from the saved state. State
 * (S searches): perm, best S x n; stats S x MH_PS_NSTATS; keys S; caches S x cs; work S x ws;
 * rows S x n; ibuf S x 4n ints (saved permutation, removed elements, -, positions of the
 * elements for the granular scans); scratch S x blockDim x n ints; tabu S x 2 x n x n ints (perm_tabu:
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
  int n, cs, tid, nt, sample, gran;
  int *p, *bp, *ib, *at, *scr, *tb, *tm;
  ll *st, *work, *rows;
  user::cache_t *cache;
  unsigned long long key;
};

__device__ __forceinline__ mh_ps_t mh_ps_make(const user::Data &D, ll s, int *perm, int *best, ll *stats,
                                              user::cache_t *caches,
                                              int cs, ll *work, int ws, ll *rows, int *ibuf, int *scratch, int *tabu,
                                              int with_tabu, const unsigned long long *keys, int sample, int granular) {
  mh_ps_t S;
  const int n = D.n;
  S.D = D; S.n = n; S.cs = cs; S.tid = mh_tid(); S.nt = mh_nthreads();
  S.sample = sample;
#ifdef MH_USER_HAS_CANDIDATES
  S.gran = granular && D.mh_ck > 0;
#else
  S.gran = 0; (void)granular;
#endif
  S.p = perm + s * n; S.bp = best + s * n; S.ib = ibuf + s * 4 * n; S.at = S.ib + 3 * n;
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

/* Row r of `type` into S->rows (engine sense not applied). */
__device__ __forceinline__ void mh_ps_row(mh_ps_t *S, int type, int r) {
  __syncthreads();
  mh_perm_row(S->D, S->p, S->cache, type, r, MH_SENSE * S->st[MH_PS_COST], S->rows, S->work, S->scr);
}

/* How a scan's rows and their moves are split between the block's threads: part `part` of
 * `parts` takes rows part, part + parts, ... and its `lanes` threads (lane `lane`) the moves of
 * each. One part, the whole block, without MH_PS_ROWS and where the scan calls the problem's row
 * function (`whole`); with MH_PS_ROWS otherwise a part a warp (the last may be partial). On the
 * CPU build's one thread, one part of one lane either way. */
struct mh_ps_split_t { int part, parts, lane, lanes; };

__device__ __forceinline__ mh_ps_split_t mh_ps_split(int whole) {
  const int t = mh_tid(), nt = mh_nthreads();
  mh_ps_split_t q = {0, 1, t, nt};
#ifdef MH_PS_ROWS
  if (!whole) { q.part = t >> 5; q.parts = (nt + 31) >> 5; q.lane = t & 31; q.lanes = mh_imin(32, nt - (t & ~31)); }
#endif
  (void)whole;
  return q;
}

/* Engine delta of move (T, r, j) in a scan: the row function's S->rows[j] where `rowfn`, else the
 * pair delta (or the cost after the move). A swap is given as r < j. */
template <int T>
__device__ __forceinline__ ll mh_ps_delta(const mh_ps_t *S, int rowfn, int r, int j, ll base, int *scratch) {
  if (rowfn) return MH_SENSE * S->rows[j];
  if (T == MH_SWAP) {
#ifdef MH_USER_HAS_SWAP_DELTA
    return MH_SENSE * user::swap_delta(S->D, S->p, S->cache, r, j);
#endif
  }
  return MH_SENSE * mh_perm_delta_t<T>(S->D, S->p, S->cache, r, j, base, scratch);
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

/* thr clamped to the deltas' range (|d| < MH_PS_D_LIM) keeps every test d >= thr */
__device__ __forceinline__ mh_ps_d_t mh_ps_clamp(ll thr) {
  return (mh_ps_d_t)(thr < -MH_PS_D_LIM ? -MH_PS_D_LIM : thr > MH_PS_D_LIM ? MH_PS_D_LIM : thr);
}

/* The tabu times move (T, r, j) is tested against: a swap's pair row S->tm[r * n + .] (r < j),
 * else the row of the element the move takes to j, S->tb[p[pos(r)] * n + .]. */
template <int T>
__device__ __forceinline__ const int *mh_ps_tabu_row(const mh_ps_t *S, int r) {
  return T == MH_SWAP ? S->tm + (ll)r * S->n : S->tb + (ll)S->p[mh_perm_row_pos(T, r)] * S->n;
}

/* One thread's part (lane q.lane of q.lanes) of the scan of moves (r, j), lo <= j < hi, of type T: its best (key, idx),
 * idx = r * n + j, by engine delta. Tabu search (TABU): a move is shut out (key MH_LL_MAX) when
 * it is tabu and not aspired (d >= thr = best - cost); the others rank by delta alone, since an
 * aspired move's delta is below every allowed one's, and a scan that shuts out every move is
 * redone without the tabu test (all tabu: the smallest delta). Tabu times of row r are read
 * contiguously (mh_ps_tabu_row). Per row a branch-free min pass, then a pass that locates it
 * (the first j). */
template <int T, int TABU>
__device__ __forceinline__ void mh_ps_scan_range(const mh_ps_t *S, const mh_ps_split_t &q, int rowfn, int r, int lo,
                                                 int hi, int now, ll thr, ll *key, ll *idx) {
  const int n = S->n, tid = mh_tid(), lane = q.lane, nt = q.lanes; /* constants in the CPU build */
  const ll base = MH_SENSE * S->st[MH_PS_COST];
  const int *tr = mh_ps_tabu_row<T>(S, r);
  int *scratch = S->scr + (ll)tid * n;
  const mh_ps_d_t t = mh_ps_clamp(thr);
  mh_ps_d_t rmin = MH_PS_D_MAX;
  for (int j = lo + lane; j < hi; j += nt) {
    const mh_ps_d_t d = (mh_ps_d_t)mh_ps_delta<T>(S, rowfn, r, j, base, scratch);
    const mh_ps_d_t x = mh_ps_shut(d, TABU && (tr[j] >= now) & (d >= t));
    rmin = x < rmin ? x : rmin;
  }
  const ll m = rmin == MH_PS_D_MAX ? MH_LL_MAX : (ll)rmin; /* every move shut out: none */
  if (m >= *key) return;
  for (int j = lo + lane; j < hi; j += nt) {
    const mh_ps_d_t d = (mh_ps_d_t)mh_ps_delta<T>(S, rowfn, r, j, base, scratch);
    const mh_ps_d_t x = mh_ps_shut(d, TABU && (tr[j] >= now) & (d >= t));
    if (x == rmin) { *key = m; *idx = (ll)r * n + j; return; }
  }
}

template <int T, int TABU>
__device__ __forceinline__ void mh_ps_scan_row(const mh_ps_t *S, const mh_ps_split_t &q, int rowfn, int r, int now,
                                               ll thr, ll *key, ll *idx) {
  const int pos = mh_perm_row_pos(T, r);
  if (T == MH_INSERT || T == MH_SEGMENT) {
    mh_ps_scan_range<T, TABU>(S, q, rowfn, r, 0, pos, now, thr, key, idx);
    mh_ps_scan_range<T, TABU>(S, q, rowfn, r, pos + 1, mh_perm_row_end(T, r, S->n), now, thr, key, idx);
  } else {
    mh_ps_scan_range<T, TABU>(S, q, rowfn, r, r + 1, S->n, now, thr, key, idx);
  }
}

/* One move (T, r, j) of a granular or sampled scan, evaluated by one thread: its engine delta,
 * shut out where tabu and not aspired, into the thread's best (key, idx). */
template <int T, int TABU>
__device__ __forceinline__ void mh_ps_consider(const mh_ps_t *S, int r, int j, int now, ll thr, ll base, int *scratch,
                                               ll *key, ll *idx) {
  const mh_ps_d_t d = (mh_ps_d_t)mh_ps_delta<T>(S, 0, r, j, base, scratch);
  const mh_ps_d_t x = mh_ps_shut(d, TABU && (mh_ps_tabu_row<T>(S, r)[j] >= now) & (d >= mh_ps_clamp(thr)));
  if (x != MH_PS_D_MAX) mh_argmin_step(key, idx, (ll)x, (ll)r * S->n + j);
}

/* Move `side` (0/1) of row r that puts the row's element (segment) next to the element at
 * position q, as (*mr, *mj); 0 when there is none. Insertion and segment: right before (0) or
 * after (1) it; swap: with the position before (0) or after (1) it; reversal: the one that ends
 * at the row's element (0) or at q (1), given as mr < mj. */
template <int T>
__device__ __forceinline__ int mh_ps_cand_move(int r, int q, int side, int n, int *mr, int *mj) {
  int a = mh_perm_row_pos(T, r), j = -1, len = 1;
  if (T == MH_SEGMENT) { int s, rev; mh_seg_decode(r, &s, &len, &rev); }
  *mr = r;
  if (T == MH_SWAP) {
    j = side ? q + 1 : q - 1;
    if (j < 0 || j >= n || j == a) return 0;
    *mr = a < j ? a : j; *mj = a < j ? j : a;
    return 1;
  }
  if (T == MH_REVERSE) {
    int lo, hi;
    if (q > a) { lo = side ? a + 1 : a; hi = side ? q : q - 1; }
    else { lo = side ? q : q + 1; hi = side ? a - 1 : a; }
    *mr = lo; *mj = hi;
    return lo < hi;
  }
  if (q >= a && q < a + len) return 0; /* the candidate is in the segment */
  j = q < a ? q + side : q - len + side;
  *mj = j;
  return j >= 0 && j <= n - len && j != a;
}

#ifdef MH_USER_HAS_CANDIDATES
/* Granular scan of row r: the moves next to the candidates of the row's element (S->at holds
 * every element's position: mh_ps_positions), 2 a candidate, spread over the part's lanes. */
template <int T, int TABU>
__device__ __forceinline__ void mh_ps_scan_cand(const mh_ps_t *S, const mh_ps_split_t &q, int r, int now, ll thr,
                                                ll *key, ll *idx) {
  const int n = S->n, k = (int)S->D.mh_ck;
  const int *cand = S->D.mh_cand + (ll)S->p[mh_perm_row_pos(T, r)] * k;
  const ll base = MH_SENSE * S->st[MH_PS_COST];
  int *scratch = S->scr + (ll)mh_tid() * n;
  for (int m = q.lane; m < 2 * k; m += q.lanes) {
    int mr, mj;
    if (mh_ps_cand_move<T>(r, S->at[cand[m >> 1]], m & 1, n, &mr, &mj))
      mh_ps_consider<T, TABU>(S, mr, mj, now, thr, base, scratch, key, idx);
  }
}
#endif

/* S->at[e] = position of element e (every thread; for the granular scans). */
__device__ __forceinline__ void mh_ps_positions(mh_ps_t *S) {
  __syncthreads();
  for (int k = S->tid; k < S->n; k += S->nt) S->at[S->p[k]] = k;
  __syncthreads();
}

/* Random move number m of the scan whose draws start at ctr (4 a move): a position and another
 * (swap and reversal as r < j), or a segment's start, length, orientation and destination. */
template <int T>
__device__ __forceinline__ void mh_ps_sample_move(const mh_ps_t *S, unsigned long long ctr, int m, int *mr, int *mj) {
  const int n = S->n;
  const unsigned long long c = ctr + 4ull * (unsigned long long)m;
  if (T == MH_SEGMENT) {
    const int s = mh_below(S->key, c, n);
    const int most = mh_imin(MH_SEG_K, mh_imin(n - 1, n - s));
    const int len = 1 + mh_below(S->key, c + 1, most);
    const int rev = MH_SEG_REV && len > 1 ? mh_below(S->key, c + 2, 2) : 0;
    int j = mh_below(S->key, c + 3, n - len);
    j += j >= s;
    *mr = mh_seg_code(s, len, rev); *mj = j;
    return;
  }
  const int a = mh_below(S->key, c, n);
  int b = mh_below(S->key, c + 1, n - 1);
  b += b >= a;
  if (T == MH_INSERT) { *mr = a; *mj = b; }
  else { *mr = a < b ? a : b; *mj = a < b ? b : a; }
}

template <int T, int TABU>
__device__ __forceinline__ void mh_ps_scan_sample(const mh_ps_t *S, int now, ll thr, ll *key, ll *idx) {
  const ll base = MH_SENSE * S->st[MH_PS_COST];
  const unsigned long long ctr = (unsigned long long)S->st[MH_PS_CTR];
  int *scratch = S->scr + (ll)mh_tid() * S->n;
  for (int m = mh_tid(); m < S->sample; m += mh_nthreads()) {
    int mr, mj;
    mh_ps_sample_move<T>(S, ctr, m, &mr, &mj);
    mh_ps_consider<T, TABU>(S, mr, mj, now, thr, base, scratch, key, idx);
  }
}

/* The split of the scans of `type` (mh_ps_split): the whole block where it calls the row function. */
__device__ __forceinline__ mh_ps_split_t mh_ps_scan_split(const mh_ps_t *S, int rowfn) {
  return mh_ps_split(rowfn && !S->gran);
}

/* Row r of the scan of `type` by the threads of q (granular, else the row function first, where
 * the problem has one: then q is the whole block). */
template <int TABU>
__device__ __forceinline__ void mh_ps_scan(mh_ps_t *S, const mh_ps_split_t &q, int type, int rowfn, int r, int now,
                                           ll thr, ll *key, ll *idx) {
#ifdef MH_USER_HAS_CANDIDATES
  if (S->gran) {
    if (type == MH_SWAP) mh_ps_scan_cand<MH_SWAP, TABU>(S, q, r, now, thr, key, idx);
    else if (type == MH_INSERT) mh_ps_scan_cand<MH_INSERT, TABU>(S, q, r, now, thr, key, idx);
    else if (type == MH_SEGMENT) mh_ps_scan_cand<MH_SEGMENT, TABU>(S, q, r, now, thr, key, idx);
    else mh_ps_scan_cand<MH_REVERSE, TABU>(S, q, r, now, thr, key, idx);
    return;
  }
#endif
  if (rowfn) mh_ps_row(S, type, r);
  if (type == MH_SWAP) mh_ps_scan_row<MH_SWAP, TABU>(S, q, rowfn, r, now, thr, key, idx);
  else if (type == MH_INSERT) mh_ps_scan_row<MH_INSERT, TABU>(S, q, rowfn, r, now, thr, key, idx);
  else if (type == MH_SEGMENT) mh_ps_scan_row<MH_SEGMENT, TABU>(S, q, rowfn, r, now, thr, key, idx);
  else mh_ps_scan_row<MH_REVERSE, TABU>(S, q, rowfn, r, now, thr, key, idx);
}

template <int TABU>
__device__ __forceinline__ void mh_ps_sampled(mh_ps_t *S, int type, int now, ll thr, ll *key, ll *idx) {
  if (type == MH_SWAP) mh_ps_scan_sample<MH_SWAP, TABU>(S, now, thr, key, idx);
  else if (type == MH_INSERT) mh_ps_scan_sample<MH_INSERT, TABU>(S, now, thr, key, idx);
  else if (type == MH_SEGMENT) mh_ps_scan_sample<MH_SEGMENT, TABU>(S, now, thr, key, idx);
  else mh_ps_scan_sample<MH_REVERSE, TABU>(S, now, thr, key, idx);
  mh_block_argmin(key, idx);
}

/* The best move of the whole neighbourhood (block-wide, ties to the smallest index; idx
 * MH_LL_MAX when there is none, or when the time is up before the scan ends: mh_time_up between
 * rows; the rows split as mh_ps_split says); tabu search (TABU) with the order aspired < allowed < tabu. A sampled scan uses up its
 * draws (S->st[MH_PS_CTR] += 4 * sample). */
template <int TABU>
__device__ __forceinline__ void mh_ps_best_move(mh_ps_t *S, int type, int rowfn, int now, ll *key, ll *idx) {
  const ll thr = S->st[MH_PS_BEST] - S->st[MH_PS_COST];
  const int rows = mh_perm_rows(type, S->n);
  *key = MH_LL_MAX; *idx = MH_LL_MAX;
  if (S->sample) {
    mh_ps_sampled<TABU>(S, type, now, thr, key, idx);
    if (TABU && *idx == MH_LL_MAX) mh_ps_sampled<0>(S, type, now, thr, key, idx);
    if (S->tid == 0) S->st[MH_PS_CTR] += 4 * (ll)S->sample;
    __syncthreads();
    return;
  }
  if (S->gran) mh_ps_positions(S);
  const mh_ps_split_t q = mh_ps_scan_split(S, rowfn);
  for (int r = q.part; r < rows; r += q.parts) {
    if (mh_time_up()) { *key = MH_LL_MAX; *idx = MH_LL_MAX; return; }
    if (mh_perm_row_valid(type, r, S->n)) mh_ps_scan<TABU>(S, q, type, rowfn, r, now, thr, key, idx);
  }
  mh_block_argmin(key, idx);
  if (TABU && *idx == MH_LL_MAX) { /* every move tabu and none aspired */
    for (int r = q.part; r < rows; r += q.parts)
      if (mh_perm_row_valid(type, r, S->n)) mh_ps_scan<0>(S, q, type, rowfn, r, now, thr, key, idx);
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

/* A first-improvement step's choice (every thread gets it): one part, the block's argmin of its
 * row; several (MH_PS_ROWS), each warp's best move of its row (mh_warp_argmin), then the first
 * part in row order whose best improves (key < 0), else none (MH_LL_MAX). Returns the rows the
 * step used up: up to the chosen one, else all of them. */
__device__ __forceinline__ int mh_ps_first_part(const mh_ps_split_t &q, ll *key, ll *idx) {
#ifdef MH_PS_ROWS
  __shared__ ll s_key[MH_MAX_BLOCK / 32];
  __shared__ ll s_idx[MH_MAX_BLOCK / 32];
  if (q.parts > 1) {
    mh_warp_argmin(key, idx);
    if (q.lane == 0) { s_key[q.part] = *key; s_idx[q.part] = *idx; }
    __syncthreads();
    int w = 0;
    while (w < q.parts && s_key[w] >= 0) ++w;
    *key = w < q.parts ? s_key[w] : MH_LL_MAX;
    *idx = w < q.parts ? s_idx[w] : MH_LL_MAX;
    __syncthreads();
    return w < q.parts ? w + 1 : q.parts;
  }
#endif
  mh_block_argmin(key, idx);
  return 1;
}

/* Descent to a local optimum of `type`: best-improvement (first == 0: the best move of the whole
 * neighbourhood) or first-improvement (the best move of the first row with an improving one,
 * rows scanned cyclically from where the last improvement was found: q.parts rows a step, the
 * first improving one taken, which is the move of the row-by-row scan); over samples, the best of
 * each sample until one holds no improving move. Stops at `target`. */
template <int T>
__device__ __forceinline__ void mh_ps_descend_t(mh_ps_t *S, int first, ll target) {
  const int n = S->n, rows = mh_perm_rows(T, n), type = T; /* constants of the move type: the CPU build's
                                                             * loops then compile as for one type alone */
  const int rowfn = mh_perm_has_row(type);
  const mh_ps_split_t q = mh_ps_scan_split(S, rowfn);
  int r0 = 0, since = 0;
  while (S->st[MH_PS_BEST] > target && !mh_time_up()) {
    ll key = MH_LL_MAX, idx = MH_LL_MAX;
    int step = 1;
    if (first && !S->sample) {
      if (S->gran) mh_ps_positions(S);
      const int r = (r0 + q.part) % rows; /* the rows left before the descent would stop: rows - since */
      if (q.part < rows - since && mh_perm_row_valid(type, r, n)) mh_ps_scan<0>(S, q, type, rowfn, r, 0, 0, &key, &idx);
      step = mh_ps_first_part(q, &key, &idx);
    } else {
      mh_ps_best_move<0>(S, type, rowfn, 0, &key, &idx);
    }
    if (key < 0) {
      mh_ps_apply(S, type, (int)(idx / n), (int)(idx % n), key);
      if (S->tid == 0) S->st[MH_PS_MOVES] += 1;
      since = 0;
    } else if (!first || S->sample || (since += step) >= rows) {
      break;
    }
    if (first) r0 = (r0 + step) % rows;
  }
  __syncthreads();
}

__device__ __forceinline__ void mh_ps_descend(mh_ps_t *S, int type, int first, ll target) {
  if (type == MH_SWAP) mh_ps_descend_t<MH_SWAP>(S, first, target);
  else if (type == MH_INSERT) mh_ps_descend_t<MH_INSERT>(S, first, target);
  else if (type == MH_SEGMENT) mh_ps_descend_t<MH_SEGMENT>(S, first, target);
  else mh_ps_descend_t<MH_REVERSE>(S, first, target);
}

extern "C" __global__ void perm_tabu(int *perm, int *best, long long *stats, const unsigned long long *keys, int k,
                                     int n, int type, int sample, int granular, int iters, double tenure_scale, int init,
                                     long long target,
                                     /*@CACHE_T@*/long long *caches, int cs, long long *work, int ws, long long *rows, int *ibuf,
                                     int *scratch, int *tabu /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
  const ll s = mh_block();
  if (s >= k) return;
  mh_ps_t S = mh_ps_make(D, s, perm, best, stats, caches, cs, work, ws, rows, ibuf, scratch, tabu, 1, keys, sample,
                         granular);
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
    const int i = (int)(idx / n), j = (int)(idx % n), at = mh_perm_row_pos(type, i);
    __syncthreads();
    if (S.tid == 0) {
      unsigned long long ctr = (unsigned long long)S.st[MH_PS_CTR];
      const double u1 = mh_uniform(S.key, ctr++), u2 = mh_uniform(S.key, ctr++);
      const ll scale = (ll)(tenure_scale * n);
      S.tb[(ll)S.p[at] * n + at] = now + (int)(u1 * u1 * u1 * scale);
      if (type == MH_SWAP) S.tb[(ll)S.p[j] * n + j] = now + (int)(u2 * u2 * u2 * scale);
      S.st[MH_PS_CTR] = (ll)ctr;
      S.st[MH_PS_ITER] = now;
    }
    mh_ps_apply(&S, type, i, j, key);
    if (type == MH_SWAP) mh_ps_tabu_pairs(&S, i, j);
  }
}

#ifdef MH_PS_WARP
/* An ILS kick by the whole block (the warp kernels, a block of threads, a row function for the
 * kick's move): `moves` random moves of `type`, drawn as the classic kick draws them, each move's
 * delta read from the problem's row function (every thread), then the move and the cache's update;
 * the cost after the kick is the sum of exact deltas, with no serial recomputation by one thread.
 * The same permutation, cost and draws as the classic kick. */
__device__ __forceinline__ void mh_ps_kick_rows(mh_ps_t *S, int type, int moves) {
  unsigned long long ctr = (unsigned long long)S->st[MH_PS_CTR];
  for (int m = 0; m < moves; ++m) {
    const int a = mh_below(S->key, ctr++, S->n);
    int b = mh_below(S->key, ctr++, S->n - 1);
    b += b >= a;
    mh_ps_row(S, type, a);
    const ll d = MH_SENSE * S->rows[b];
    __syncthreads();
    if (S->tid == 0) { mh_perm_apply(S->p, type, a, b); S->st[MH_PS_COST] += d; }
    __syncthreads();
    mh_perm_update(S->D, S->p, S->cache, S->cs, type, a, b, S->work);
  }
  __syncthreads();
  if (S->tid == 0) { S->st[MH_PS_CTR] = (ll)ctr; S->st[MH_PS_ITER] += 1; }
}
#endif

extern "C" __global__ void perm_ils(int *perm, int *best, long long *stats, const unsigned long long *keys, int k,
                                    int n, int type, int sample, int granular, int first, int kick_move, int kick_moves,
                                    int iters, int init, long long target, /*@CACHE_T@*/long long *caches, int cs, long long *work, int ws,
                                    long long *rows, int *ibuf, int *scratch /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
  const ll s = mh_block();
  if (s >= k) return;
  mh_ps_t S = mh_ps_make(D, s, perm, best, stats, caches, cs, work, ws, rows, ibuf, scratch, ibuf, 0, keys, sample,
                         granular);
  int *save = S.ib;
  if (init) {
    mh_ps_start(&S);
    mh_ps_descend(&S, type, first, target);
  }
  for (int it = 0; it < iters && S.st[MH_PS_BEST] > target && n > 1 && !mh_time_up(); ++it) {
    const ll before = S.st[MH_PS_COST];
    mh_ps_copy(save, S.p, n, S.tid, S.nt);
#ifdef MH_PS_WARP
    if (S.nt > 1 && mh_perm_has_row(kick_move)) mh_ps_kick_rows(&S, kick_move, kick_moves); else
#endif
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
                                   int n, int sample, int granular, int first, int destruct, double temperature,
                                   int ties, int iters, int init, long long target, /*@CACHE_T@*/long long *caches, int cs, long long *work, int ws,
                                   long long *rows, int *ibuf, int *scratch /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
#ifdef MH_USER_HAS_PARTIAL_INSERT_ROW
  const ll s = mh_block();
  if (s >= k) return;
  mh_ps_t S = mh_ps_make(D, s, perm, best, stats, caches, cs, work, ws, rows, ibuf, scratch, ibuf, 0, keys, sample,
                         granular);
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
