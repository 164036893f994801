/* mh_tour.cuh - a tour as the array t of its n cities and their positions pos (pos[t[i]] == i):
 * cyclic neighbours of a position and of a city. Shared by the TSP kernels. */
#ifndef MH_TOUR_CUH
#define MH_TOUR_CUH

__device__ __forceinline__ int mh_pos_next(int i, int n) { return i + 1 == n ? 0 : i + 1; }
__device__ __forceinline__ int mh_pos_prev(int i, int n) { return i == 0 ? n - 1 : i - 1; }

/* The city after / before city c. */
__device__ __forceinline__ int mh_tour_succ(const int *t, const int *pos, int n, int c) {
  return t[mh_pos_next(pos[c], n)];
}
__device__ __forceinline__ int mh_tour_pred(const int *t, const int *pos, int n, int c) {
  return t[mh_pos_prev(pos[c], n)];
}

#endif /* MH_TOUR_CUH */
