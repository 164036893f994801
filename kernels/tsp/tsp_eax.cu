/* tsp_eax.cu - Edge Assembly Crossover (EAX) for the symmetric TSP. One block = one pair of
 * parents (A, B); in tsp_eax thread 0 of the block does the work (a sequential algorithm, as in
 * tsp_ils.cu), so the same code runs on the CPU build and on a GPU; tsp_eax_block (further down)
 * builds the same children with the O(n) work of a pair spread over the block.
 *
 * EAX (Nagata and Kobayashi 1997; Nagata and Kobayashi, "A powerful genetic algorithm using edge
 * assembly crossover for the traveling salesman problem", INFORMS J. Computing 25(2), 2013):
 *  1. G_AB = the edges of A and B, less the edges they share (a shared edge would only form an
 *     ineffective AB-cycle of two edges). Every city has as many A-edges as B-edges in G_AB.
 *  2. G_AB is split into AB-cycles, closed walks whose edges alternate between A and B: a walk
 *     from a random city takes, alternately, a random unused A-edge and a random unused B-edge at
 *     its end, and whenever its end meets an earlier point of the walk at the same parity the
 *     closed part is cut off as an AB-cycle (as in Nagata and Kobayashi 2013). Every AB-cycle
 *     has at least 4 edges.
 *  3. An E-set (a set of AB-cycles) is applied to A: its A-edges leave, its B-edges come in.
 *     strategy 0 "rand": each AB-cycle enters the E-set with probability 1/2 (EAX-Rand, Nagata
 *       and Kobayashi 1997; an empty draw takes one random AB-cycle);
 *     strategy 1 "single": one AB-cycle (EAX-1AB / EAX-Single of Nagata 2013); the `tries`
 *       children of a block take distinct AB-cycles, in random order.
 *  4. The intermediate solution is a set of sub-tours. They are merged greedily (Nagata's local
 *     merging): the smallest sub-tour U is joined to another by the best 2-opt-style exchange,
 *     removing an edge (u, w) of U and an edge (v, x) of another sub-tour and adding (u, v),
 *     (w, x), with v among u's k nearest cities (neigh); when no near city lies outside U, the
 *     cities whose neighbour lists reach into U are tried, and as a last resort every city.
 *     Repeated until one tour remains.
 * A block builds `tries` children this way (each from A and its own E-set) and writes one with its
 * exact length; `tries = 1` is one child per block. When A and B have the same edges (no
 * AB-cycle), the child is A. Which child (ties: the first):
 *   select 0, greedy: the shortest;
 *   select 1, entropy-preserving (Nagata and Kobayashi 2013): among the children shorter than
 *     A, the one of largest  dL / -dH  (dH < 0)  or  dL / eps  (dH >= 0), where dL = L(A) - L(child) and
 *     dH the change of the population's edge entropy H = sum_e h(F(e)) if the child replaced A;
 *     F(e) = how many tours of the population hold edge e (table freq_*, built and kept up to date
 *     by tsp_eax_freq), h(f) = -(f/P) log(f/P) tabulated by the host (ent_h[0..P], so that both
 *     builds sum the same doubles). No child shorter than A: the shortest.
 *
 * Data structures (so that a child costs O(|E-set| log |E-set| + merging work), not O(n)): A
 * stays an array (ta, posa); the E-set's A-edges cut it into segments, found by binary search in
 * the sorted cut positions; every city has two neighbour slots, lnk_s (replacing the A-edge to its
 * predecessor in A) and lnk_e (to its successor), -1 while the A-edge stands. Sub-tours are
 * traced segment by segment, and merged with a union-find over the segments. The slots touched
 * are reset after each child; the best child is rebuilt from its E-set at the end and written
 * out by walking the slots (O(n)), its length summed from scratch (exact, long long).
 *
 * Arguments (C blocks): tours_a, tours_b C x n (city orders); children C x n and child_len C
 * (out); len_a C (A's exact length: the written child's length, summed from scratch, is checked
 * against len_a + the incrementally tracked delta);
 * keys C, counters C (random stream of block c and its next draw, written back);
 * strategy 0 / 1 (rand / single); tries >= 1 children a block; select 0 / 1 (greedy / entropy);
 * work C x MH_EAX_WORK(n) ints; info C x MH_EAX_NINFO (out, see below).
 * neigh: n x k nearest cities.
 * freq_nb, freq_cnt: n x freq_m, freq_len: n (select 1; 1-element placeholders otherwise): the
 * distinct neighbours of every city in the population's tours and how many tours hold each edge,
 * stored in the rows of both its cities; freq_m = 2P never overflows; ent_h[0..npop], npop = P.
 * record != 0: changes C x n x 5 (out) lists, for the written child, every city whose neighbours
 * differ from A's as (city, A's two neighbours, the child's two), info[MH_EAX_CHANGED] rows, so
 * that the host can update the frequency table when the child replaces A (1-element placeholder
 * when record = 0).
 *
 * tsp_eax_freq (one block per city that changes, `count` blocks): applies tour replacements to
 * that table. Block b updates city cities[b] with the changes starts[b] .. starts[b + 1] - 1:
 * old_nb[i], new_nb[i] (x 2) are its two neighbours in a replaced tour and in its replacement
 * (-1: no tour, to build the table from an empty one).
 *
 * tsp_eax_freq_accept (the "fused" update, ILSParams.eax_kernel): the same changes for every child
 * of the last tsp_eax launch shorter than its parent A, read from that launch's own buffers, in
 * one launch (one thread a city; see the kernel).
 */
#include "mh_common.cuh"
#include "mh_rng.cuh"
#include "tsp_dist.cuh"
#include "tsp_tour.cuh"

#define MH_EAX_WORK(n) (21LL * (n) + 4) /* ints of scratch per block */

#define MH_EAX_CYCLES 0   /* AB-cycles of the pair */
#define MH_EAX_CHILDREN 1 /* children built (the best one is written) */
#define MH_EAX_ESET 2     /* AB-cycles in the written child's E-set */
#define MH_EAX_SUBTOURS 3 /* sub-tours of its intermediate solution */
#define MH_EAX_MERGES 4   /* merge moves (each adds two edges that may be in neither parent) */
#define MH_EAX_DELTA 5    /* its length minus len_a, computed incrementally */
#define MH_EAX_WIDE 6     /* merges of all children that needed the wider search */
#define MH_EAX_ERROR 7    /* non-zero: inconsistent structure (1-6, a bug; the child is then A), or 7: the
                           * child's length from scratch differs from len_a + delta (len_a is wrong) */
#define MH_EAX_CHANGED 8  /* record: cities whose neighbours differ from A's (rows of `changes`) */
#define MH_EAX_NINFO 9

struct mh_eax_t {
  const double *xy;
  const int *mat, *neigh;
  int n, k;
  const int *ta, *tb;
  int *posa, *posb, *lnk_s, *lnk_e, *label;
  int *cyc, *cyc_start, ncyc;
  /* one child */
  int *cut, *par, *sz, *rep, *roots, *ubuf, *touched;
  int r, nsub, ntouched, stamp, merges, error;
  ll wide;
};

#define MH_EDIST(E, x, y) ((ll)mh_tsp_dist((E)->xy, (E)->mat, (E)->n, (x), (y)))

__device__ __forceinline__ int mh_eax_succa(const mh_eax_t *E, int c) { return mh_tour_succ(E->ta, E->posa, E->n, c); }
__device__ __forceinline__ int mh_eax_preda(const mh_eax_t *E, int c) { return mh_tour_pred(E->ta, E->posa, E->n, c); }
__device__ __forceinline__ int mh_eax_succb(const mh_eax_t *E, int c) { return mh_tour_succ(E->tb, E->posb, E->n, c); }
__device__ __forceinline__ int mh_eax_predb(const mh_eax_t *E, int c) { return mh_tour_pred(E->tb, E->posb, E->n, c); }
/* The two neighbours of c in the current (intermediate) solution. */
__device__ __forceinline__ int mh_eax_nb0(const mh_eax_t *E, int c) {
  return E->lnk_s[c] >= 0 ? E->lnk_s[c] : mh_eax_preda(E, c);
}
__device__ __forceinline__ int mh_eax_nb1(const mh_eax_t *E, int c) {
  return E->lnk_e[c] >= 0 ? E->lnk_e[c] : mh_eax_succa(E, c);
}
/* Replace the edge (c, old) by (c, nw) at c. */
__device__ __forceinline__ void mh_eax_relink(mh_eax_t *E, int c, int old, int nw) {
  if (mh_eax_nb0(E, c) == old) E->lnk_s[c] = nw;
  else E->lnk_e[c] = nw;
}

/* The G_AB edges at city v, from its own neighbours (so that threads filling the masks of different
 * cities never share an entry): bits 1 and 2, the A-edges to its predecessor and successor in A
 * that B lacks; 4 and 8, the B-edges to its predecessor and successor in B that A lacks. */
__device__ __forceinline__ int mh_eax_mask(const mh_eax_t *E, int v) {
  const int pa = mh_eax_preda(E, v), sa = mh_eax_succa(E, v), pb = mh_eax_predb(E, v), sb = mh_eax_succb(E, v);
  return (pa != pb && pa != sb ? 1 : 0) | (sa != pb && sa != sb ? 2 : 0) | (pb != pa && pb != sa ? 4 : 0) |
         (sb != pa && sb != sa ? 8 : 0);
}

/* Split G_AB into AB-cycles (step 2 of the file comment), given every city's mask (the unused
 * edges), the cities with any, in city order (verts[0 .. nv)), and their slots at -1. cyc holds
 * the cycles one after another, cycle m in cyc[cyc_start[m] .. cyc_start[m + 1] - 1], as cities
 * v0 v1 ... v(L-1) where the edge (v(2j), v(2j+1)) is an A-edge and (v(2j+1), v(2j+2 mod L)) a
 * B-edge. Scratch: path 2n + 2; slot 2n. */
__device__ void mh_eax_walk(mh_eax_t *E, int *mask, int *verts, int nv, int *path, int *slot, unsigned long long key,
                            unsigned long long *ctr) {
  int total = 0;
  E->ncyc = 0;
  E->cyc_start[0] = 0;
  for (;;) {
    int v = -1;
    while (nv > 0) { /* a random city with unused edges (cities without any drop out) */
      const int i = mh_below(key, (*ctr)++, nv);
      if (mask[verts[i]] & 3) { v = verts[i]; break; }
      verts[i] = verts[--nv];
    }
    if (v < 0) break;
    path[0] = v;
    slot[2 * v] = 0;
    int plen = 1;
    for (;;) {
      const int m = plen - 1, cur = path[m];
      const int isa = (m & 1) == 0; /* the walk's edges alternate A, B, A, ... */
      const int bits = isa ? (mask[cur] & 3) : ((mask[cur] >> 2) & 3);
      if (!bits) { /* the start city is used up (never elsewhere: degrees are balanced) */
        for (int q = 0; q < plen; ++q) slot[2 * path[q] + (q & 1)] = -1;
        if (plen != 1) E->error = 1;
        break;
      }
      const int side = bits == 3 ? mh_below(key, (*ctr)++, 2) : bits >> 1; /* 0: predecessor, 1: successor */
      int nxt;
      if (isa) {
        nxt = side ? mh_eax_succa(E, cur) : mh_eax_preda(E, cur);
        mask[cur] &= ~(1 << side);
        mask[nxt] &= ~(1 << (1 - side));
      } else {
        nxt = side ? mh_eax_succb(E, cur) : mh_eax_predb(E, cur);
        mask[cur] &= ~(4 << side);
        mask[nxt] &= ~(4 << (1 - side));
      }
      const int pm = plen;
      path[plen++] = nxt;
      const int j = slot[2 * nxt + (pm & 1)];
      if (j < 0) {
        slot[2 * nxt + (pm & 1)] = pm;
        continue;
      }
      /* path[j .. pm - 1] closes an AB-cycle; store it starting with an A-edge */
      const int L = pm - j;
      int *out = E->cyc + total;
      if ((j & 1) == 0) {
        for (int q = 0; q < L; ++q) out[q] = path[j + q];
      } else {
        for (int q = 0; q < L - 1; ++q) out[q] = path[j + 1 + q];
        out[L - 1] = path[j];
      }
      total += L;
      E->cyc_start[++E->ncyc] = total;
      for (int q = j + 1; q < pm; ++q) slot[2 * path[q] + (q & 1)] = -1;
      plen = j + 1;
    }
  }
}

/* mh_eax_walk from A and B (one thread): the masks, the cities with unused edges, the walk.
 * Scratch: mask, verts n; path 2n + 2; slot 2n. */
__device__ void mh_eax_decompose(mh_eax_t *E, int *mask, int *verts, int *path, int *slot, unsigned long long key,
                                 unsigned long long *ctr) {
  int nv = 0;
  for (int v = 0; v < E->n; ++v) {
    mask[v] = mh_eax_mask(E, v);
    slot[2 * v] = slot[2 * v + 1] = -1;
    if (mask[v]) verts[nv++] = v;
  }
  mh_eax_walk(E, mask, verts, nv, path, slot, key, ctr);
}

__device__ void mh_eax_sort(int *a, int m) { /* heapsort, ascending */
  for (int pass = 0; pass < 2; ++pass) {
    for (int s = pass == 0 ? m / 2 - 1 : m - 1; s >= (pass == 0 ? 0 : 1); --s) {
      int i, size;
      if (pass == 0) { i = s; size = m; }
      else { const int t = a[0]; a[0] = a[s]; a[s] = t; i = 0; size = s; }
      for (;;) {
        const int l = 2 * i + 1;
        if (l >= size) break;
        const int c = l + 1 < size && a[l + 1] > a[l] ? l + 1 : l;
        if (a[i] >= a[c]) break;
        const int t = a[i]; a[i] = a[c]; a[c] = t;
        i = c;
      }
    }
  }
}

/* Segment s of A between consecutive cuts: positions seg_start(s) .. cut[s] (cyclic); segment 0
 * is the one that wraps past position n - 1. */
__device__ __forceinline__ int mh_eax_seg_of(const mh_eax_t *E, int p) {
  int lo = 0, hi = E->r;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (E->cut[mid] < p) lo = mid + 1;
    else hi = mid;
  }
  return lo == E->r ? 0 : lo;
}
__device__ __forceinline__ int mh_eax_seg_start(const mh_eax_t *E, int s) {
  const int p = E->cut[s == 0 ? E->r - 1 : s - 1] + 1;
  return p == E->n ? 0 : p;
}
__device__ __forceinline__ int mh_eax_seg_len(const mh_eax_t *E, int s) {
  const int d = E->cut[s] - E->cut[s == 0 ? E->r - 1 : s - 1];
  return d > 0 ? d : d + E->n;
}
__device__ __forceinline__ int mh_eax_find(mh_eax_t *E, int s) {
  while (E->par[s] != s) {
    E->par[s] = E->par[E->par[s]];
    s = E->par[s];
  }
  return s;
}

/* Apply the E-set (AB-cycle ids) to A: fill cut (sorted) and the slots; returns the length change. */
__device__ ll mh_eax_apply(mh_eax_t *E, const int *eset, int ne) {
  ll delta = 0;
  int r = 0;
  for (int e = 0; e < ne; ++e) {
    const int *v = E->cyc + E->cyc_start[eset[e]];
    const int L = E->cyc_start[eset[e] + 1] - E->cyc_start[eset[e]];
    for (int j = 0; j < L; j += 2) {
      const int x = v[j], y = v[j + 1];          /* A-edge, leaves */
      const int bx = v[j == 0 ? L - 1 : j - 1];  /* B-edge (bx, x) */
      const int by = v[j + 2 == L ? 0 : j + 2];  /* B-edge (y, by), comes in */
      if (mh_eax_succa(E, x) == y) {
        E->cut[r++] = E->posa[x];
        E->lnk_e[x] = bx;
        E->lnk_s[y] = by;
      } else {
        E->cut[r++] = E->posa[y];
        E->lnk_s[x] = bx;
        E->lnk_e[y] = by;
      }
      delta += MH_EDIST(E, y, by) - MH_EDIST(E, x, y);
    }
  }
  E->r = r;
  mh_eax_sort(E->cut, r);
  return delta;
}

/* Trace the sub-tours segment by segment: par (union-find), sz (cities), rep (a city) of each
 * root segment, roots[0 .. nsub - 1]. */
__device__ void mh_eax_subtours(mh_eax_t *E) {
  const int r = E->r;
  for (int s = 0; s < r; ++s) E->par[s] = -1;
  E->nsub = 0;
  for (int s = 0; s < r; ++s) {
    if (E->par[s] >= 0) continue;
    int t = s, fwd = 1, size = 0, steps = 0;
    do {
      E->par[t] = s;
      size += mh_eax_seg_len(E, t);
      const int e = fwd ? E->ta[E->cut[t]] : E->ta[mh_eax_seg_start(E, t)];
      const int q = fwd ? E->lnk_e[e] : E->lnk_s[e];
      const int pq = E->posa[q];
      t = mh_eax_seg_of(E, pq);
      fwd = pq == mh_eax_seg_start(E, t) && E->lnk_s[q] == e;
      if (++steps > r || (E->par[t] >= 0 && t != s)) { E->error = 2; return; }
    } while (t != s);
    E->sz[s] = size;
    E->rep[s] = E->ta[mh_eax_seg_start(E, s)];
    E->roots[E->nsub++] = s;
  }
}

struct mh_eax_move_t {
  ll gain; /* length change */
  int u, w, v, x;
};

/* Try joining u (in U, neighbours w0, w1 at distances du0, du1) with v outside U. */
__device__ __forceinline__ void mh_eax_try(const mh_eax_t *E, mh_eax_move_t *M, int u, int w0, int w1, ll du0,
                                           ll du1, int v) {
  const int x0 = mh_eax_nb0(E, v), x1 = mh_eax_nb1(E, v);
  const ll duv = MH_EDIST(E, u, v), dv0 = MH_EDIST(E, v, x0), dv1 = MH_EDIST(E, v, x1);
  for (int a = 0; a < 2; ++a) {
    const int w = a ? w1 : w0;
    const ll du = a ? du1 : du0;
    for (int b = 0; b < 2; ++b) {
      const int x = b ? x1 : x0;
      const ll g = duv + MH_EDIST(E, w, x) - du - (b ? dv1 : dv0);
      if (g < M->gain) { M->gain = g; M->u = u; M->w = w; M->v = v; M->x = x; }
    }
  }
}

/* Merge the sub-tours into one tour (step 4 of the file comment); returns the length change. */
__device__ ll mh_eax_merge(mh_eax_t *E) {
  const int n = E->n, k = E->k;
  ll delta = 0;
  while (E->nsub > 1) {
    int bi = 0;
    for (int i = 1; i < E->nsub; ++i)
      if (E->sz[E->roots[i]] < E->sz[E->roots[bi]]) bi = i;
    const int U = E->roots[bi];
    const int stamp = ++E->stamp;
    int cnt = 0, cur = E->rep[U], prev = mh_eax_nb0(E, cur);
    const int start = cur;
    do { /* list and label the cities of U */
      E->ubuf[cnt++] = cur;
      E->label[cur] = stamp;
      const int a0 = mh_eax_nb0(E, cur);
      const int nxt = a0 == prev ? mh_eax_nb1(E, cur) : a0;
      prev = cur;
      cur = nxt;
    } while (cur != start && cnt < n);
    if (cur != start || cnt != E->sz[U]) { E->error = 3; return delta; }
    mh_eax_move_t M;
    M.gain = MH_LL_MAX; M.u = -1; M.w = M.v = M.x = -1;
    for (int i = 0; i < cnt; ++i) {
      const int u = E->ubuf[i], w0 = mh_eax_nb0(E, u), w1 = mh_eax_nb1(E, u);
      const ll du0 = MH_EDIST(E, u, w0), du1 = MH_EDIST(E, u, w1);
      for (int q = 0; q < k; ++q) {
        const int v = E->neigh[(ll)u * k + q];
        if (E->label[v] != stamp) mh_eax_try(E, &M, u, w0, w1, du0, du1, v);
      }
    }
    if (M.u < 0) { /* no near city outside U: cities outside whose lists reach into U */
      E->wide++;
      for (int v = 0; v < n; ++v) {
        if (E->label[v] == stamp) continue;
        for (int q = 0; q < k; ++q) {
          const int u = E->neigh[(ll)v * k + q];
          if (E->label[u] != stamp) continue;
          const int w0 = mh_eax_nb0(E, u), w1 = mh_eax_nb1(E, u);
          mh_eax_try(E, &M, u, w0, w1, MH_EDIST(E, u, w0), MH_EDIST(E, u, w1), v);
        }
      }
    }
    if (M.u < 0) { /* last resort: every pair */
      for (int i = 0; i < cnt; ++i) {
        const int u = E->ubuf[i], w0 = mh_eax_nb0(E, u), w1 = mh_eax_nb1(E, u);
        const ll du0 = MH_EDIST(E, u, w0), du1 = MH_EDIST(E, u, w1);
        for (int v = 0; v < n; ++v)
          if (E->label[v] != stamp) mh_eax_try(E, &M, u, w0, w1, du0, du1, v);
      }
    }
    if (M.u < 0) { E->error = 4; return delta; }
    /* (u, w), (v, x) -> (u, v), (w, x) */
    mh_eax_relink(E, M.u, M.w, M.v);
    mh_eax_relink(E, M.w, M.u, M.x);
    mh_eax_relink(E, M.v, M.x, M.u);
    mh_eax_relink(E, M.x, M.v, M.w);
    int *t = E->touched + E->ntouched;
    t[0] = M.u; t[1] = M.w; t[2] = M.v; t[3] = M.x;
    E->ntouched += 4;
    E->merges++;
    delta += M.gain;
    const int V = mh_eax_find(E, mh_eax_seg_of(E, E->posa[M.v]));
    E->par[U] = V;
    E->sz[V] += E->sz[U];
    E->roots[bi] = E->roots[--E->nsub];
  }
  return delta;
}

/* One child from A and the E-set: returns its length minus A's. Leaves the slots set. */
__device__ ll mh_eax_child(mh_eax_t *E, const int *eset, int ne) {
  E->ntouched = 0;
  E->merges = 0;
  ll delta = mh_eax_apply(E, eset, ne);
  mh_eax_subtours(E);
  if (E->error) return delta;
  return delta + mh_eax_merge(E);
}

/* Back to A: clear the slots the last child set. */
__device__ void mh_eax_reset(mh_eax_t *E) {
  const int n = E->n;
  for (int i = 0; i < E->r; ++i) {
    const int p = E->cut[i];
    E->lnk_e[E->ta[p]] = -1;
    E->lnk_s[E->ta[mh_pos_next(p, n)]] = -1;
  }
  for (int i = 0; i < E->ntouched; ++i) E->lnk_s[E->touched[i]] = E->lnk_e[E->touched[i]] = -1;
  E->r = 0;
  E->ntouched = 0;
}

/* Population frequency of edge (a, b): row a of the table. */
__device__ __forceinline__ int mh_eax_freq_of(const int *fnb, const int *fcnt, const int *flen, int m, int a, int b) {
  const int *row = fnb + (ll)a * m;
  const int len = flen[a];
  for (int j = 0; j < len; ++j)
    if (row[j] == b) return fcnt[(ll)a * m + j];
  return 0;
}

/* The cities whose neighbours may differ from A's in the current child: the ends of the E-set's
 * cuts (i < 2r), then the cities the merges relinked (i < 2r + ntouched); may repeat. */
__device__ __forceinline__ int mh_eax_candidate(const mh_eax_t *E, int i) {
  if (i < 2 * E->r) {
    const int p = E->cut[i >> 1] + (i & 1);
    return E->ta[p == E->n ? 0 : p];
  }
  return E->touched[i - 2 * E->r];
}

/* Entropy change if the current child replaced A: every changed edge has both ends among the
 * candidate cities; each is counted once, from its smaller end. */
__device__ double mh_eax_entropy_delta(mh_eax_t *E, const int *fnb, const int *fcnt, const int *flen, int m,
                                       const double *h, int npop) {
  const int stamp = ++E->stamp;
  double dh = 0.0;
  const int total = 2 * E->r + E->ntouched;
  for (int i = 0; i < total; ++i) {
    const int c = mh_eax_candidate(E, i);
    if (E->label[c] == stamp) continue;
    E->label[c] = stamp;
    const int y0 = mh_eax_nb0(E, c), y1 = mh_eax_nb1(E, c);
    const int a0 = mh_eax_preda(E, c), a1 = mh_eax_succa(E, c);
    for (int j = 0; j < 2; ++j) {
      const int y = j ? y1 : y0, a = j ? a1 : a0;
      if (y != a0 && y != a1 && c < y) { /* edge of the child, not of A */
        const int f = mh_eax_freq_of(fnb, fcnt, flen, m, c, y);
        dh += h[mh_imin(f + 1, npop)] - h[f];
      }
      if (a != y0 && a != y1 && c < a) { /* edge of A, not of the child */
        const int f = mh_eax_freq_of(fnb, fcnt, flen, m, c, a);
        dh += h[mh_imax(f - 1, 0)] - h[f];
      }
    }
  }
  return dh;
}

/* One replacement at city c's row of the frequency table: c's two neighbours o[0..1] in a replaced
 * tour (-1: no tour) and w[0..1] in its replacement; edges that leave are counted down (a row
 * entry at 0 is removed, the last one takes its place), edges that come are counted up or
 * appended (a full row counts an overflow: more tours replaced than the population holds). */
__device__ void mh_eax_freq_entry(int *row, int *cnt, int *len_io, int m, const int *o, const int *w,
                                  long long *overflow) {
  int len = *len_io;
  for (int j = 0; j < 2; ++j) { /* edges that leave */
    const int v = o[j];
    if (v < 0 || v == w[0] || v == w[1] || (j == 1 && v == o[0])) continue;
    for (int q = 0; q < len; ++q) {
      if (row[q] != v) continue;
      if (--cnt[q] == 0) { --len; row[q] = row[len]; cnt[q] = cnt[len]; }
      break;
    }
  }
  for (int j = 0; j < 2; ++j) { /* edges that come */
    const int v = w[j];
    if (v < 0 || v == o[0] || v == o[1] || (j == 1 && v == w[0])) continue;
    int q = 0;
    while (q < len && row[q] != v) ++q;
    if (q < len) cnt[q]++;
    else if (len < m) { row[len] = v; cnt[len] = 1; ++len; }
    else atomicAdd((unsigned long long *)overflow, 1ULL);
  }
  *len_io = len;
}

extern "C" __global__ void tsp_eax_freq(const int *cities, const int *starts, const int *old_nb, const int *new_nb,
                                        int count, int m, int *freq_nb, int *freq_cnt, int *freq_len,
                                        long long *overflow) {
  const ll b = mh_block();
  if (mh_tid() != 0 || b >= count) return;
  const int c = cities[b];
  int len = freq_len[c];
  for (int i = starts[b]; i < starts[b + 1]; ++i)
    mh_eax_freq_entry(freq_nb + (ll)c * m, freq_cnt + (ll)c * m, &len, m, old_nb + 2LL * i, new_nb + 2LL * i,
                      overflow);
  freq_len[c] = len;
}

/* tsp_eax_freq_accept (the "fused" update): the children of the last tsp_eax launch (record = 1;
 * changes, info, child_len, len_a of its `count` blocks) that are shorter than their parent A
 * (child_len[b] < len_a[b], the island's replacement rule) replace A in the table, in one launch
 * that the host neither prepares nor reads back. Thread g of the grid (G threads in all) owns the
 * cities c with c % G == g and applies the recorded rows of its cities, block after block, row
 * after row: each row of the table gets its changes in the order tsp_eax_freq gets them from the
 * host's grouping by city (the same table, entry for entry), and no two threads share a row.
 * Every thread reads every recorded city, MH_FREQ_SCAN at a time (independent loads in flight). */
#define MH_FREQ_SCAN 8
extern "C" __global__ void tsp_eax_freq_accept(const int *changes, const long long *info, const long long *child_len,
                                               const long long *len_a, int count, int n, int m, int *freq_nb,
                                               int *freq_cnt, int *freq_len, long long *overflow) {
  const ll g = mh_block() * mh_nthreads() + mh_tid();
  const ll G = (ll)gridDim.x * gridDim.y * gridDim.z * mh_nthreads();
  if (g >= n) return;
  for (int b = 0; b < count; ++b) {
    if (child_len[b] >= len_a[b]) continue;
    const int *rows = changes + (ll)b * 5 * n;
    const int nch = (int)info[(ll)b * MH_EAX_NINFO + MH_EAX_CHANGED];
    for (int i0 = 0; i0 < nch; i0 += MH_FREQ_SCAN) {
      int city[MH_FREQ_SCAN];
      for (int u = 0; u < MH_FREQ_SCAN; ++u) city[u] = i0 + u < nch ? rows[5 * (i0 + u)] : -1;
      for (int u = 0; u < MH_FREQ_SCAN; ++u) {
        const int c = city[u];
        if (c < 0 || (G >= n ? c : c % G) != g) continue;
        int len = freq_len[c];
        const int *e = rows + 5 * (i0 + u);
        mh_eax_freq_entry(freq_nb + (ll)c * m, freq_cnt + (ll)c * m, &len, m, e + 1, e + 3, overflow);
        freq_len[c] = len;
      }
    }
  }
}

/* The edge frequencies of the population and the entropy table (select 1; see the header). */
struct mh_eax_freq_t {
  const int *nb, *cnt, *len;
  int m;
  const double *h;
  int npop;
};

/* The E-set of try t into eset; returns its size. Strategy 1: the t-th of the random order of
 * the AB-cycles; strategy 0: each AB-cycle with probability 1/2, one at random if none. */
__device__ int mh_eax_eset(int strategy, int t, const int *order, int ncyc, int *eset, unsigned long long key,
                           unsigned long long *ctr) {
  int ne = 0;
  if (strategy == 1) {
    eset[ne++] = order[t];
    return ne;
  }
  unsigned long long bits = 0;
  for (int i = 0; i < ncyc; ++i) {
    if ((i & 63) == 0) bits = mh_rand64(key, (*ctr)++);
    if (bits & 1ULL) eset[ne++] = i;
    bits >>= 1;
  }
  if (ne == 0) eset[ne++] = mh_below(key, (*ctr)++, ncyc);
  return ne;
}

/* Whether the child just built (length change delta) beats the best so far (length change best,
 * evaluation *best_eval): select 1, entropy-preserving (improving children by dL / -dH, ahead of
 * any other; else the shortest); select 0, the shortest. */
__device__ bool mh_eax_takes(mh_eax_t *E, const mh_eax_freq_t *F, int select, ll delta, ll best, double *best_eval) {
  if (select != 1) return delta < best;
  if (delta >= 0) return best >= 0 && delta < best;
  const double dh = mh_eax_entropy_delta(E, F->nb, F->cnt, F->len, F->m, F->h, F->npop);
  const double ev = dh < 0.0 ? (double)(-delta) / -dh : (double)(-delta) / 1e-9;
  const bool take = best >= 0 || ev > *best_eval;
  if (take) *best_eval = ev;
  return take;
}

/* The children of the pair: `tries` E-sets (distinct AB-cycles for strategy 1), each child built,
 * judged by mh_eax_takes and taken back. Returns how many were built; the best one's length change
 * in *best and its E-set in best_eset[0 .. *best_ne). */
__device__ int mh_eax_try_children(mh_eax_t *E, const mh_eax_freq_t *F, int strategy, int tries, int select,
                                   int *order, int *eset, int *best_eset, ll *best, int *best_ne,
                                   unsigned long long key, unsigned long long *ctr) {
  const int ncyc = E->ncyc;
  int m = tries, made = 0;
  double best_eval = 0.0;
  if (strategy == 1) {
    m = mh_imin(tries, ncyc);
    for (int i = 0; i < ncyc; ++i) order[i] = i;
    for (int i = 0; i < m; ++i) { /* partial Fisher-Yates: m distinct cycles */
      const int j = i + mh_below(key, (*ctr)++, ncyc - i);
      const int t = order[i]; order[i] = order[j]; order[j] = t;
    }
  }
  for (int t = 0; t < m; ++t) {
    const int ne = mh_eax_eset(strategy, t, order, ncyc, eset, key, ctr);
    const ll delta = mh_eax_child(E, eset, ne);
    if (E->error) break;
    made++;
    if (mh_eax_takes(E, F, select, delta, *best, &best_eval)) {
      *best = delta;
      *best_ne = ne;
      for (int i = 0; i < ne; ++i) best_eset[i] = eset[i];
    }
    mh_eax_reset(E);
  }
  return made;
}

/* The cities whose neighbours in the child differ from A's, as rows (city, A's two, the child's
 * two) of ch; returns how many. */
__device__ int mh_eax_changes(mh_eax_t *E, int *ch) {
  int nch = 0;
  const int stamp = ++E->stamp, total = 2 * E->r + E->ntouched;
  for (int i = 0; i < total; ++i) {
    const int v = mh_eax_candidate(E, i);
    if (E->label[v] == stamp) continue;
    E->label[v] = stamp;
    const int a0 = mh_eax_preda(E, v), a1 = mh_eax_succa(E, v);
    const int y0 = mh_eax_nb0(E, v), y1 = mh_eax_nb1(E, v);
    if ((y0 == a0 && y1 == a1) || (y0 == a1 && y1 == a0)) continue;
    int *e = ch + 5 * nch++;
    e[0] = v; e[1] = a0; e[2] = a1; e[3] = y0; e[4] = y1;
  }
  return nch;
}

/* Writes the child's tour into out by walking the slots from A's first city, in A's direction, and
 * its length into *len; returns whether the walk closed after n cities. */
__device__ bool mh_eax_write(const mh_eax_t *E, int *out, ll *len_out) {
  const int n = E->n;
  ll len = 0;
  int cur = E->ta[0], prev = mh_eax_nb0(E, cur);
  for (int i = 0; i < n; ++i) {
    out[i] = cur;
    const int a0 = mh_eax_nb0(E, cur);
    const int nxt = a0 == prev ? mh_eax_nb1(E, cur) : a0;
    len += MH_EDIST(E, cur, nxt);
    prev = cur;
    cur = nxt;
  }
  *len_out = len;
  return cur == E->ta[0];
}

/* Block c's scratch (MH_EAX_WORK ints): E's arrays, the order of the AB-cycles, the E-sets, and
 * the area the decomposition uses first and every child after it (returned). */
__device__ int *mh_eax_bind(mh_eax_t *E, const double *xy, const int *mat, const int *neigh, int n, int k,
                            const int *tours_a, const int *tours_b, int *work, ll c, int **order, int **eset,
                            int **best_eset) {
  E->xy = xy; E->mat = mat; E->neigh = neigh; E->n = n; E->k = k;
  E->ta = tours_a + c * n; E->tb = tours_b + c * n;
  int *w = work + c * MH_EAX_WORK(n);
  E->posa = w; E->posb = w + n; E->lnk_s = w + 2 * n; E->lnk_e = w + 3 * n; E->label = w + 4 * n;
  E->cyc = w + 5 * n;                     /* 2n */
  E->cyc_start = w + 7 * n;               /* n + 1 */
  *order = w + 8 * n + 1;                 /* n */
  *eset = w + 9 * n + 1;                  /* n */
  *best_eset = w + 10 * n + 1;            /* n */
  int *area = w + 11 * n + 1;             /* 10 n: decomposition, then one child at a time */
  E->cut = area; E->par = area + n; E->sz = area + 2 * n; E->rep = area + 3 * n; E->roots = area + 4 * n;
  E->ubuf = area + 5 * n; E->touched = area + 6 * n; /* 4 n */
  E->r = 0; E->nsub = 0; E->ntouched = 0; E->stamp = 0; E->merges = 0; E->error = 0; E->wide = 0;
  return area;
}

/* City i's entries before the decomposition: its positions in A and B, no slot set, no label. */
__device__ __forceinline__ void mh_eax_init_city(mh_eax_t *E, int i) {
  E->posa[E->ta[i]] = i;
  E->posb[E->tb[i]] = i;
  E->lnk_s[i] = E->lnk_e[i] = -1;
  E->label[i] = 0;
}

/* What a block reports of its pair (the info columns but the changes). */
struct mh_eax_out_t {
  int made, best_ne, best_sub, best_merges;
  ll best;
};

/* The children of the decomposed pair (mh_eax_try_children) and the best one rebuilt in the slots;
 * returns whether it was (else the slots of the last child are cleared and the child is A). */
__device__ int mh_eax_breed(mh_eax_t *E, const mh_eax_freq_t *F, int strategy, int tries, int select, int *order,
                            int *eset, int *best_eset, unsigned long long key, unsigned long long *ctr,
                            mh_eax_out_t *o) {
  const int ncyc = E->error ? 0 : E->ncyc;
  o->made = 0; o->best_ne = 0; o->best_sub = 0; o->best_merges = 0;
  o->best = MH_LL_MAX;
  if (ncyc > 0) {
    o->made = mh_eax_try_children(E, F, strategy, tries, select, order, eset, best_eset, &o->best, &o->best_ne, key,
                                  ctr);
    if (o->made > 0 && !E->error) {
      const ll again = mh_eax_child(E, best_eset, o->best_ne); /* deterministic: the same child */
      o->best_sub = E->merges + 1;
      o->best_merges = E->merges;
      if (again != o->best) E->error = 5;
    }
  }
  const int rebuilt = o->made > 0 && !E->error;
  if (!rebuilt) {
    mh_eax_reset(E);
    o->best = 0; o->best_ne = 0; o->best_sub = 0; o->best_merges = 0;
  }
  return rebuilt;
}

/* The child's checks (closes: its walk closed after n cities; len: its length from scratch) and
 * the block's outputs but the child and the changes. */
__device__ void mh_eax_finish(mh_eax_t *E, const mh_eax_out_t *o, bool closes, ll len, ll len_a, ll *child_len,
                              ll *inf) {
  if (!closes) E->error = 6;
  else if (len != len_a + o->best) E->error = 7; /* len_a is not A's length, or the incremental delta is off */
  *child_len = len;
  inf[MH_EAX_CYCLES] = E->ncyc;
  inf[MH_EAX_CHILDREN] = o->made;
  inf[MH_EAX_ESET] = o->best_ne;
  inf[MH_EAX_SUBTOURS] = o->best_sub;
  inf[MH_EAX_MERGES] = o->best_merges;
  inf[MH_EAX_DELTA] = o->best;
  inf[MH_EAX_WIDE] = E->wide;
  inf[MH_EAX_ERROR] = E->error;
}

extern "C" __global__ void tsp_eax(const double *xy, const int *mat, const int *neigh, int n, int k,
                                   const int *tours_a, const int *tours_b, int *children, long long *child_len,
                                   const long long *len_a, const unsigned long long *keys, long long *counters,
                                   int strategy, int tries, int *work, long long *info, int select,
                                   const int *freq_nb, const int *freq_cnt, const int *freq_len, int freq_m,
                                   const double *ent_h, int npop, int *changes, int record) {
  const ll c = mh_block();
  if (mh_tid() != 0) return;
  mh_eax_t E;
  int *order, *eset, *best_eset;
  int *area = mh_eax_bind(&E, xy, mat, neigh, n, k, tours_a, tours_b, work, c, &order, &eset, &best_eset);
  const unsigned long long key = keys[c];
  unsigned long long ctr = (unsigned long long)counters[c];
  for (int i = 0; i < n; ++i) mh_eax_init_city(&E, i);
  mh_eax_decompose(&E, area, area + n, area + 2 * n, area + 4 * n + 2, key, &ctr);
  const mh_eax_freq_t F = {freq_nb, freq_cnt, freq_len, freq_m, ent_h, npop};
  mh_eax_out_t o;
  const int rebuilt = mh_eax_breed(&E, &F, strategy, tries, select, order, eset, best_eset, key, &ctr, &o);
  if (!rebuilt)
    for (int i = 0; i < n; ++i) E.lnk_s[i] = E.lnk_e[i] = -1;
  ll *inf = info + c * MH_EAX_NINFO;
  if (record) inf[MH_EAX_CHANGED] = rebuilt ? mh_eax_changes(&E, changes + c * 5LL * n) : 0;
  ll len;
  const bool closes = mh_eax_write(&E, children + c * n, &len);
  mh_eax_finish(&E, &o, closes, len, len_a[c], child_len + c, inf);
  counters[c] = (ll)ctr;
}

/* ------------------------------------------------------------------------------------------------
 * tsp_eax_block (ILSParams.eax_kernel = "block"): tsp_eax's crossover, child for child, with the
 * O(n) work of a pair spread over its block: the set-up of the positions and slots, the masks of
 * G_AB and the list of cities with unused edges (an ordered compaction), the child copied run by
 * run of A (mh_eax_runs), each run's cities over the block, and its length summed by the block. Thread 0 does what is sequential and
 * small once G_AB is known (the AB-cycle walk, the E-sets, the sub-tours and their merges). The
 * same arguments as tsp_eax; any block shape (the CPU build: one thread). */

/* The child's walk (mh_eax_write's: from A's first city, in A's direction, n cities) as runs of A:
 * run j starts at position runs[3j], takes |runs[3j + 1]| cities forwards (> 0) or backwards
 * (< 0), and is written from runs[3j + 2] on. The cities whose slots are set (among the
 * candidates; their positions sorted in spos) are runs of one city; between them the walk follows
 * A. Returns the number of runs (at most n); *after: the city the walk reaches after its n-th (A's
 * first when the child is one tour). */
__device__ int mh_eax_runs(mh_eax_t *E, int *spos, int *runs, int *after) {
  const int n = E->n, stamp = ++E->stamp, total = 2 * E->r + E->ntouched;
  int S = 0;
  for (int i = 0; i < total; ++i) {
    const int v = mh_eax_candidate(E, i);
    if (E->label[v] == stamp) continue;
    E->label[v] = stamp;
    if (E->lnk_s[v] >= 0 || E->lnk_e[v] >= 0) spos[S++] = E->posa[v];
  }
  mh_eax_sort(spos, S);
  int cur = E->ta[0], prev = mh_eax_nb0(E, cur), i = 0, nr = 0;
  while (i < n) {
    int *run = runs + 3 * nr++;
    const int p = E->posa[cur];
    run[0] = p;
    run[2] = i;
    if (E->lnk_s[cur] >= 0 || E->lnk_e[cur] >= 0) { /* a slot set: one step, as mh_eax_write takes it */
      const int a0 = mh_eax_nb0(E, cur);
      const int nxt = a0 == prev ? mh_eax_nb1(E, cur) : a0;
      run[1] = 1;
      prev = cur;
      cur = nxt;
      ++i;
      continue;
    }
    const int fwd = mh_eax_preda(E, cur) == prev; /* along A, away from prev, up to the next set slot */
    int lo = 0, hi = S;                           /* the first sorted position above p */
    while (lo < hi) {
      const int mid = (lo + hi) >> 1;
      if (spos[mid] <= p) lo = mid + 1;
      else hi = mid;
    }
    int len = n;
    if (S > 0) len = fwd ? (lo < S ? spos[lo] : spos[0] + n) - p : p - (lo > 0 ? spos[lo - 1] : spos[S - 1] - n);
    len = mh_imin(len, n - i);
    run[1] = fwd ? len : -len;
    int last = fwd ? p + len - 1 : p - len + 1;
    last = last >= n ? last - n : last < 0 ? last + n : last;
    prev = E->ta[last];
    cur = E->ta[fwd ? mh_pos_next(last, n) : mh_pos_prev(last, n)];
    i += len;
  }
  *after = cur;
  return nr;
}

extern "C" __global__ void tsp_eax_block(const double *xy, const int *mat, const int *neigh, int n, int k,
                                         const int *tours_a, const int *tours_b, int *children, long long *child_len,
                                         const long long *len_a, const unsigned long long *keys, long long *counters,
                                         int strategy, int tries, int *work, long long *info, int select,
                                         const int *freq_nb, const int *freq_cnt, const int *freq_len, int freq_m,
                                         const double *ent_h, int npop, int *changes, int record) {
  __shared__ int s_nv, s_rebuilt, s_runs, s_after;
  const ll c = mh_block();
  const int t = mh_tid(), nt = mh_nthreads();
  mh_eax_t E;
  int *order, *eset, *best_eset;
  int *area = mh_eax_bind(&E, xy, mat, neigh, n, k, tours_a, tours_b, work, c, &order, &eset, &best_eset);
  int *mask = area, *verts = area + n, *path = area + 2 * n, *slot = area + 4 * n + 2, *counts = area + 7 * n;
  for (int i = t; i < n; i += nt) mh_eax_init_city(&E, i);
  __syncthreads();
  /* the masks and the cities with unused edges in city order: chunk counts, their scan, the lists */
  const int chunks = mh_imin(nt, n);
  const int lo = (int)((ll)n * t / chunks), hi = t < chunks ? (int)((ll)n * (t + 1) / chunks) : lo;
  int cnt = 0;
  for (int v = lo; v < hi; ++v) {
    mask[v] = mh_eax_mask(&E, v);
    slot[2 * v] = slot[2 * v + 1] = -1;
    cnt += mask[v] != 0;
  }
  if (t < chunks) counts[t] = cnt;
  __syncthreads();
  if (t == 0) {
    int sum = 0;
    for (int j = 0; j < chunks; ++j) {
      const int x = counts[j];
      counts[j] = sum;
      sum += x;
    }
    s_nv = sum;
  }
  __syncthreads();
  if (t < chunks) {
    int at = counts[t];
    for (int v = lo; v < hi; ++v)
      if (mask[v]) verts[at++] = v;
  }
  __syncthreads();
  const unsigned long long key = keys[c];
  unsigned long long ctr = (unsigned long long)counters[c];
  mh_eax_out_t o;
  if (t == 0) {
    mh_eax_walk(&E, mask, verts, s_nv, path, slot, key, &ctr);
    const mh_eax_freq_t F = {freq_nb, freq_cnt, freq_len, freq_m, ent_h, npop};
    s_rebuilt = mh_eax_breed(&E, &F, strategy, tries, select, order, eset, best_eset, key, &ctr, &o);
  }
  __syncthreads();
  if (!s_rebuilt)
    for (int i = t; i < n; i += nt) E.lnk_s[i] = E.lnk_e[i] = -1;
  __syncthreads();
  ll *inf = info + c * MH_EAX_NINFO;
  int *runs = area + n; /* 3n: the sub-tours' arrays, free once the child is built */
  if (t == 0) {
    if (record) inf[MH_EAX_CHANGED] = s_rebuilt ? mh_eax_changes(&E, changes + c * 5LL * n) : 0;
    s_runs = mh_eax_runs(&E, order, runs, &s_after);
  }
  __syncthreads();
  int *out = children + c * n;
  for (int j = 0; j < s_runs; ++j) { /* run by run, its cities spread over the block */
    const int *run = runs + 3 * j, len = run[1] > 0 ? run[1] : -run[1];
    for (int step = t; step < len; step += nt) {
      int q = run[1] > 0 ? run[0] + step : run[0] - step;
      q = q >= n ? q - n : q < 0 ? q + n : q;
      out[run[2] + step] = E.ta[q];
    }
  }
  __syncthreads();
  ll part = 0;
  for (int i = t; i < n; i += nt) part += MH_EDIST(&E, out[i], i + 1 < n ? out[i + 1] : s_after);
  const ll len = mh_block_sum(part);
  if (t == 0) {
    mh_eax_finish(&E, &o, s_after == E.ta[0], len, len_a[c], child_len + c, inf);
    counters[c] = (ll)ctr;
  }
}
