/* tsp_ils.cu - iterated local search for the TSP: 2-opt, Or-opt and Lin-Kernighan moves with
 * neighbour lists and don't-look bits, double-bridge kicks. One block = one search; thread 0 of a
 * block runs it (the standard sequential first-improvement design).
 *
 * Local search (Bentley 1992, "Fast algorithms for geometric TSP"): cities wait in a FIFO queue
 * of "don't-look bits"; a city a taken from the queue is tried as the end of an improving
 *  - 2-opt move: b = succ/pred(a), c among a's k nearest with d(a, c) < d(a, b), d = succ/pred(c);
 *  - Or-opt move (Or 1976): the segment of 1-3 cities starting at a (either direction) goes next
 *    to one of its first city's neighbours c with d(s0, c) < removal gain, on either side of c;
 *  - Lin-Kernighan move (Lin and Kernighan 1973) from t1 = a, one of two kinds (lk_move):
 *    1 (default) chains of sequential 3-opt steps as in Helsgaun's LKH with MOVE_TYPE = 3
 *      (mh_try_lk3): every 2-opt or 3-opt step from the closing edge is evaluated on the
 *      unchanged tour, the first that closes with a gain is applied, else the best partial-gain
 *      step is applied and the chain goes on (at most lk_depth steps, taken back when it fails);
 *    0 a first-improvement 3-opt search (mh_try_3opt), then chains of 2-opt steps in the array
 *      form of Johnson and McGeoch 1997 (breadth lk_b1 / lk_b2 at the first two steps);
 * the first improving move is applied and the cities at its ends re-enter the queue.
 * The tour is an array with a position index; every move is a sequence of 2-opt reversals of
 * the shorter side, which also gives an undo log.
 *
 * Iterated local search (Lourenco, Martin and Stuetzle 2003): a kick, then the local search from
 * the cities at its ends. Kicks (`kick`):
 *  3 double bridge (Martin, Otto and Felten 1991) of three consecutive segments of 1 .. window
 *    cities at a random place (A B C D -> A D C B, a non-sequential 4-opt move);
 *  4 geometric double bridge: cuts after a random city and three of its `window` nearest;
 *  0 segment swap: two adjacent segments of 1 .. window cities swap places (a pure 3-opt move,
 *    which the 3-opt and LK moves can take back directly);
 *  1 segment shuffle: a random stretch of at most `window` cities is put in random order;
 *  2 walk: a segment swap at three cities found by a random walk over the neighbour lists.
 * The result is kept if it is no longer (equal lengths let the search drift across plateaus) or,
 * with temperature T > 0, if it is longer by less than T * (length / n) * u with u uniform in
 * (0, 1] (a threshold-accepting walk that keeps the best tour apart); else it is undone from
 * the log.
 *
 * State (S searches): tours, best_tours, pos S x n (pos is rebuilt from tours at every launch,
 * so the host may replace a tour between launches); stats S x MH_ILS_NSTATS; keys S;
 * work S x (3n + 2 LOG + 3).
 * neigh, neigh_d: n x k candidate cities and their distances, sorted by distance.
 */
#include "mh_common.cuh"
#include "mh_rng.cuh"
#include "tsp_dist.cuh"
#include "mh_tour.cuh"

#define MH_ILS_COST 0   /* current tour length */
#define MH_ILS_KICKS 1  /* kicks done */
#define MH_ILS_CTR 2    /* random draws used */
#define MH_ILS_BETTER 3 /* kicks that shortened the tour */
#define MH_ILS_MOVES 4  /* improving moves applied */
#define MH_ILS_BEST 5   /* best tour length (the tour is in best_tours) */
#define MH_ILS_PENDING 6 /* cities still queued by an initial descent cut short by its move budget */
#define MH_ILS_NSTATS 7
#define MH_ILS_LOG 4096 /* reversals and swaps one kick may log before it is abandoned */

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

/* First improving 2-opt move at city a; returns its (negative) delta or 0. */
__device__ ll mh_try_2opt(mh_ils_t *S, int a) {
  for (int dir = 0; dir < 2; ++dir) {
    const int b = dir == 0 ? mh_succ(S, a) : mh_pred(S, a);
    const ll dab = MH_DIST(S, a, b);
    for (int q = 0; q < S->k; ++q) {
      const int c = S->neigh[(ll)a * S->k + q];
      const ll dac = S->neigh_d[(ll)a * S->k + q];
      if (dac >= dab) break;
      const int d = dir == 0 ? mh_succ(S, c) : mh_pred(S, c);
      if (c == b || d == a) continue;
      const ll delta = dac + MH_DIST(S, b, d) - dab - MH_DIST(S, c, d);
      if (delta < 0) {
        if (dir == 0) mh_two_opt_move(S, a, b, c, d);
        else mh_two_opt_move(S, b, a, d, c);
        mh_push4(S, a, b, c, d);
        return delta;
      }
    }
  }
  return 0;
}

/* Is city b on the path from a to c (inclusive), travelling in direction dir (0 = forward)? */
__device__ __forceinline__ bool mh_between(const mh_ils_t *S, int dir, int a, int b, int c) {
  const int n = S->n;
  int ab = dir == 0 ? S->pos[b] - S->pos[a] : S->pos[a] - S->pos[b];
  int ac = dir == 0 ? S->pos[c] - S->pos[a] : S->pos[a] - S->pos[c];
  if (ab < 0) ab += n;
  if (ac < 0) ac += n;
  return ab <= ac;
}

/* The city t6 after t5 in a sequential 3-opt move t1 .. t5 (x4: whether t4 follows t3; x6: which
 * tour neighbour of t5 when both are valid). After the 2-opt move t1 t2 t3 t4 (x4 = 0), t6 must
 * precede t5 in the new orientation. */
__device__ __forceinline__ int mh_3opt_t6(const mh_ils_t *S, int dir, int x4, int x6, int t2, int t4, int t5) {
  if (x4 == 0) {
    const bool inside = mh_between(S, dir, t2, t5, t4);
    return inside == (dir == 0) ? mh_succ(S, t5) : mh_pred(S, t5);
  }
  return (x6 == 0) == (dir == 0) ? mh_succ(S, t5) : mh_pred(S, t5);
}

/* First improving sequential 3-opt move from t1 (Lin and Kernighan 1973 search to depth 3 with
 * neighbour lists; the move cases of Helsgaun's LKH Best3OptMove): remove (t1, t2), add (t2, t3)
 * with t3 among t2's neighbours and a positive partial gain, remove (t3, t4); close with (t4, t1)
 * when that is a valid 2-opt move, else (or also) remove (t5, t6) with t5 among t4's neighbours
 * and close with (t6, t1). Returns the (negative) delta or 0. k5: neighbours tried at depth 3. */
__device__ ll mh_try_3opt(mh_ils_t *S, int t1, int k5) {
  for (int dir = 0; dir < 2; ++dir) {
    const int t2 = dir == 0 ? mh_succ(S, t1) : mh_pred(S, t1);
    const ll g0 = MH_DIST(S, t1, t2);
    const int t2next = dir == 0 ? mh_succ(S, t2) : mh_pred(S, t2);
    for (int q3 = 0; q3 < S->k; ++q3) {
      const int t3 = S->neigh[(ll)t2 * S->k + q3];
      const ll g1 = g0 - S->neigh_d[(ll)t2 * S->k + q3];
      if (g1 <= 0) break;
      if (t3 == t1 || t3 == t2next) continue;
      for (int x4 = 0; x4 < 2; ++x4) {
        /* x4 = 0: t4 before t3 (closing with (t4, t1) is a 2-opt move); x4 = 1: after it */
        const int t4 = (x4 == 0) == (dir == 0) ? mh_pred(S, t3) : mh_succ(S, t3);
        if (t4 == t1 || t4 == t2) continue;
        const ll g1b = g1 + MH_DIST(S, t3, t4);
        if (x4 == 0) {
          const ll gain = g1b - MH_DIST(S, t4, t1);
          if (gain > 0) {
            mh_two_opt_move(S, t1, t2, t4, t3);
            mh_push4(S, t1, t2, t3, t4);
            return -gain;
          }
        }
        for (int q5 = 0; q5 < k5; ++q5) {
          const int t5 = S->neigh[(ll)t4 * S->k + q5];
          const ll g2 = g1b - S->neigh_d[(ll)t4 * S->k + q5];
          if (g2 <= 0) break;
          if (t5 == t1 || t5 == t4 || t5 == mh_succ(S, t4) || t5 == mh_pred(S, t4)) continue;
          if (x4 == 1 && !mh_between(S, dir, t2, t5, t3)) continue;
          for (int x6 = 0; x6 < 1 + x4; ++x6) {
            const int t6 = mh_3opt_t6(S, dir, x4, x6, t2, t4, t5);
            if (t6 == t1 || t6 == t2 || t6 == t3 || t6 == t4) continue;
            const ll gain = g2 + MH_DIST(S, t5, t6) - MH_DIST(S, t6, t1);
            if (gain <= 0) continue;
            if (x4 == 0) {
              mh_two_opt_move(S, t1, t2, t4, t3);
              mh_two_opt_move(S, t1, t4, t6, t5);
            } else if (x6 == 0) { /* t6 after t5: segments t2..t5 and t6..t3 swap places */
              mh_two_opt_move(S, t1, t2, t5, t6);
              mh_two_opt_move(S, t1, t5, t3, t4);
              mh_two_opt_move(S, t1, t3, t6, t2);
            } else { /* t6 before t5: t2..t6 and t5..t3 are each reversed in place */
              mh_two_opt_move(S, t1, t2, t6, t5);
              mh_two_opt_move(S, t2, t5, t3, t4);
            }
            mh_push4(S, t1, t2, t3, t4); mh_push(S, t5); mh_push(S, t6);
            return -gain;
          }
        }
      }
    }
  }
  return 0;
}

#define MH_LK_DEPTH 64 /* longest chain of 2-opt steps a Lin-Kernighan move may take */
#define MH_LK_BREADTH 10 /* most alternatives tried at the first and second steps (1 deeper) */

/* The chain of a Lin-Kernighan move: step m turned edges (a, b), (c, d) into (a, c), (b, d) by
 * reversing the positions i .. j; stored as (a, b, c, d, i, j). */
struct mh_lk_chain_t {
  int step[6 * MH_LK_DEPTH];
  int len;
};

/* Up to `breadth` best next steps from the closing edge (t1, t2): t3 among t2's neighbours with
 * g - d(t2, t3) > 0, t4 the neighbour of t3 that keeps the tour closable, ranked by
 * g - d(t2, t3) + d(t3, t4); edges added earlier in the chain are not removed, edges removed
 * earlier are not re-added. Returns how many were found (out: t3, t4, value). */
__device__ int mh_lk_candidates(const mh_ils_t *S, const mh_lk_chain_t *C, int t1, int t2, ll g, int breadth,
                                int *o3, int *o4, ll *oval) {
  const bool forward = mh_succ(S, t1) == t2; /* orientation in which t2 follows t1 */
  const int t2next = forward ? mh_succ(S, t2) : mh_pred(S, t2);
  int found = 0;
  for (int q = 0; q < S->k; ++q) {
    const int t3 = S->neigh[(ll)t2 * S->k + q];
    const ll g1 = g - S->neigh_d[(ll)t2 * S->k + q];
    if (g1 <= 0) break;
    if (t3 == t1 || t3 == t2next) continue;
    const int t4 = forward ? mh_pred(S, t3) : mh_succ(S, t3);
    if (t4 == t2) continue;
    bool taboo = false;
    for (int m = 0; m < C->len && !taboo; ++m) {
      const int *e = C->step + 6 * m; /* removed (e0, e1), (e2, e3); added (e0, e2), (e1, e3) */
      taboo = (e[0] == t3 && e[2] == t4) || (e[0] == t4 && e[2] == t3) || (e[1] == t3 && e[3] == t4) ||
              (e[1] == t4 && e[3] == t3) || (e[0] == t2 && e[1] == t3) || (e[0] == t3 && e[1] == t2) ||
              (e[2] == t2 && e[3] == t3) || (e[2] == t3 && e[3] == t2);
    }
    if (taboo) continue;
    const ll val = g1 + MH_DIST(S, t3, t4);
    if (found == breadth && val <= oval[breadth - 1]) continue;
    int at = found < breadth ? found++ : breadth - 1;
    while (at > 0 && oval[at - 1] < val) {
      o3[at] = o3[at - 1]; o4[at] = o4[at - 1]; oval[at] = oval[at - 1];
      --at;
    }
    o3[at] = t3; o4[at] = t4; oval[at] = val;
  }
  return found;
}

__device__ void mh_lk_step(mh_ils_t *S, mh_lk_chain_t *C, int t1, int t2, int t3, int t4) {
  mh_two_opt_move(S, t1, t2, t4, t3); /* (t1, t2), (t4, t3) -> (t1, t4), (t2, t3) */
  int *e = C->step + 6 * C->len++;
  e[0] = t1; e[1] = t2; e[2] = t4; e[3] = t3; e[4] = S->last_i; e[5] = S->last_j;
}

/* Take back the steps past `len`: each reversal again, and out of the undo log, so that the
 * log holds only the steps kept. */
__device__ void mh_lk_undo_to(mh_ils_t *S, mh_lk_chain_t *C, int len) {
  const int logging = S->logging;
  S->logging = 0;
  while (C->len > len) {
    const int *e = C->step + 6 * --C->len;
    mh_reverse_range(S, e[4], e[5]);
    if (logging) S->nlog--;
  }
  S->logging = logging;
}

/* Lin-Kernighan move from t1 (Lin and Kernighan 1973, in the array form of Johnson and McGeoch
 * 1997): a chain of 2-opt steps, each removing the edge (t1, t2) that closes the tour, adding
 * (t2, t3) and removing (t3, t4) so that (t4, t1) closes it again, with the partial gain kept
 * positive. The first step tries MH_LK_BREADTH alternatives, the second 3, deeper steps the best
 * one; the chain is cut back to its best closing point. Returns that (negative) delta, or 0
 * after undoing everything. depth: longest chain (<= MH_LK_DEPTH). */
__device__ ll mh_try_lk(mh_ils_t *S, int t1, int depth) {
  mh_lk_chain_t C;
  C.len = 0;
  int c3[2][MH_LK_BREADTH], c4[2][MH_LK_BREADTH];
  ll cv[2][MH_LK_BREADTH];
  for (int dir = 0; dir < 2; ++dir) {
    const int t2 = dir == 0 ? mh_succ(S, t1) : mh_pred(S, t1);
    const ll g0 = MH_DIST(S, t1, t2);
    const int n1 = mh_lk_candidates(S, &C, t1, t2, g0, S->lk_b1, c3[0], c4[0], cv[0]);
    for (int a = 0; a < n1; ++a) {
      mh_lk_step(S, &C, t1, t2, c3[0][a], c4[0][a]);
      ll best_gain = cv[0][a] - MH_DIST(S, c4[0][a], t1);
      int best_len = best_gain > 0 ? 1 : 0;
      const int n2 = best_gain > 0 ? 0 : mh_lk_candidates(S, &C, t1, c4[0][a], cv[0][a], S->lk_b2, c3[1], c4[1], cv[1]);
      for (int b = 0; b < n2 && best_gain <= 0; ++b) {
        mh_lk_step(S, &C, t1, c4[0][a], c3[1][b], c4[1][b]);
        ll g = cv[1][b];
        int t2i = c4[1][b];
        for (;;) {
          const ll gain = g - MH_DIST(S, t2i, t1);
          if (gain > best_gain) { best_gain = gain; best_len = C.len; }
          if (C.len >= depth) break;
          int t3, t4;
          ll val;
          if (mh_lk_candidates(S, &C, t1, t2i, g, 1, &t3, &t4, &val) == 0) break;
          mh_lk_step(S, &C, t1, t2i, t3, t4);
          g = val;
          t2i = t4;
        }
        if (best_gain <= 0) mh_lk_undo_to(S, &C, 1);
      }
      if (best_gain > 0) {
        mh_lk_undo_to(S, &C, best_len);
        for (int m = 0; m < C.len; ++m) mh_push4(S, C.step[6 * m], C.step[6 * m + 1], C.step[6 * m + 2], C.step[6 * m + 3]);
        return -best_gain;
      }
      mh_lk_undo_to(S, &C, 0);
    }
  }
  return 0;
}

#define MH_LK3_DEPTH 64 /* longest chain of 3-opt steps */

/* A chain of LK3 steps: the reversals made (to take them back), the edges added (never removed
 * again by the same chain) and the cities touched (queued when the chain improves the tour). */
struct mh_lk3_t {
  int rev[2 * 3 * MH_LK3_DEPTH];
  int nrev;
  int add[4 * MH_LK3_DEPTH];
  int nadd;
  int touched[6 * MH_LK3_DEPTH + 1];
  int ntouched;
};

__device__ __forceinline__ void mh_lk3_move(mh_ils_t *S, mh_lk3_t *C, int a, int b, int c, int d) {
  mh_two_opt_move(S, a, b, c, d);
  C->rev[2 * C->nrev] = S->last_i;
  C->rev[2 * C->nrev + 1] = S->last_j;
  C->nrev++;
}

__device__ __forceinline__ bool mh_lk3_added(const mh_lk3_t *C, int x, int y) {
  for (int m = 0; m < C->nadd; ++m) {
    const int u = C->add[2 * m], v = C->add[2 * m + 1];
    if ((u == x && v == y) || (u == y && v == x)) return true;
  }
  return false;
}

/* Apply the sequential 3-opt step (t1..t6, kind: 0 = 2-opt t1 t2 t3 t4; 1 = 3-opt with t4 before
 * t3; 2 = 3-opt, t4 after t3, t6 after t5; 3 = t4 after t3, t6 before t5), as in mh_try_3opt.
 * Afterwards the tour holds the added edges and the closing edge (t4 or t6, t1). */
__device__ void mh_lk3_apply(mh_ils_t *S, mh_lk3_t *C, int kind, int t1, int t2, int t3, int t4, int t5, int t6) {
  if (kind == 0) {
    mh_lk3_move(S, C, t1, t2, t4, t3);
  } else if (kind == 1) {
    mh_lk3_move(S, C, t1, t2, t4, t3);
    mh_lk3_move(S, C, t1, t4, t6, t5);
  } else if (kind == 2) {
    mh_lk3_move(S, C, t1, t2, t5, t6);
    mh_lk3_move(S, C, t1, t5, t3, t4);
    mh_lk3_move(S, C, t1, t3, t6, t2);
  } else {
    mh_lk3_move(S, C, t1, t2, t6, t5);
    mh_lk3_move(S, C, t2, t5, t3, t4);
  }
  C->add[2 * C->nadd] = t2; C->add[2 * C->nadd + 1] = t3; C->nadd++;
  S->mark[t2] = S->mark[t3] = S->stamp;
  int *tc = C->touched + C->ntouched;
  tc[0] = t2; tc[1] = t3; tc[2] = t4;
  C->ntouched += 3;
  if (kind > 0) {
    C->add[2 * C->nadd] = t4; C->add[2 * C->nadd + 1] = t5; C->nadd++;
    S->mark[t4] = S->mark[t5] = S->stamp;
    tc[3] = t5; tc[4] = t6;
    C->ntouched += 2;
  }
}

/* Lin-Kernighan search with sequential 3-opt steps (the move structure of Helsgaun's LKH with
 * MOVE_TYPE 3): from the closing edge (t1, t2) with partial gain G, every sequential 2-opt or
 * 3-opt step over the neighbour lists (t3 among t2's k, t5 among t4's k5 nearest) is evaluated on
 * the unchanged tour; the first one that closes with a gain is applied and ends the search;
 * otherwise the step with the largest partial gain is applied and the chain goes on from its end,
 * for at most `depth` steps. Edges the chain added are never removed again. A chain that finds no
 * gain is taken back. Returns the (negative) delta, or 0. */
__device__ ll mh_try_lk3(mh_ils_t *S, int t1, int depth) {
  mh_lk3_t C;
  const int k = S->k, k5 = S->k5;
  for (int side = 0; side < 2; ++side) {
    C.nrev = 0; C.nadd = 0; C.ntouched = 1; C.touched[0] = t1;
    if (++S->stamp >= 0x3fffffff) { /* new stamp; clear the marks when it wraps */
      for (int i = 0; i < S->n; ++i) S->mark[i] = 0;
      S->stamp = 1;
    }
    const int stamp = S->stamp;
    int t2 = side == 0 ? mh_succ(S, t1) : mh_pred(S, t1);
    ll G = MH_DIST(S, t1, t2);
    for (int step = 0; step < depth; ++step) {
      const int dir = mh_succ(S, t1) == t2 ? 0 : 1;
      const int t2next = dir == 0 ? mh_succ(S, t2) : mh_pred(S, t2);
      ll bestG = 0;
      int bk = -1, b3 = 0, b4 = 0, b5 = 0, b6 = 0;
      ll close = 0;
      int ck = -1, c3 = 0, c4 = 0, c5 = 0, c6 = 0;
      for (int q3 = 0; q3 < k && ck < 0; ++q3) {
        const int t3 = S->neigh[(ll)t2 * k + q3];
        const ll g1 = G - S->neigh_d[(ll)t2 * k + q3];
        if (g1 <= 0) break;
        if (t3 == t1 || t3 == t2next) continue;
        for (int x4 = 0; x4 < 2 && ck < 0; ++x4) {
          const int t4 = (x4 == 0) == (dir == 0) ? mh_pred(S, t3) : mh_succ(S, t3);
          if (t4 == t1 || t4 == t2) continue;
          if (S->mark[t3] == stamp && S->mark[t4] == stamp && mh_lk3_added(&C, t3, t4)) continue;
          const ll g1b = g1 + MH_DIST(S, t3, t4);
          if (x4 == 0) {
            const ll gain = g1b - MH_DIST(S, t4, t1);
            if (gain > 0) { close = gain; ck = 0; c3 = t3; c4 = t4; break; }
            if (g1b > bestG) { bestG = g1b; bk = 0; b3 = t3; b4 = t4; }
          }
          for (int q5 = 0; q5 < k5; ++q5) {
            const int t5 = S->neigh[(ll)t4 * k + q5];
            const ll g2 = g1b - S->neigh_d[(ll)t4 * k + q5];
            if (g2 <= 0) break;
            if (t5 == t1 || t5 == t4 || t5 == mh_succ(S, t4) || t5 == mh_pred(S, t4)) continue;
            if (x4 == 1 && !mh_between(S, dir, t2, t5, t3)) continue;
            for (int x6 = 0; x6 < 1 + x4; ++x6) {
              const int t6 = mh_3opt_t6(S, dir, x4, x6, t2, t4, t5);
              if (t6 == t1 || t6 == t2 || t6 == t3 || t6 == t4) continue;
              if (S->mark[t5] == stamp && S->mark[t6] == stamp && mh_lk3_added(&C, t5, t6)) continue;
              const ll g3 = g2 + MH_DIST(S, t5, t6);
              const ll gain = g3 - MH_DIST(S, t6, t1);
              const int kind = x4 == 0 ? 1 : 2 + x6;
              if (gain > 0) { close = gain; ck = kind; c3 = t3; c4 = t4; c5 = t5; c6 = t6; break; }
              if (g3 > bestG) { bestG = g3; bk = kind; b3 = t3; b4 = t4; b5 = t5; b6 = t6; }
            }
            if (ck >= 0) break;
          }
        }
      }
      if (ck >= 0) { /* improvement: apply, queue every city the chain touched */
        mh_lk3_apply(S, &C, ck, t1, t2, c3, c4, c5, c6);
        for (int m = 0; m < C.ntouched; ++m) mh_push(S, C.touched[m]);
        return -close;
      }
      if (bk < 0 || step + 1 == depth) break;
      mh_lk3_apply(S, &C, bk, t1, t2, b3, b4, b5, b6);
      G = bestG;
      t2 = bk == 0 ? b4 : b6;
    }
    /* no gain: take the chain back (also out of the undo log) */
    const int logging = S->logging;
    S->logging = 0;
    for (int r = C.nrev - 1; r >= 0; --r) mh_reverse_range(S, C.rev[2 * r], C.rev[2 * r + 1]);
    S->logging = logging;
    if (logging) S->nlog -= C.nrev;
  }
  return 0;
}

/* First improving Or-opt move for a segment starting at city a; returns its delta or 0. */
__device__ ll mh_try_oropt(mh_ils_t *S, int a) {
  const int n = S->n;
  for (int dir = 0; dir < 2; ++dir) {
    const int s0 = a, p = dir == 0 ? mh_pred(S, s0) : mh_succ(S, s0);
    int sl = s0;
    for (int L = 1; L <= 3; ++L) {
      if (L > 1) sl = dir == 0 ? mh_succ(S, sl) : mh_pred(S, sl);
      const int nx = dir == 0 ? mh_succ(S, sl) : mh_pred(S, sl);
      if (nx == p || sl == p) break;
      const ll gain = MH_DIST(S, p, s0) + MH_DIST(S, sl, nx) - MH_DIST(S, p, nx);
      if (gain <= 0) continue;
      const int ps0 = S->pos[s0];
      for (int q = 0; q < S->k; ++q) {
        const int c = S->neigh[(ll)s0 * S->k + q];
        const ll dsc = S->neigh_d[(ll)s0 * S->k + q];
        if (dsc >= gain) break;
        int off = dir == 0 ? S->pos[c] - ps0 : ps0 - S->pos[c];
        if (off < 0) off += n;
        if (off < L) continue; /* c inside the segment */
        /* A: between c and e = next(c), as c s0 .. sl e */
        const int e = dir == 0 ? mh_succ(S, c) : mh_pred(S, c);
        if (c != p) {
          const ll delta = dsc + MH_DIST(S, sl, e) - MH_DIST(S, c, e) - gain;
          if (delta < 0) {
            mh_two_opt_move(S, p, s0, c, e);
            mh_two_opt_move(S, p, c, nx, sl);
            mh_two_opt_move(S, c, sl, s0, e);
            mh_push4(S, p, nx, s0, sl); mh_push(S, c); mh_push(S, e);
            return delta;
          }
        }
        /* B: between f = prev(c) and c, as f sl .. s0 c */
        const int f = dir == 0 ? mh_pred(S, c) : mh_succ(S, c);
        if (c != nx) {
          const ll delta = dsc + MH_DIST(S, f, sl) - MH_DIST(S, f, c) - gain;
          if (delta < 0) {
            mh_two_opt_move(S, p, s0, f, c);
            mh_two_opt_move(S, p, f, nx, sl);
            mh_push4(S, p, nx, s0, sl); mh_push(S, c); mh_push(S, f);
            return delta;
          }
        }
      }
    }
  }
  return 0;
}

/* Empty the queue, applying improving moves; returns the total delta. While logging, it stops
 * early (clearing the queue, setting overflow) when the log could not hold another move's three
 * reversals, so that every reversal made can be undone. It also stops, keeping the queue, once
 * S->moves reaches S->move_limit (an initial descent in parts). */
__device__ ll mh_local_search(mh_ils_t *S) {
  ll total = 0;
  while (S->count > 0 && S->moves < S->move_limit) {
    if (S->logging && S->nlog + 3 + MH_LK_DEPTH + 3 * MH_LK3_DEPTH > MH_ILS_LOG) {
      S->overflow = 1;
      break;
    }
    const int a = S->queue[S->head];
    S->head = mh_pos_next(S->head, S->n);
    S->count--;
    S->inq[a] = 0;
    ll delta = mh_try_2opt(S, a);
    if (delta == 0) delta = mh_try_oropt(S, a);
    if (delta == 0 && S->k5 > 0 && S->lk3_depth == 0) delta = mh_try_3opt(S, a, S->k5);
    if (delta == 0 && S->lk_depth > 0) delta = mh_try_lk(S, a, S->lk_depth);
    if (delta == 0 && S->lk3_depth > 0) delta = mh_try_lk3(S, a, S->lk3_depth);
    if (delta < 0) {
      total += delta;
      S->moves++;
      mh_push(S, a);
    }
  }
  while (S->overflow && S->count > 0) { /* abandoned: clear the rest */
    S->inq[S->queue[S->head]] = 0;
    S->head = mh_pos_next(S->head, S->n);
    S->count--;
  }
  return total;
}

/* Kick 1, segment shuffle (a "ruin and recreate" perturbation): the cities at positions
 * p+1 .. p+len are put in random order; the local search then rebuilds that stretch. Returns
 * the length change and queues every city of the stretch and its two outside neighbours. */
__device__ ll mh_shuffle_kick(mh_ils_t *S, int p, int len, unsigned long long key, unsigned long long *ctr) {
  const int n = S->n;
  ll before = 0, after = 0;
  for (int m = 0; m <= len; ++m) before += MH_DIST(S, S->t[(p + m) % n], S->t[(p + m + 1) % n]);
  for (int m = len; m > 1; --m) { /* Fisher-Yates over the stretch */
    const int r = mh_below(key, (*ctr)++, m);
    if (r != m - 1) mh_swap_positions(S, (p + 1 + r) % n, (p + m) % n);
  }
  for (int m = 0; m <= len; ++m) {
    after += MH_DIST(S, S->t[(p + m) % n], S->t[(p + m + 1) % n]);
    mh_push(S, S->t[(p + m) % n]);
  }
  mh_push(S, S->t[(p + len + 1) % n]);
  return after - before;
}

/* Kick 2, walk: three cities are picked by a short random walk over the neighbour lists from
 * city v (Applegate, Cook and Rohe 2003 pick double-bridge cuts this way), the tour is cut after
 * each of them and the two segments between the cuts swap places (three 2-opt moves, each
 * reversing the shorter side). Returns the length change (0 without a change when eight walks
 * gave fewer than three distinct cuts). */
__device__ ll mh_walk_kick(mh_ils_t *S, int v, unsigned long long key, unsigned long long *ctr) {
  int p[3];
  bool ok = false;
  for (int attempt = 0; attempt < 8 && !ok; ++attempt) { /* redraw when the cuts coincide */
    int x[3];
    x[0] = v;
    x[1] = S->neigh[(ll)x[0] * S->k + mh_below(key, (*ctr)++, S->k)];
    x[2] = S->neigh[(ll)x[1] * S->k + mh_below(key, (*ctr)++, S->k)];
    p[0] = S->pos[x[0]]; p[1] = S->pos[x[1]]; p[2] = S->pos[x[2]];
    for (int i = 0; i < 2; ++i) /* sort the three positions */
      for (int j = 0; j < 2 - i; ++j)
        if (p[j] > p[j + 1]) { const int t = p[j]; p[j] = p[j + 1]; p[j + 1] = t; }
    ok = !(p[0] == p[1] || p[1] == p[2] || (p[0] == 0 && p[2] == S->n - 1));
  }
  if (!ok) return 0;
  const int n = S->n;
  const int t1 = S->t[p[0]], t2 = S->t[p[0] + 1], t5 = S->t[p[1]], t6 = S->t[p[1] + 1];
  const int t3 = S->t[p[2]], t4 = S->t[mh_pos_next(p[2], n)];
  const ll delta = MH_DIST(S, t1, t6) + MH_DIST(S, t3, t2) + MH_DIST(S, t5, t4) - MH_DIST(S, t1, t2) -
                   MH_DIST(S, t5, t6) - MH_DIST(S, t3, t4);
  mh_two_opt_move(S, t1, t2, t5, t6);
  mh_two_opt_move(S, t1, t5, t3, t4);
  mh_two_opt_move(S, t1, t3, t6, t2);
  mh_push4(S, t1, t2, t3, t4); mh_push(S, t5); mh_push(S, t6);
  return delta;
}

/* Kick 0, segment swap (a pure sequential 3-opt move, often called a double bridge): segments
 * B = t[p+1 .. p+l1] and C = t[p+l1+1 .. p+l1+l2] swap places (three reversals). Returns the
 * length change and queues the six cities at its edges. */
__device__ ll mh_segment_swap(mh_ils_t *S, int p, int l1, int l2) {
  const int n = S->n;
  const int i1 = (p + 1) % n, i2 = (p + l1) % n, i3 = (p + l1 + 1) % n, i4 = (p + l1 + l2) % n;
  const int a = S->t[p], b0 = S->t[i1], b1 = S->t[i2], c0 = S->t[i3], c1 = S->t[i4], d = S->t[(i4 + 1) % n];
  const ll delta = MH_DIST(S, a, c0) + MH_DIST(S, c1, b0) + MH_DIST(S, b1, d) - MH_DIST(S, a, b0) -
                   MH_DIST(S, b1, c0) - MH_DIST(S, c1, d);
  mh_reverse_range(S, i1, i2);
  mh_reverse_range(S, i3, i4);
  mh_reverse_range(S, i1, i4);
  mh_push4(S, a, b0, b1, c0); mh_push(S, c1); mh_push(S, d);
  return delta;
}

/* Double bridge (Martin, Otto and Felten 1991) on four cut points: the tour is cut after the
 * positions p[0], p[1], p[2], p[3] (in cyclic order, all segments non-empty) into segments
 * S0 S1 S2 S3 (S_j = p[j] + 1 .. p[j + 1]), reconnected as A D C B with A the longest segment,
 * so only the other three move (one reversal of B C D, then one of each part). A non-sequential
 * 4-opt move: 2-opt, 3-opt and LK moves cannot undo it in one step. Returns the length change. */
__device__ ll mh_double_bridge4(mh_ils_t *S, const int *p) {
  const int n = S->n;
  int len[4], a = 0;
  for (int j = 0; j < 4; ++j) {
    int l = p[(j + 1) & 3] - p[j];
    if (l <= 0) l += n;
    len[j] = l;
    if (l > len[a]) a = j;
  }
  const int b = (a + 1) & 3, c = (a + 2) & 3, d = (a + 3) & 3;
  const int sb = mh_pos_next(p[b], n), sc = mh_pos_next(p[c], n);
  const int sd = mh_pos_next(p[d], n), sa = mh_pos_next(p[a], n);
  const int as = S->t[sa], ae = S->t[p[b]], bs = S->t[sb], be = S->t[p[c]];
  const int cs = S->t[sc], ce = S->t[p[d]], ds = S->t[sd], de = S->t[p[a]];
  const ll delta = MH_DIST(S, ae, ds) + MH_DIST(S, de, cs) + MH_DIST(S, ce, bs) + MH_DIST(S, be, as) -
                   MH_DIST(S, ae, bs) - MH_DIST(S, be, cs) - MH_DIST(S, ce, ds) - MH_DIST(S, de, as);
  const int ed = p[a];
  mh_reverse_range(S, sb, ed); /* B C D -> D' C' B' */
  int x = sb;
  const int l3[3] = {len[d], len[c], len[b]};
  for (int j = 0; j < 3; ++j) {
    int y = x + l3[j] - 1;
    if (y >= n) y -= n;
    if (l3[j] > 1) mh_reverse_range(S, x, y);
    x = mh_pos_next(y, n);
  }
  mh_push4(S, as, ae, bs, be); mh_push4(S, cs, ce, ds, de);
  return delta;
}

/* Kick 3: double bridge with three consecutive segments of 1 .. window cities after a random
 * position (a local double bridge). */
__device__ ll mh_local_double_bridge(mh_ils_t *S, int window, unsigned long long key, unsigned long long *ctr) {
  const int n = S->n;
  const int w = mh_imax(1, mh_imin(window, (n - 1) / 3));
  int p[4];
  p[0] = mh_below(key, (*ctr)++, n);
  for (int j = 1; j < 4; ++j) {
    p[j] = p[j - 1] + 1 + mh_below(key, (*ctr)++, w);
    if (p[j] >= n) p[j] -= n;
  }
  return mh_double_bridge4(S, p);
}

/* Kick 4: geometric double bridge: the tour is cut after a random city and three others drawn
 * from its neighbour list (cities close in space, so the new edges are short). Returns 0 without
 * a change when the cuts coincide (after a few draws). */
__device__ ll mh_near_bridge(mh_ils_t *S, int v, int reach, unsigned long long key, unsigned long long *ctr) {
  const int m = mh_imin(S->k, mh_imax(3, reach));
  int p[4];
  for (int attempt = 0; attempt < 8; ++attempt) {
    p[0] = S->pos[v];
    for (int j = 1; j < 4; ++j) {
      const int q = mh_below(key, (*ctr)++, m);
      p[j] = S->pos[S->neigh[(ll)v * S->k + q]];
    }
    for (int i = 0; i < 3; ++i) /* sort */
      for (int j = 0; j < 3 - i; ++j)
        if (p[j] > p[j + 1]) { const int t = p[j]; p[j] = p[j + 1]; p[j + 1] = t; }
    if (p[0] != p[1] && p[1] != p[2] && p[2] != p[3]) return mh_double_bridge4(S, p);
  }
  return 0;
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

extern "C" __global__ void tsp_ils_run(const double *xy, const int *mat, const int *neigh, const int *neigh_d, int n,
                                       int k, int *tours, int *best_tours, int *pos, long long *stats,
                                       const unsigned long long *keys, int *work, long long kicks, int kick,
                                       int window, int k5, int lk_move, int lk_depth, int lk_b1, int lk_b2,
                                       double temperature, long long target, int init,
                                       long long init_moves) {
  const ll sol = mh_block();
  if (mh_tid() != 0) return;
  mh_ils_t S;
  S.xy = xy; S.mat = mat; S.neigh = neigh; S.neigh_d = neigh_d; S.n = n; S.k = k; S.k5 = mh_imin(k5, k);
  S.lk_depth = lk_move == 0 ? mh_imin(lk_depth, MH_LK_DEPTH) : 0;
  S.lk3_depth = lk_move == 1 ? mh_imin(lk_depth, MH_LK3_DEPTH) : 0;
  S.lk_b1 = mh_imax(1, mh_imin(lk_b1, MH_LK_BREADTH)); S.lk_b2 = mh_imax(1, mh_imin(lk_b2, MH_LK_BREADTH));
  S.t = tours + sol * n; S.pos = pos + sol * n;
  int *bt = best_tours + sol * n;
  int *w = work + sol * (3LL * n + 2 * MH_ILS_LOG + 3);
  S.queue = w; S.inq = w + n; S.mark = w + 2 * n; S.log = w + 3 * n;
  int *stamp_store = w + 3 * n + 2 * MH_ILS_LOG, *queue_store = stamp_store + 1; /* queue head and count */
  S.stamp = *stamp_store;
  S.head = 0; S.count = 0; S.nlog = 0; S.logging = 0; S.overflow = 0; S.moves = 0; S.move_limit = MH_LL_MAX;
  ll *st = stats + sol * MH_ILS_NSTATS;
  const unsigned long long key = keys[sol];
  unsigned long long ctr = (unsigned long long)st[MH_ILS_CTR];

  for (int i = 0; i < n; ++i) S.pos[S.t[i]] = i; /* the host may have replaced the tour */
  /* initial descent: init 1 starts it (every city queued, in tour order), init 2 resumes the
   * queue a launch left; at most init_moves improving moves per launch */
  if (!init && queue_store[1] > 0) { /* a descent cut short (time limit): drop the rest of its queue */
    for (int q = 0, h = queue_store[0]; q < queue_store[1]; ++q, h = mh_pos_next(h, n)) S.inq[S.queue[h]] = 0;
    queue_store[1] = 0;
    st[MH_ILS_PENDING] = 0;
  }
  if (init) {
    ll len = st[MH_ILS_COST];
    if (init == 1) {
      len = 0;
      for (int i = 0; i < n; ++i) {
        S.inq[i] = 0;
        len += MH_DIST(&S, S.t[i], S.t[mh_pos_next(i, n)]);
      }
      for (int i = 0; i < n; ++i) mh_push(&S, S.t[i]);
      st[MH_ILS_KICKS] = 0; st[MH_ILS_BETTER] = 0; st[MH_ILS_MOVES] = 0;
    } else {
      S.head = queue_store[0]; S.count = queue_store[1];
    }
    S.move_limit = init_moves;
    len += mh_local_search(&S);
    S.move_limit = MH_LL_MAX;
    st[MH_ILS_COST] = st[MH_ILS_BEST] = len;
    st[MH_ILS_PENDING] = S.count;
    queue_store[0] = S.head; queue_store[1] = S.count;
    if (S.count > 0) { /* the rest of the descent waits for the next launch: no kicks now */
      st[MH_ILS_MOVES] += S.moves;
      for (int i = 0; i < n; ++i) bt[i] = S.t[i];
      *stamp_store = S.stamp;
      return;
    }
  }
  ll cost = st[MH_ILS_COST], best = st[MH_ILS_BEST], better = 0, done = 0;
  bool best_is_current = cost == best; /* best_tours is refreshed at the end of every launch */
  const int w1 = mh_imax(1, mh_imin(window, (n - 2) / 2));
  const int ws = mh_imax(2, mh_imin(mh_imin(window, n - 2), MH_ILS_LOG / 2)); /* a shuffle logs a swap a city */
  if (n >= 8) {
    S.logging = 1;
    for (; done < kicks && best > target; ++done) {
      S.nlog = 0; S.overflow = 0;
      const int p = mh_below(key, ctr++, n);
      ll delta;
      if (kick == 0) {
        const int l1 = 1 + mh_below(key, ctr++, w1), l2 = 1 + mh_below(key, ctr++, w1);
        delta = mh_segment_swap(&S, p, l1, l2);
      } else if (kick == 2) {
        delta = mh_walk_kick(&S, S.t[p], key, &ctr);
      } else if (kick == 3) {
        delta = mh_local_double_bridge(&S, window, key, &ctr);
      } else if (kick == 4) {
        delta = mh_near_bridge(&S, S.t[p], window, key, &ctr);
      } else {
        delta = mh_shuffle_kick(&S, p, 2 + mh_below(key, ctr++, ws - 1), key, &ctr);
      }
      delta += mh_local_search(&S);
      bool accept = !S.overflow && delta <= 0;
      if (!S.overflow && delta > 0 && temperature > 0)
        accept = (double)delta < temperature * ((double)cost / n) * mh_uniform(key, ctr++);
      if (!accept) {
        mh_replay(&S, false);
        continue;
      }
      if (delta > 0 && best_is_current) { /* leaving the best tour: keep a copy of it first */
        mh_replay(&S, false);
        for (int i = 0; i < n; ++i) bt[i] = S.t[i];
        mh_replay(&S, true);
        best_is_current = false;
      }
      cost += delta;
      better += delta < 0;
      if (cost < best || (cost == best && !best_is_current && delta <= 0)) {
        best = cost;
        best_is_current = true;
      }
    }
  }
  if (best_is_current)
    for (int i = 0; i < n; ++i) bt[i] = S.t[i];
  *stamp_store = S.stamp;
  st[MH_ILS_COST] = cost;
  st[MH_ILS_BEST] = best;
  st[MH_ILS_KICKS] += done;
  st[MH_ILS_CTR] = (ll)ctr;
  st[MH_ILS_BETTER] += better;
  st[MH_ILS_MOVES] += S.moves;
}
