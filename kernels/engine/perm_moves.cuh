/* perm_moves.cuh - moves of a user problem's permutations and their deltas, in both builds.
 * Included by the generic kernels (kernels/engine/perm_*.cu) after the generated mh_user_problem.cuh
 * (metaheur/engine/user_source.py), whose MH_USER_HAS_<FUNCTION> macros say which functions of
 * the device contract (docs/problems.md) the problem's snippet defines.
 *
 * Moves: MH_SWAP (swap positions i and j), MH_INSERT (take the element at i out, put it at j,
 * the ones between shift), MH_REVERSE (reverse the segment between i and j), MH_SEGMENT (Or-opt:
 * the block of len <= MH_SEG_K elements starting at position s is taken out and put back so that
 * it occupies positions j .. j+len-1, reversed when rev). A move is (type, i, j): i is the row,
 * a position, except for a segment, whose row is the code mh_seg_code(s, len, rev). A swap or
 * reversal (i, j) is the same move as (j, i). Deltas are in the problem's own sense (value after
 * - value before); the searches multiply them by MH_SENSE.
 *
 * A neighbourhood without a pair delta is evaluated by `cost` after the move, on a per-thread
 * copy of the permutation (`scratch`: n ints per thread of the block): the slow path.
 */
#ifndef MH_PERM_MOVES_CUH
#define MH_PERM_MOVES_CUH

#define MH_SWAP 0
#define MH_INSERT 1
#define MH_REVERSE 2
#define MH_SEGMENT 3
#ifndef MH_SEG_K /* the longest segment and whether segments may be reversed (the problem's, in the header) */
#define MH_SEG_K 3
#endif
#ifndef MH_SEG_REV
#define MH_SEG_REV 1
#endif

/* A segment's row code and back: start s, length len (1..MH_SEG_K), reversed rev (0/1). */
__device__ __forceinline__ int mh_seg_code(int s, int len, int rev) { return ((s * MH_SEG_K + len - 1) << 1) | rev; }
__device__ __forceinline__ void mh_seg_decode(int code, int *s, int *len, int *rev) {
  *rev = code & 1; *len = (code >> 1) % MH_SEG_K + 1; *s = (code >> 1) / MH_SEG_K;
}

/* The rows of a neighbourhood: n positions, or the n * MH_SEG_K * 2 segment codes. */
__device__ __forceinline__ int mh_perm_rows(int type, int n) { return type == MH_SEGMENT ? n * MH_SEG_K * 2 : n; }

/* Whether row r of `type` holds moves: a segment within the permutation, shorter than it,
 * reversed only when longer than one element and the problem allows it. */
__device__ __forceinline__ int mh_perm_row_valid(int type, int r, int n) {
  if (type != MH_SEGMENT) return 1;
  int s, len, rev;
  mh_seg_decode(r, &s, &len, &rev);
  return s + len <= n && len < n && (!rev || (MH_SEG_REV && len > 1));
}

/* The position whose element row r moves: r itself, or a segment's start. */
__device__ __forceinline__ int mh_perm_row_pos(int type, int r) {
  if (type != MH_SEGMENT) return r;
  int s, len, rev;
  mh_seg_decode(r, &s, &len, &rev);
  return s;
}

/* The last destination of row r plus one: n, or n - len + 1 for a segment of length len. */
__device__ __forceinline__ int mh_perm_row_end(int type, int r, int n) {
  if (type != MH_SEGMENT) return n;
  int s, len, rev;
  mh_seg_decode(r, &s, &len, &rev);
  return n - len + 1;
}

/* Reverse p[a..b] (inclusive; nothing when a >= b). */
__device__ __forceinline__ void mh_perm_flip(int *p, int a, int b) {
  for (; a < b; ++a, --b) { const int t = p[a]; p[a] = p[b]; p[b] = t; }
}

/* Apply move (type, i, j) to p (one thread). */
__device__ __forceinline__ void mh_perm_apply(int *p, int type, int i, int j) {
  if (type == MH_SEGMENT) { /* a rotation by three reversals, then the block's own reversal */
    int s, len, rev;
    mh_seg_decode(i, &s, &len, &rev);
    if (j > s) { mh_perm_flip(p, s, s + len - 1); mh_perm_flip(p, s + len, j + len - 1); mh_perm_flip(p, s, j + len - 1); }
    if (j < s) { mh_perm_flip(p, j, s - 1); mh_perm_flip(p, s, s + len - 1); mh_perm_flip(p, j, s + len - 1); }
    if (rev) mh_perm_flip(p, j, j + len - 1);
    return;
  }
  if (type == MH_INSERT) {
    const int e = p[i];
    if (i < j) for (int k = i; k < j; ++k) p[k] = p[k + 1];
    else for (int k = i; k > j; --k) p[k] = p[k - 1];
    p[j] = e;
    return;
  }
  if (i > j) { const int t = i; i = j; j = t; }
  if (type == MH_SWAP) { const int t = p[i]; p[i] = p[j]; p[j] = t; return; }
  mh_perm_flip(p, i, j);
}

/* Delta of move (T, i, j), i != j, on perm whose value is `base` (one thread); a template on the
 * move type, so a scan over one neighbourhood compiles without the paths of the others. */
template <int T>
__device__ __forceinline__ ll mh_perm_delta_t(const user::Data &D, const int *perm, const user::cache_t *cache, int i, int j,
                                              ll base, int *scratch) {
  const int a = i < j ? i : j, b = i < j ? j : i;
#ifdef MH_USER_HAS_SWAP_DELTA
  if (T == MH_SWAP) return user::swap_delta(D, perm, cache, a, b);
#endif
#ifdef MH_USER_HAS_INSERT_DELTA
  if (T == MH_INSERT) return user::insert_delta(D, perm, cache, i, j);
#endif
#ifdef MH_USER_HAS_REVERSE_DELTA
  if (T == MH_REVERSE) return user::reverse_delta(D, perm, cache, a, b);
#endif
#ifdef MH_USER_HAS_SEGMENT_DELTA
  if (T == MH_SEGMENT) {
    int s, len, rev;
    mh_seg_decode(i, &s, &len, &rev);
    return user::segment_delta(D, perm, cache, s, len, j, rev);
  }
#endif
  (void)a; (void)b;
  for (int k = 0; k < D.n; ++k) scratch[k] = perm[k];
  mh_perm_apply(scratch, T, i, j);
  return user::cost(D, scratch) - base;
}

/* Delta of move (type, i, j), i != j, on perm whose value is `base` (one thread). */
__device__ __forceinline__ ll mh_perm_delta(const user::Data &D, const int *perm, const user::cache_t *cache, int type, int i,
                                            int j, ll base, int *scratch) {
  if (type == MH_SWAP) return mh_perm_delta_t<MH_SWAP>(D, perm, cache, i, j, base, scratch);
  if (type == MH_INSERT) return mh_perm_delta_t<MH_INSERT>(D, perm, cache, i, j, base, scratch);
  if (type == MH_SEGMENT) return mh_perm_delta_t<MH_SEGMENT>(D, perm, cache, i, j, base, scratch);
  return mh_perm_delta_t<MH_REVERSE>(D, perm, cache, i, j, base, scratch);
}

/* out[j] = delta of move (type, i, j) for every j of row i, 0 where (i, j) is no move (j = i, or
 * past a segment's last destination). Every thread of the block calls it (a row function of the
 * problem, else one pair delta per j, block-stride). */
__device__ __forceinline__ void mh_perm_row(const user::Data &D, const int *perm, const user::cache_t *cache, int type, int i,
                                            ll base, ll *out, ll *work, int *scratch) {
#ifdef MH_USER_HAS_SWAP_ROW
  if (type == MH_SWAP) { user::swap_row(D, perm, cache, i, out, work); __syncthreads(); return; }
#endif
#ifdef MH_USER_HAS_INSERT_ROW
  if (type == MH_INSERT) { user::insert_row(D, perm, cache, i, out, work); __syncthreads(); return; }
#endif
#ifdef MH_USER_HAS_REVERSE_ROW
  if (type == MH_REVERSE) { user::reverse_row(D, perm, cache, i, out, work); __syncthreads(); return; }
#endif
  const int t = mh_tid(), nt = mh_nthreads(), pos = mh_perm_row_pos(type, i), end = mh_perm_row_end(type, i, D.n);
#ifdef MH_USER_HAS_SEGMENT_ROW
  if (type == MH_SEGMENT) {
    int s, len, rev;
    mh_seg_decode(i, &s, &len, &rev);
    user::segment_row(D, perm, cache, s, len, rev, out, work);
    __syncthreads();
    for (int j = end + t; j < D.n; j += nt) out[j] = 0; /* past the last destination */
    __syncthreads();
    return;
  }
#endif
  for (int j = t; j < D.n; j += nt)
    out[j] = j == pos || j >= end ? 0 : mh_perm_delta(D, perm, cache, type, i, j, base, scratch + (ll)t * D.n);
  __syncthreads();
}

/* Whether the problem has a row function for `type` (else the searches take pair deltas one by one). */
__device__ __forceinline__ int mh_perm_has_row(int type) {
#ifdef MH_USER_HAS_SWAP_ROW
  if (type == MH_SWAP) return 1;
#endif
#ifdef MH_USER_HAS_INSERT_ROW
  if (type == MH_INSERT) return 1;
#endif
#ifdef MH_USER_HAS_REVERSE_ROW
  if (type == MH_REVERSE) return 1;
#endif
#ifdef MH_USER_HAS_SEGMENT_ROW
  if (type == MH_SEGMENT) return 1;
#endif
  return 0;
}

/* The cache after move (type, i, j) was applied (perm is the new permutation): the problem's
 * update hook, else (and always after a segment move) prepare from scratch. Every thread of the
 * block calls it; no-op without a cache (cache_size 0: the hooks are never called). */
__device__ __forceinline__ void mh_perm_update(const user::Data &D, const int *perm, user::cache_t *cache, int cs, int type,
                                               int i, int j, ll *work) {
  if (cs == 0) return;
  __syncthreads();
#ifdef MH_USER_HAS_UPDATE_SWAP
  if (type == MH_SWAP) { user::update_swap(D, perm, cache, i < j ? i : j, i < j ? j : i, work); __syncthreads(); return; }
#endif
#ifdef MH_USER_HAS_UPDATE_INSERT
  if (type == MH_INSERT) { user::update_insert(D, perm, cache, i, j, work); __syncthreads(); return; }
#endif
#ifdef MH_USER_HAS_UPDATE_REVERSE
  if (type == MH_REVERSE) { user::update_reverse(D, perm, cache, i < j ? i : j, i < j ? j : i, work); __syncthreads(); return; }
#endif
#ifdef MH_USER_HAS_PREPARE
  user::prepare(D, perm, cache, work);
#endif
  __syncthreads();
}

/* The cache of a permutation just set (every thread of the block; no-op without a cache). */
__device__ __forceinline__ void mh_perm_prepare(const user::Data &D, const int *perm, user::cache_t *cache, int cs, ll *work) {
  if (cs == 0) return;
  __syncthreads();
#ifdef MH_USER_HAS_PREPARE
  user::prepare(D, perm, cache, work);
#endif
  __syncthreads();
}

#ifdef MH_USER_HAS_PARTIAL_INSERT_ROW
/* The best insertion of `elem` into seq[0..len): rows[0..len] = partial_insert_row, then the
 * position of the least engine value; among equal values the least partial_insert_tie key where
 * `ties` and the problem defines one (Fernandez-Viagas and Framinan 2014 for the flow shop), the
 * first position after that. Every thread of the block calls it; every thread gets (value, pos). */
__device__ __forceinline__ void mh_best_partial_insert(const user::Data &D, const int *seq, int len, int elem, int ties,
                                                       ll *rows, ll *work, ll *value, ll *pos) {
  __syncthreads();
  user::partial_insert_row(D, seq, len, elem, rows, work);
  __syncthreads();
  ll key = MH_LL_MAX, idx = MH_LL_MAX;
  for (int q = mh_tid(); q <= len; q += mh_nthreads()) mh_argmin_step(&key, &idx, MH_SENSE * rows[q], q);
  mh_block_argmin(&key, &idx);
#ifdef MH_USER_HAS_PARTIAL_INSERT_TIE
  if (ties) {
    ll tie = MH_LL_MAX, at = MH_LL_MAX;
    for (int q = mh_tid(); q <= len; q += mh_nthreads())
      if (MH_SENSE * rows[q] == key) mh_argmin_step(&tie, &at, user::partial_insert_tie(D, seq, len, elem, q, work), q);
    mh_block_argmin(&tie, &at);
    idx = at;
  }
#endif
  (void)ties;
  *value = key; *pos = idx;
}
#endif

#endif /* MH_PERM_MOVES_CUH */
