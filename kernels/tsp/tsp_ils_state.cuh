/* tsp_ils_state.cuh - the state of one iterated local search of kernels/tsp/tsp_ils.cu (a tour as an
 * array with a position index, its queue of cities to look at, its undo log) and the primitive
 * moves every other move is made of: 2-opt reversals of the shorter side and position swaps, each
 * logged while a kick is on trial, and the replay of that log. Needs the MH_ILS_* defines. */
#ifndef MH_TSP_ILS_STATE_CUH
#define MH_TSP_ILS_STATE_CUH

struct mh_ils_t {
  const double *xy;
  const int *mat, *neigh, *neigh_d;
  int n, k, k5; /* k5: neighbours tried at depth 3 of the 3-opt search (0: no 3-opt) */
  int lk_depth; /* longest Lin-Kernighan chain (0: none) */
  int lk_b1, lk_b2; /* alternatives tried at the first and second LK steps */
  int lk3_depth; /* longest chain of 3-opt steps (0: none) */
  int *t, *pos;
  int *queue, *inq; /* FIFO of cities to look at, and membership flags */
  int *mark, stamp; /* mark[c] == stamp: c ends an edge the current LK3 chain added */
  int head, count;
  int *log, nlog, logging, overflow;
  int last_i, last_j; /* positions of the latest reversal */
  ll moves, move_limit; /* improving moves applied in this launch; the local search stops at move_limit */
};

#define MH_DIST(S, x, y) ((ll)mh_tsp_dist((S)->xy, (S)->mat, (S)->n, (x), (y)))

__device__ __forceinline__ int mh_succ(const mh_ils_t *S, int c) { return mh_tour_succ(S->t, S->pos, S->n, c); }
__device__ __forceinline__ int mh_pred(const mh_ils_t *S, int c) { return mh_tour_pred(S->t, S->pos, S->n, c); }

__device__ __forceinline__ void mh_push(mh_ils_t *S, int c) {
  if (S->inq[c]) return;
  S->inq[c] = 1;
  int tail = S->head + S->count;
  S->queue[tail >= S->n ? tail - S->n : tail] = c;
  S->count++;
}

__device__ __forceinline__ void mh_log(mh_ils_t *S, int x, int y) {
  if (S->logging) { /* room is guaranteed by the callers */
    S->log[2 * S->nlog] = x;
    S->log[2 * S->nlog + 1] = y;
    S->nlog++;
  }
}

/* Swap the cities at positions i and j; logged as (-1 - i, j). */
__device__ void mh_swap_positions(mh_ils_t *S, int i, int j) {
  mh_log(S, -1 - i, j);
  const int ci = S->t[i], cj = S->t[j];
  S->t[i] = cj; S->pos[cj] = i;
  S->t[j] = ci; S->pos[ci] = j;
}

/* Reverse the positions i .. j (cyclic, inclusive); logged as (i, j). */
__device__ void mh_reverse_range(mh_ils_t *S, int i, int j) {
  const int n = S->n;
  int len = j - i;
  if (len < 0) len += n;
  len += 1;
  mh_log(S, i, j);
  S->last_i = i;
  S->last_j = j;
  for (int m = len / 2; m > 0; --m) {
    const int ci = S->t[i], cj = S->t[j];
    S->t[i] = cj; S->pos[cj] = i;
    S->t[j] = ci; S->pos[ci] = j;
    i = mh_pos_next(i, n);
    j = mh_pos_prev(j, n);
  }
}

/* Reverse the path from city x forward to city y, or its complement when that is shorter
 * (the same cyclic tour). */
__device__ void mh_reverse_path(mh_ils_t *S, int x, int y) {
  const int n = S->n;
  const int i = S->pos[x], j = S->pos[y];
  int len = j - i;
  if (len < 0) len += n;
  len += 1;
  if (2 * len > n) mh_reverse_range(S, mh_pos_next(j, n), mh_pos_prev(i, n));
  else mh_reverse_range(S, i, j);
}

/* 2-opt move on edges (a, b) and (c, d) where b follows a and d follows c in one direction of
 * travel: afterwards the tour has edges (a, c) and (b, d). */
__device__ void mh_two_opt_move(mh_ils_t *S, int a, int b, int c, int d) {
  if (mh_succ(S, a) == b) mh_reverse_path(S, b, c);
  else mh_reverse_path(S, a, d);
}

__device__ void mh_push4(mh_ils_t *S, int a, int b, int c, int d) {
  mh_push(S, a); mh_push(S, b); mh_push(S, c); mh_push(S, d);
}

/* Replay the undo log: backwards undoes the kick, forwards redoes it (each step is its own inverse). */
__device__ void mh_replay(mh_ils_t *S, bool forward) {
  const int logging = S->logging;
  S->logging = 0;
  for (int m = 0; m < S->nlog; ++m) {
    const int e = forward ? m : S->nlog - 1 - m;
    const int i = S->log[2 * e], j = S->log[2 * e + 1];
    if (i >= 0) mh_reverse_range(S, i, j);
    else mh_swap_positions(S, -1 - i, j);
  }
  S->logging = logging;
}

#endif /* MH_TSP_ILS_STATE_CUH */
