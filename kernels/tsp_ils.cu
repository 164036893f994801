/* tsp_ils.cu - iterated local search for the TSP with 2-opt and Or-opt moves. One block = one
 * search; thread 0 of a block runs it (the standard sequential first-improvement design; see
 * tsp_ls_best in tsp_ls_block.cu for the variant that uses a whole GPU block).
 *
 * Local search (Bentley 1992, "Fast algorithms for geometric TSP"): cities wait in a FIFO queue
 * of "don't-look bits"; a city taken from the queue is tried as the end of an improving
 *  - 2-opt move: a, b = succ/pred(a), c among a's k nearest with d(a, c) < d(a, b), d = succ/pred(c);
 *  - Or-opt move (Or 1976): the segment of 1-3 cities starting at a (either direction) goes next
 *    to one of its first city's neighbours c with d(s0, c) < removal gain, on either side of c;
 * the first improving move is applied and the cities at its ends re-enter the queue.
 * The tour is an array with a position index; every move is a sequence of 2-opt reversals of
 * the shorter side (Or-opt: 2 or 3 of them), which also gives an undo log.
 * Iterated local search (Lourenco, Martin and Stuetzle 2003) with a local double-bridge kick:
 * two adjacent segments of at most `window` cities each, at a random place, swap places; the
 * local search repairs around the six touched cities; the result is kept if it is no longer
 * (equal lengths let the search drift across plateaus), else undone from the log.
 *
 * State (S searches): tours, pos S x n; stats S x MH_ILS_NSTATS; keys S; work S x (2n + 2 LOG).
 * neigh, neigh_d: n x k nearest cities and their distances, sorted by distance.
 */
#include "mh_common.cuh"
#include "mh_rng.cuh"
#include "tsp_dist.cuh"

#define MH_ILS_COST 0   /* current (= best) tour length */
#define MH_ILS_KICKS 1  /* kicks done */
#define MH_ILS_CTR 2    /* random draws used */
#define MH_ILS_BETTER 3 /* kicks that shortened the tour */
#define MH_ILS_MOVES 4  /* improving moves applied */
#define MH_ILS_NSTATS 5
#define MH_ILS_LOG 4096 /* reversals one kick may log before it is abandoned */

struct mh_ils_t {
  const double *xy;
  const int *mat, *neigh, *neigh_d;
  int n, k;
  int *t, *pos;
  int *queue, *inq; /* FIFO of cities to look at, and membership flags */
  int head, count;
  int *log, nlog, logging, overflow;
  ll moves;
};

#define MH_DIST(S, x, y) ((ll)mh_tsp_dist((S)->xy, (S)->mat, (S)->n, (x), (y)))

__device__ __forceinline__ int mh_succ(const mh_ils_t *S, int c) {
  const int i = S->pos[c] + 1;
  return S->t[i == S->n ? 0 : i];
}
__device__ __forceinline__ int mh_pred(const mh_ils_t *S, int c) {
  const int i = S->pos[c];
  return S->t[i == 0 ? S->n - 1 : i - 1];
}

__device__ __forceinline__ void mh_push(mh_ils_t *S, int c) {
  if (S->inq[c]) return;
  S->inq[c] = 1;
  int tail = S->head + S->count;
  S->queue[tail >= S->n ? tail - S->n : tail] = c;
  S->count++;
}

/* Reverse the positions i .. j (cyclic, inclusive) and log it. */
__device__ void mh_reverse_range(mh_ils_t *S, int i, int j) {
  const int n = S->n;
  int len = j - i;
  if (len < 0) len += n;
  len += 1;
  if (S->logging) { /* room is guaranteed by mh_local_search */
    S->log[2 * S->nlog] = i;
    S->log[2 * S->nlog + 1] = j;
    S->nlog++;
  }
  for (int m = len / 2; m > 0; --m) {
    const int ci = S->t[i], cj = S->t[j];
    S->t[i] = cj; S->pos[cj] = i;
    S->t[j] = ci; S->pos[ci] = j;
    i = i + 1 == n ? 0 : i + 1;
    j = j == 0 ? n - 1 : j - 1;
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
  if (2 * len > n) mh_reverse_range(S, j + 1 == n ? 0 : j + 1, i == 0 ? n - 1 : i - 1);
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
 * reversals, so that every reversal made can be undone. */
__device__ ll mh_local_search(mh_ils_t *S) {
  ll total = 0;
  while (S->count > 0) {
    if (S->logging && S->nlog + 3 > MH_ILS_LOG) {
      S->overflow = 1;
      break;
    }
    const int a = S->queue[S->head];
    S->head = S->head + 1 == S->n ? 0 : S->head + 1;
    S->count--;
    S->inq[a] = 0;
    ll delta = mh_try_2opt(S, a);
    if (delta == 0) delta = mh_try_oropt(S, a);
    if (delta < 0) {
      total += delta;
      S->moves++;
      mh_push(S, a);
    }
  }
  while (S->count > 0) { /* abandoned: clear the rest */
    S->inq[S->queue[S->head]] = 0;
    S->head = S->head + 1 == S->n ? 0 : S->head + 1;
    S->count--;
  }
  return total;
}

/* Local double bridge: segments B = t[p+1 .. p+l1] and C = t[p+l1+1 .. p+l1+l2] swap places
 * (three reversals). Returns the length change and queues the six cities at its edges. */
__device__ ll mh_double_bridge(mh_ils_t *S, int p, int l1, int l2) {
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

extern "C" __global__ void tsp_ils_run(const double *xy, const int *mat, const int *neigh, const int *neigh_d, int n,
                                       int k, int *tours, int *pos, long long *stats, const unsigned long long *keys,
                                       int *work, long long kicks, int window, long long target, int init) {
  const ll sol = mh_block();
  if (mh_tid() != 0) return;
  mh_ils_t S;
  S.xy = xy; S.mat = mat; S.neigh = neigh; S.neigh_d = neigh_d; S.n = n; S.k = k;
  S.t = tours + sol * n; S.pos = pos + sol * n;
  int *w = work + sol * (2LL * n + 2 * MH_ILS_LOG);
  S.queue = w; S.inq = w + n; S.log = w + 2 * n;
  S.head = 0; S.count = 0; S.nlog = 0; S.logging = 0; S.overflow = 0; S.moves = 0;
  ll *st = stats + sol * MH_ILS_NSTATS;
  const unsigned long long key = keys[sol];
  unsigned long long ctr = (unsigned long long)st[MH_ILS_CTR];

  if (init) {
    ll len = 0;
    for (int i = 0; i < n; ++i) {
      S.pos[S.t[i]] = i;
      S.inq[i] = 0;
      len += MH_DIST(&S, S.t[i], S.t[i + 1 == n ? 0 : i + 1]);
    }
    for (int i = 0; i < n; ++i) mh_push(&S, S.t[i]);
    len += mh_local_search(&S);
    st[MH_ILS_COST] = len;
    st[MH_ILS_KICKS] = 0; st[MH_ILS_BETTER] = 0; st[MH_ILS_MOVES] = S.moves;
    S.moves = 0;
  }
  ll cost = st[MH_ILS_COST], better = 0, done = 0;
  const int w1 = mh_imax(1, mh_imin(window, (n - 2) / 2));
  if (n >= 8) {
    S.logging = 1;
    for (; done < kicks && cost > target; ++done) {
      S.nlog = 0; S.overflow = 0;
      const int p = mh_below(key, ctr++, n);
      const int l1 = 1 + mh_below(key, ctr++, w1), l2 = 1 + mh_below(key, ctr++, w1);
      const ll delta = mh_double_bridge(&S, p, l1, l2) + mh_local_search(&S);
      if (delta <= 0 && !S.overflow) {
        cost += delta;
        better += delta < 0;
      } else {
        for (int m = S.nlog - 1; m >= 0; --m) { /* undo, newest first (a reversal is its own inverse) */
          const int i = S.log[2 * m], j = S.log[2 * m + 1];
          S.logging = 0;
          mh_reverse_range(&S, i, j);
          S.logging = 1;
        }
      }
    }
  }
  st[MH_ILS_COST] = cost;
  st[MH_ILS_KICKS] += done;
  st[MH_ILS_CTR] = (ll)ctr;
  st[MH_ILS_BETTER] += better;
  st[MH_ILS_MOVES] += S.moves;
}
