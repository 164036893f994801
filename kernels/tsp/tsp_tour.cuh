/* tsp_tour.cuh - a tour as the array t of its n cities and their positions pos (pos[t[i]] == i):
 * the cyclic neighbours of a city (those of a position, mh_pos_next/prev, are in mh_common.cuh).
 * Shared by the TSP kernels. */
#ifndef TSP_TOUR_CUH
#define TSP_TOUR_CUH

#include "mh_common.cuh"

/* The city after / before city c. */
__device__ __forceinline__ int mh_tour_succ(const int *t, const int *pos, int n, int c) {
  return t[mh_pos_next(pos[c], n)];
}
__device__ __forceinline__ int mh_tour_pred(const int *t, const int *pos, int n, int c) {
  return t[mh_pos_prev(pos[c], n)];
}

#endif /* TSP_TOUR_CUH */
