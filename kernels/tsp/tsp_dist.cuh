/* tsp_dist.cuh - TSPLIB distances in both builds (Reinelt, TSPLIB95 documentation, sec. 2).
 *
 * MH_TSP_WEIGHT (a -D define chosen by the loader) picks the function at compile time:
 *   0 MATRIX   mat[a * n + b], an int32 n x n matrix (EXPLICIT, or any type when it fits)
 *   1 EUC_2D   nint(sqrt(dx^2 + dy^2)),  nint(x) = (int)(x + 0.5) = floor(x + 0.5)
 *   2 CEIL_2D  ceil(sqrt(dx^2 + dy^2))
 *   3 ATT      r = sqrt((dx^2 + dy^2) / 10), t = nint(r), t < r ? t + 1 : t
 *   4 GEO      xy holds latitude/longitude in radians (converted on the host with TSPLIB's
 *              PI = 3.141592 and truncated degrees); (int)(RRR * acos(...) + 1.0)
 *   5 MAN_2D   nint(|dx| + |dy|)
 *   6 MAX_2D   max(nint(|dx|), nint(|dy|))
 *   7 TWIN     the symmetric instance of 2h = n cities of an ATSP of h (Jonker and Volgenant 1983;
 *              problems/atsp/twin.py): mat holds the h x h block X[i * h + j] = d(i + h, j) (twin edge
 *              -M on its diagonal), then one value, the cost of any edge joining two cities or two
 *              twins; so the 2h x 2h matrix is never stored (a quarter of its memory)
 * Both builds are compiled without floating-point contraction (gcc -ffp-contract=off, NVRTC
 * --fmad=false), and sqrt is correctly rounded in IEEE double on both, so EUC_2D, CEIL_2D, ATT,
 * MAN_2D and MAX_2D agree bit for bit with numpy. GEO uses cos/acos: exact against the host's
 * libm on the CPU build; CUDA's may differ in the last bit, so GPU GEO runs use the matrix.
 */
#ifndef MH_TSP_DIST_CUH
#define MH_TSP_DIST_CUH

#ifndef MH_TSP_WEIGHT
#define MH_TSP_WEIGHT 0
#endif

/* Whether MH_TSP_WEIGHT computes distances from coordinates (xy) rather than from mat: then
 * mh_tsp_dist(c, mat, n, p, q) of any array c of coordinate pairs is the distance of the points
 * c[2 p ..] and c[2 q ..] (p == q: one city), which the kernels that cache coordinates in tour
 * order (tsp_moves.cu) use with positions for p and q. */
#define MH_TSP_COORDS (MH_TSP_WEIGHT != 0 && MH_TSP_WEIGHT != 7)

__device__ __forceinline__ int mh_tsp_dist(const double *__restrict__ xy, const int *__restrict__ mat, int n,
                                          int a, int b) {
#if MH_TSP_WEIGHT == 0
  return mat[(ll)a * n + b];
#elif MH_TSP_WEIGHT == 7
  const int h = n >> 1;
  if (a == b) return 0;
  if ((a >= h) == (b >= h)) return mat[(ll)h * h];
  return a >= h ? mat[(ll)(a - h) * h + b] : mat[(ll)(b - h) * h + a];
#else
  const double dx = xy[2 * a] - xy[2 * b], dy = xy[2 * a + 1] - xy[2 * b + 1];
#if MH_TSP_WEIGHT == 1
  return (int)(sqrt(dx * dx + dy * dy) + 0.5);
#elif MH_TSP_WEIGHT == 2
  return (int)ceil(sqrt(dx * dx + dy * dy));
#elif MH_TSP_WEIGHT == 3
  const double r = sqrt((dx * dx + dy * dy) / 10.0);
  const int t = (int)(r + 0.5);
  return t < r ? t + 1 : t;
#elif MH_TSP_WEIGHT == 4
  if (a == b) return 0;
  const double q1 = cos(xy[2 * a + 1] - xy[2 * b + 1]);
  const double q2 = cos(xy[2 * a] - xy[2 * b]);
  const double q3 = cos(xy[2 * a] + xy[2 * b]);
  double c = 0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3);
  c = c > 1.0 ? 1.0 : (c < -1.0 ? -1.0 : c);
  return (int)(6378.388 * acos(c) + 1.0);
#elif MH_TSP_WEIGHT == 5
  return (int)(fabs(dx) + fabs(dy) + 0.5);
#elif MH_TSP_WEIGHT == 6
  return mh_imax((int)(fabs(dx) + 0.5), (int)(fabs(dy) + 0.5));
#else
#error "unknown MH_TSP_WEIGHT"
#endif
#endif
}

#endif /* MH_TSP_DIST_CUH */
