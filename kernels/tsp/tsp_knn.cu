/* tsp_knn.cu - k nearest neighbours of every city by Euclidean distance, with a uniform grid.
 *
 * One thread per city (any block shape). The cities are bucketed on the host into a gx x gy grid
 * of square cells of side `cell` (cell_of[c] = cy * gx + cx, cell_items = cities sorted by cell,
 * cell_start[g] .. cell_start[g + 1] the range of cell g). A city scans rings of cells around its
 * own, keeping the k best (squared distance, index) pairs in lexicographic order, and stops once
 * every unseen city is provably farther than its k-th neighbour (a city in ring r + 1 is at least
 * r cells away). The result is exact and deterministic: ties go to the smaller index.
 */
#include "mh_common.cuh"

#define MH_KNN_MAX 32

/* Keep (d, o) in the list bd/bi of the *count (at most cap) best pairs, sorted by (d, o). */
__device__ __forceinline__ void mh_knn_keep(double *bd, int *bi, int *count, int cap, double d, int o) {
  if (*count == cap && (d > bd[cap - 1] || (d == bd[cap - 1] && o > bi[cap - 1]))) return;
  int at = *count < cap ? (*count)++ : cap - 1;
  while (at > 0 && (bd[at - 1] > d || (bd[at - 1] == d && bi[at - 1] > o))) {
    bd[at] = bd[at - 1];
    bi[at] = bi[at - 1];
    --at;
  }
  bd[at] = d;
  bi[at] = o;
}

/* The ring scan of city c: its k nearest and, when q > 0, the q nearest in each quadrant; writes
 * the quadrant neighbours first, then the nearest others up to k, then -1 where too few. */
__device__ void mh_knn_scan(const double *xy, const int *cell_of, const int *cell_start, const int *cell_items,
                            int gx, int gy, double cell, int k, int q, ll c, int *out) {
  double best_d[MH_KNN_MAX], qd[4][MH_KNN_MAX / 4];
  int best_i[MH_KNN_MAX], qi[4][MH_KNN_MAX / 4], qn[4] = {0, 0, 0, 0};
  int found = 0;
  const double x = xy[2 * c], y = xy[2 * c + 1];
  const int cx = cell_of[c] % gx, cy = cell_of[c] / gx;
  const int rings = mh_imax(gx, gy);
  for (int r = 0; r <= rings; ++r) {
    for (int yy = cy - r; yy <= cy + r; ++yy) {
      if (yy < 0 || yy >= gy) continue;
      const bool edge_row = yy == cy - r || yy == cy + r;
      for (int xx = cx - r; xx <= cx + r; xx += (edge_row || r == 0) ? 1 : 2 * r) {
        if (xx < 0 || xx >= gx) continue;
        const int g = yy * gx + xx;
        for (int m = cell_start[g]; m < cell_start[g + 1]; ++m) {
          const int o = cell_items[m];
          if (o == c) continue;
          const double dx = xy[2 * o] - x, dy = xy[2 * o + 1] - y, d = dx * dx + dy * dy;
          mh_knn_keep(best_d, best_i, &found, k, d, o);
          if (q == 0 || (dx == 0.0 && dy == 0.0)) continue; /* a duplicate city has no quadrant */
          const int h = dx > 0 && dy >= 0 ? 0 : (dx <= 0 && dy > 0 ? 1 : (dx < 0 && dy <= 0 ? 2 : 3));
          mh_knn_keep(qd[h], qi[h], &qn[h], q, d, o);
        }
      }
    }
    /* a city in ring r + 1 is at least r cells away */
    const double reach = (double)r * cell * (1.0 - 1e-9), r2 = reach * reach;
    bool done = found == k && best_d[k - 1] < r2;
    for (int h = 0; h < 4 && q > 0 && done; ++h) done = qn[h] == q && qd[h][q - 1] < r2;
    if (done) break;
  }
  int m = 0;
  for (int h = 0; h < 4; ++h)
    for (int j = 0; j < qn[h]; ++j) out[c * k + m++] = qi[h][j];
  for (int j = 0; j < found && m < k; ++j) {
    bool dup = false;
    for (int z = 0; z < m && !dup; ++z) dup = out[c * k + z] == best_i[j];
    if (!dup) out[c * k + m++] = best_i[j];
  }
  while (m < k) out[c * k + m++] = -1;
}

extern "C" __global__ void tsp_knn_grid(const double *xy, const int *cell_of, const int *cell_start,
                                        const int *cell_items, int gx, int gy, double cell, int n, int k, int *out) {
  const ll c = mh_block() * mh_nthreads() + mh_tid();
  if (c < n) mh_knn_scan(xy, cell_of, cell_start, cell_items, gx, gy, cell, k, 0, c, out);
}

/* Quadrant neighbours (the QUADRANT candidate sets of Helsgaun's LKH, for clustered instances):
 * the q nearest cities in each of the four quadrants around a city (x > 0, y >= 0; x <= 0, y > 0;
 * x < 0, y <= 0; x >= 0, y < 0, relative to it), then the nearest others until there are k
 * (ties by index; the output is not sorted). The scan stops once the k nearest and every
 * quadrant's q nearest are final (or all cells are seen). q * 4 <= k. */
extern "C" __global__ void tsp_knn_quadrant(const double *xy, const int *cell_of, const int *cell_start,
                                            const int *cell_items, int gx, int gy, double cell, int n, int k, int q,
                                            int *out) {
  const ll c = mh_block() * mh_nthreads() + mh_tid();
  if (c < n) mh_knn_scan(xy, cell_of, cell_start, cell_items, gx, gy, cell, k, q, c, out);
}
