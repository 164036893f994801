/* perm_eval.cu - a user problem's contract functions over batches, for check_problem and the
 * tests (problems/permutation_check.py): one block per item; deltas in the problem's own sense.
 *
 * perm_cost: out[b] = cost(perms[b]).
 * perm_pair: out[b] = delta of move moves[b] = (type, i, j) on perms[b] (the problem's pair delta
 *   with its cache, else cost after the move).
 * perm_row: out[b, :] = the row of move type rows[b, 0] from position rows[b, 1] (the problem's
 *   row function, else pair deltas); scratch: blockDim * n ints per item.
 * perm_prepare: caches[b] = prepare(perms[b]).
 * perm_update: caches[b] after move moves[b] (perms[b] is the permutation after the move).
 * perm_partial: out[b, k] = partial_insert_row(seqs[b][0..lens[b]), elems[b])[k], k <= lens[b].
 * perm_insert_best: pos[b] = the best insertion position of elems[b] into seqs[b][0..lens[b])
 *   (mh_best_partial_insert: the least value, then partial_insert_tie where `ties`, then the first).
 * perm_neh: seqs[b] = NEH from orders[b] (Nawaz, Enscore and Ham 1983): orders[b][0], then each
 *   next element at its best position (mh_best_partial_insert) of the sequence so far, the whole
 *   construction in one launch; once the time is up (the CPU build's mh_time_up) the elements not
 *   inserted yet follow in their order. done[b] = the elements inserted by best position + 1.
 * Caches: cs entries per item (user::cache_t); work: ws int64 per item; `base`: the value of each perms[b].
 */
#include "mh_common.cuh"
#include "mh_user_problem.cuh"
#include "perm_moves.cuh"

extern "C" __global__ void perm_cost(const int *perms, int k, int n, long long *out /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
  const ll b = mh_block();
  if (b < k && mh_tid() == 0) out[b] = user::cost(D, perms + b * n);
}

extern "C" __global__ void perm_pair(const int *perms, const int *moves, int k, int n, const /*@CACHE_T@*/long long *caches,
                                     int cs, const long long *base, int *scratch, long long *out /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
  const ll b = mh_block();
  if (b >= k || mh_tid() != 0) return;
  const int *m = moves + 3 * b;
  out[b] = mh_perm_delta(D, perms + b * n, caches + b * cs, m[0], m[1], m[2], base[b], scratch + b * n);
}

extern "C" __global__ void perm_row(const int *perms, const int *rows, int k, int n, const /*@CACHE_T@*/long long *caches, int cs,
                                    const long long *base, long long *work, int ws, int *scratch,
                                    long long *out /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
  const ll b = mh_block();
  if (b >= k) return;
  mh_perm_row(D, perms + b * n, caches + b * cs, rows[2 * b], rows[2 * b + 1], base[b], out + b * n, work + b * ws,
              scratch + b * mh_nthreads() * n);
}

extern "C" __global__ void perm_prepare(const int *perms, int k, int n, /*@CACHE_T@*/long long *caches, int cs, long long *work,
                                        int ws /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
  const ll b = mh_block();
  if (b < k) mh_perm_prepare(D, perms + b * n, caches + b * cs, cs, work + b * ws);
}

extern "C" __global__ void perm_update(const int *perms, const int *moves, int k, int n, /*@CACHE_T@*/long long *caches, int cs,
                                       long long *work, int ws /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
  const ll b = mh_block();
  if (b >= k) return;
  const int *m = moves + 3 * b;
  mh_perm_update(D, perms + b * n, caches + b * cs, cs, m[0], m[1], m[2], work + b * ws);
}

extern "C" __global__ void perm_partial(const int *seqs, const int *lens, const int *elems, int k, int n,
                                        long long *work, int ws, long long *out /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
  const ll b = mh_block();
  if (b >= k) return;
#ifdef MH_USER_HAS_PARTIAL_INSERT_ROW
  user::partial_insert_row(D, seqs + b * n, lens[b], elems[b], out + b * (n + 1), work + b * ws);
#endif
}

extern "C" __global__ void perm_insert_best(const int *seqs, const int *lens, const int *elems, int k, int n, int ties,
                                            long long *work, int ws, long long *rows, long long *pos /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
  const ll b = mh_block();
  if (b >= k) return;
#ifdef MH_USER_HAS_PARTIAL_INSERT_ROW
  ll value, at;
  mh_best_partial_insert(D, seqs + b * n, lens[b], elems[b], ties, rows + b * (n + 1), work + b * ws, &value, &at);
  if (mh_tid() == 0) pos[b] = at;
#endif
}

extern "C" __global__ void perm_neh(const int *orders, int k, int n, int ties, long long *work, int ws, long long *rows,
                                    int *seqs, int *done /*@DATA_PARAMS@*/) {
  user::Data D; D.n = n; /*@DATA_INIT@*/
  const ll b = mh_block();
  if (b >= k) return;
#ifdef MH_USER_HAS_PARTIAL_INSERT_ROW
  const int *order = orders + b * n;
  int *seq = seqs + b * n;
  int len = 1;
  if (mh_tid() == 0) seq[0] = order[0];
  for (; len < n && !mh_time_up(); ++len) {
    ll value, at;
    mh_best_partial_insert(D, seq, len, order[len], ties, rows + b * (n + 1), work + b * ws, &value, &at);
    if (mh_tid() == 0) {
      for (int q = len; q > (int)at; --q) seq[q] = seq[q - 1];
      seq[at] = order[len];
    }
    __syncthreads();
  }
  if (mh_tid() == 0) {
    for (int q = len; q < n; ++q) seq[q] = order[q];
    done[b] = len;
  }
#endif
}
