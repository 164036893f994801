/* tsp_construct.cu - greedy-edge start tours (Johnson and McGeoch 1997: the best start for
 * 2-opt/3-opt style local search). One block, thread 0.
 *
 * edges: m candidate edges (from the neighbour lists), sorted by length then index. An edge is
 * taken when both cities still have degree < 2 and it closes no cycle (union-find). The
 * resulting paths are then chained: from the end of one path to the nearest free end of
 * another (first among the end city's neighbours, else by a scan of all free ends).
 * work: 6n ints. tour_out: n cities.
 */
#include "mh_common.cuh"
#include "tsp_dist.cuh"

__device__ __forceinline__ int mh_find(int *parent, int x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

extern "C" __global__ void tsp_greedy(const int *edges, long long m, const double *xy, const int *mat,
                                      const int *neigh, int n, int k, int *work, int *tour_out) {
  if (mh_tid() != 0 || mh_block() != 0) return;
  int *deg = work, *adj = work + n, *parent = work + 3 * n, *seen = work + 4 * n, *ends = work + 5 * n;
  for (int i = 0; i < n; ++i) { deg[i] = 0; adj[2 * i] = adj[2 * i + 1] = -1; parent[i] = i; seen[i] = 0; }
  for (ll e = 0; e < m; ++e) {
    const int i = edges[2 * e], j = edges[2 * e + 1];
    if (deg[i] >= 2 || deg[j] >= 2) continue;
    const int ri = mh_find(parent, i), rj = mh_find(parent, j);
    if (ri == rj) continue;
    parent[ri] = rj;
    adj[2 * i + deg[i]++] = j;
    adj[2 * j + deg[j]++] = i;
  }
  int nends = 0;
  for (int i = 0; i < n; ++i)
    if (deg[i] < 2) ends[nends++] = i;
  int cur = nends > 0 ? ends[0] : 0, len = 0;
  while (len < n) {
    /* walk the path from its free end `cur` */
    int prev = -1;
    while (cur >= 0) {
      tour_out[len++] = cur;
      seen[cur] = 1;
      int next = -1;
      for (int q = 0; q < 2; ++q) {
        const int c = adj[2 * cur + q];
        if (c >= 0 && c != prev && !seen[c]) next = c;
      }
      prev = cur;
      cur = next;
    }
    if (len == n) break;
    /* jump from the path's last city to the nearest free end of another path */
    const int last = prev;
    int best = -1;
    for (int q = 0; q < k && best < 0; ++q) {
      const int c = neigh[(ll)last * k + q];
      if (!seen[c] && deg[c] < 2) best = c;
    }
    if (best < 0) {
      ll bestd = MH_LL_MAX;
      int w = 0;
      for (int q = 0; q < nends; ++q) {
        const int c = ends[q];
        if (seen[c]) continue;
        ends[w++] = c; /* compact the list of free ends as we go */
        const ll d = mh_tsp_dist(xy, mat, n, last, c);
        if (d < bestd) { bestd = d; best = c; }
      }
      nends = w;
    }
    cur = best;
  }
}
