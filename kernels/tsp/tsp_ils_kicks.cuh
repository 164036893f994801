/* tsp_ils_kicks.cuh - the kicks of kernels/tsp/tsp_ils.cu (see its header for the list): each changes
 * the tour through the logged primitive moves, returns the length change and queues the cities at
 * its ends for the local search. Needs tsp_ils_state.cuh. */
#ifndef MH_TSP_ILS_KICKS_CUH
#define MH_TSP_ILS_KICKS_CUH

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

#endif /* MH_TSP_ILS_KICKS_CUH */
