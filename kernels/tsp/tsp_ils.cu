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
 *
 * Parts: tsp_ils_state.cuh (the search state, primitive moves, undo log), tsp_ils_lk.cuh (3-opt and
 * Lin-Kernighan moves), tsp_ils_kicks.cuh (the kicks); here the 2-opt and Or-opt moves, the local
 * search loop and the kernel.
 */
#include "mh_common.cuh"
#include "mh_rng.cuh"
#include "tsp_dist.cuh"
#include "tsp_tour.cuh"

#define MH_ILS_COST 0   /* current tour length */
#define MH_ILS_KICKS 1  /* kicks done */
#define MH_ILS_CTR 2    /* random draws used */
#define MH_ILS_BETTER 3 /* kicks that shortened the tour */
#define MH_ILS_MOVES 4  /* improving moves applied */
#define MH_ILS_BEST 5   /* best tour length (the tour is in best_tours) */
#define MH_ILS_PENDING 6 /* cities still queued by an initial descent cut short by its move budget */
#define MH_ILS_NSTATS 7
#define MH_ILS_LOG 4096 /* reversals and swaps one kick may log before it is abandoned */

#include "tsp_ils_state.cuh"
#include "tsp_ils_lk.cuh"
#include "tsp_ils_kicks.cuh"

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

/* The initial descent: init 1 starts it (every city queued, in tour order), init 2 resumes the
 * queue a launch left; at most init_moves improving moves. Sets the current and best lengths;
 * returns whether the descent is unfinished (its queue waits in queue_store for the next launch,
 * best_tours holds its tour so far). */
__device__ bool mh_ils_descent(mh_ils_t *S, ll *st, int *bt, int *queue_store, int init, ll init_moves) {
  const int n = S->n;
  ll len = st[MH_ILS_COST];
  if (init == 1) {
    len = 0;
    for (int i = 0; i < n; ++i) {
      S->inq[i] = 0;
      len += MH_DIST(S, S->t[i], S->t[mh_pos_next(i, n)]);
    }
    for (int i = 0; i < n; ++i) mh_push(S, S->t[i]);
    st[MH_ILS_KICKS] = 0; st[MH_ILS_BETTER] = 0; st[MH_ILS_MOVES] = 0;
  } else {
    S->head = queue_store[0]; S->count = queue_store[1];
  }
  S->move_limit = init_moves;
  len += mh_local_search(S);
  S->move_limit = MH_LL_MAX;
  st[MH_ILS_COST] = st[MH_ILS_BEST] = len;
  st[MH_ILS_PENDING] = S->count;
  queue_store[0] = S->head; queue_store[1] = S->count;
  if (S->count == 0) return false;
  st[MH_ILS_MOVES] += S->moves;
  for (int i = 0; i < n; ++i) bt[i] = S->t[i];
  return true;
}

/* The kick of code `kick` (see the header for the list) at position p; returns its length change.
 * w1 bounds a segment swap's segments, ws a shuffle's stretch. */
__device__ ll mh_kick(mh_ils_t *S, int kick, int p, int window, int w1, int ws, unsigned long long key,
                      unsigned long long *ctr) {
  if (kick == 0) {
    const int l1 = 1 + mh_below(key, (*ctr)++, w1), l2 = 1 + mh_below(key, (*ctr)++, w1);
    return mh_segment_swap(S, p, l1, l2);
  }
  if (kick == 2) return mh_walk_kick(S, S->t[p], key, ctr);
  if (kick == 3) return mh_local_double_bridge(S, window, key, ctr);
  if (kick == 4) return mh_near_bridge(S, S->t[p], window, key, ctr);
  return mh_shuffle_kick(S, p, 2 + mh_below(key, (*ctr)++, ws - 1), key, ctr);
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
  if (!init && queue_store[1] > 0) { /* a descent cut short (time limit): drop the rest of its queue */
    for (int q = 0, h = queue_store[0]; q < queue_store[1]; ++q, h = mh_pos_next(h, n)) S.inq[S.queue[h]] = 0;
    queue_store[1] = 0;
    st[MH_ILS_PENDING] = 0;
  }
  if (init && mh_ils_descent(&S, st, bt, queue_store, init, init_moves)) {
    *stamp_store = S.stamp; /* the rest of the descent waits for the next launch: no kicks now */
    return;
  }
  ll cost = st[MH_ILS_COST], best = st[MH_ILS_BEST], better = 0, done = 0;
  bool best_is_current = cost == best; /* best_tours is refreshed at the end of every launch */
  const int w1 = mh_imax(1, mh_imin(window, (n - 2) / 2));
  const int ws = mh_imax(2, mh_imin(mh_imin(window, n - 2), MH_ILS_LOG / 2)); /* a shuffle logs a swap a city */
  if (n >= 8) {
    S.logging = 1;
    for (; done < kicks && best > target && ((done & 15) || !mh_time_up()); ++done) {
      S.nlog = 0; S.overflow = 0;
      const int p = mh_below(key, ctr++, n);
      ll delta = mh_kick(&S, kick, p, window, w1, ws, key, &ctr);
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
