/* tsp_ils_lk.cuh - the Lin-Kernighan moves of kernels/tsp/tsp_ils.cu (see its header for the rule of
 * each): a first-improvement 3-opt search (mh_try_3opt), chains of 2-opt steps in the array form of
 * Johnson and McGeoch 1997 (mh_try_lk) and chains of sequential 3-opt steps as in Helsgaun's LKH
 * with MOVE_TYPE = 3 (mh_try_lk3). Each returns its (negative) delta or 0 and leaves the tour
 * unchanged when it finds no improvement. Needs tsp_ils_state.cuh. */
#ifndef MH_TSP_ILS_LK_CUH
#define MH_TSP_ILS_LK_CUH

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

/* Whether t5, a neighbour of t4, may end the third removed edge of a sequential 3-opt move
 * t1 .. t4 (x4 as in mh_3opt_t6): not t1, t4 or a tour neighbour of t4, and when t4 follows t3,
 * on the path from t2 to t3. */
__device__ __forceinline__ bool mh_3opt_t5_ok(const mh_ils_t *S, int dir, int x4, int t1, int t2, int t3, int t4,
                                              int t5) {
  if (t5 == t1 || t5 == t4 || t5 == mh_succ(S, t4) || t5 == mh_pred(S, t4)) return false;
  return x4 == 0 || mh_between(S, dir, t2, t5, t3);
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
          if (!mh_3opt_t5_ok(S, dir, x4, t1, t2, t3, t4, t5)) continue;
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
            if (!mh_3opt_t5_ok(S, dir, x4, t1, t2, t3, t4, t5)) continue;
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

#endif /* MH_TSP_ILS_LK_CUH */
