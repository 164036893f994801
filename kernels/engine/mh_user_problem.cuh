/* mh_user_problem.cuh - stand-in for the header the engine generates for a user's problem
 * (metaheur/engine/user_source.py substitutes its own text for every #include of this name).
 * This file only lets the generic kernels (kernels/engine/perm_*.cu) compile on their own, for the
 * compile and resource checks: a toy problem (value = sum of |perm[i] - i|) that defines every
 * function of the device contract (docs/problems.md), so every branch of the kernels is built.
 */
#ifndef MH_USER_PROBLEM_CUH
#define MH_USER_PROBLEM_CUH
#define MH_SENSE (1)
#define MH_USER_HAS_COST 1
#define MH_USER_HAS_SWAP_DELTA 1
#define MH_USER_HAS_INSERT_DELTA 1
#define MH_USER_HAS_REVERSE_DELTA 1
#define MH_USER_HAS_SWAP_ROW 1
#define MH_USER_HAS_INSERT_ROW 1
#define MH_USER_HAS_PARTIAL_INSERT_ROW 1
#define MH_USER_HAS_PREPARE 1
#define MH_USER_HAS_UPDATE_SWAP 1
#define MH_USER_HAS_UPDATE_INSERT 1
#define MH_USER_HAS_UPDATE_REVERSE 1
#define MH_USER_HAS_SEGMENT_DELTA 1
#define MH_USER_HAS_REVERSE_ROW 1
#define MH_USER_HAS_SEGMENT_ROW 1
#define MH_USER_HAS_CANDIDATES 1
#define MH_SEG_K 3
#define MH_SEG_REV 1
namespace user {
struct Data { int n; const int *mh_cand; long long mh_ck; long long *scratch; };
typedef ll cache_t;
__device__ ll cost(const Data &d, const int *perm) {
  ll c = 0;
  for (int i = 0; i < d.n; ++i) c += perm[i] > i ? perm[i] - i : i - perm[i];
  return c;
}
__device__ ll swap_delta(const Data &d, const int *perm, const cache_t *cache, int i, int j) { return cache[0] * 0; }
__device__ ll insert_delta(const Data &d, const int *perm, const cache_t *cache, int i, int j) { return 0; }
__device__ ll reverse_delta(const Data &d, const int *perm, const cache_t *cache, int i, int j) { return 0; }
__device__ ll segment_delta(const Data &d, const int *perm, const cache_t *cache, int i, int len, int j, int rev) {
  return 0;
}
__device__ void swap_row(const Data &d, const int *perm, const cache_t *cache, int i, ll *out, ll *work) {
  for (int j = mh_tid(); j < d.n; j += mh_nthreads()) out[j] = 0;
}
__device__ void insert_row(const Data &d, const int *perm, const cache_t *cache, int i, ll *out, ll *work) {
  for (int j = mh_tid(); j < d.n; j += mh_nthreads()) out[j] = 0;
}
__device__ void reverse_row(const Data &d, const int *perm, const cache_t *cache, int i, ll *out, ll *work) {
  for (int j = mh_tid(); j < d.n; j += mh_nthreads()) out[j] = 0;
}
__device__ void segment_row(const Data &d, const int *perm, const cache_t *cache, int i, int len, int rev, ll *out,
                            ll *work) {
  for (int j = mh_tid(); j < d.n; j += mh_nthreads()) out[j] = 0;
}
__device__ void partial_insert_row(const Data &d, const int *seq, int len, int elem, ll *out, ll *work) {
  for (int k = mh_tid(); k <= len; k += mh_nthreads()) out[k] = k;
}
__device__ void prepare(const Data &d, const int *perm, cache_t *cache, ll *work) {
  if (mh_tid() == 0) cache[0] = 0;
}
__device__ void update_swap(const Data &d, const int *perm, cache_t *cache, int i, int j, ll *work) {}
__device__ void update_insert(const Data &d, const int *perm, cache_t *cache, int i, int j, ll *work) {}
__device__ void update_reverse(const Data &d, const int *perm, cache_t *cache, int i, int j, ll *work) {}
}  // namespace user
#endif /* MH_USER_PROBLEM_CUH */
