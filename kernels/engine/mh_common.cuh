/* mh_common.cuh - helpers shared by every kernel, in both builds (NVRTC and the CPU shim).
 *
 * Rules for kernel sources (see kernels/engine/mh_cpu_shim.h for why):
 *  - plain `extern "C" __global__ void` kernels whose parameters use only the C types
 *    char, unsigned char, short, unsigned short, int, unsigned int, long long,
 *    unsigned long long, float, double and pointers to them (the loader checks arguments
 *    against these signatures);
 *  - block-stride loops (`for (k = threadIdx.x; k < m; k += blockDim.x)`) and shared-memory
 *    reductions through the helpers below, so that one thread per block (the CPU build) and
 *    hundreds (a GPU) give the same result;
 *  - no C++ standard headers, no dynamic shared memory, no warp intrinsics but __shfl_down_sync
 *    in block-uniform code (the CPU simulation exchanges through a block barrier).
 */
#ifndef MH_COMMON_CUH
#define MH_COMMON_CUH

#define MH_MAX_BLOCK 1024          /* largest block the reductions support */
#define MH_LL_MAX 0x7fffffffffffffffLL

typedef long long ll;

__device__ __forceinline__ int mh_imin(int a, int b) { return a < b ? a : b; }
__device__ __forceinline__ int mh_imax(int a, int b) { return a > b ? a : b; }
__device__ __forceinline__ ll mh_llmin(ll a, ll b) { return a < b ? a : b; }

/* Flat thread index and block size (threads of a block numbered x fastest). */
__device__ __forceinline__ int mh_tid(void) {
  return (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
}
__device__ __forceinline__ int mh_nthreads(void) { return (int)(blockDim.x * blockDim.y * blockDim.z); }

#ifndef MH_CPU
/* A GPU launch is never cut short (its length is the launch pacer's, metaheur/search/batch.py);
 * the CPU build's mh_time_up stops a search at a deadline or the run's stop flag (mh_cpu_shim.h). */
__device__ __forceinline__ bool mh_time_up(void) { return false; }
#endif
__device__ __forceinline__ long long mh_block(void) {
  return (long long)blockIdx.x + (long long)gridDim.x * ((long long)blockIdx.y + (long long)gridDim.y * blockIdx.z);
}

/* Lexicographic (key, index) minimum: smaller key wins, ties go to the smaller index, so the
 * result does not depend on how the work was split between threads. */
__device__ __forceinline__ void mh_argmin_step(ll *key, ll *idx, ll k2, ll i2) {
  if (k2 < *key || (k2 == *key && i2 < *idx)) { *key = k2; *idx = i2; }
}

/* Warp-wide lexicographic argmin: lane 0 of each warp gets its warp's (the last warp may be
 * partial: `width` lanes). Shuffles only, called by every thread of the block (block-uniform). */
__device__ __forceinline__ void mh_warp_argmin(ll *key, ll *idx) {
  const int t = mh_tid(), lane = t & 31, width = mh_imin(32, mh_nthreads() - (t & ~31));
  const unsigned mask = width == 32 ? 0xffffffffu : (1u << width) - 1u;
  for (int off = 16; off > 0; off >>= 1) {
    const ll k2 = __shfl_down_sync(mask, *key, off), i2 = __shfl_down_sync(mask, *idx, off);
    if (lane + off < width) mh_argmin_step(key, idx, k2, i2);
  }
}

/* Block-wide lexicographic argmin of each thread's (key, idx); every thread gets the result.
 * Each warp combines its lanes with shuffles (mh_warp_argmin), lane 0 of each warp publishes its
 * warp's result, every thread combines those: two barriers, where a shared-memory tree needs
 * log2(threads) + 2. The minimum is unique, so the result is the same for any split. Contains
 * barriers, so every thread of the block must call it. */
__device__ __forceinline__ void mh_block_argmin(ll *key, ll *idx) {
  __shared__ ll s_key[MH_MAX_BLOCK / 32];
  __shared__ ll s_idx[MH_MAX_BLOCK / 32];
  const int t = mh_tid(), nt = mh_nthreads();
  if (nt == 1) return;
  const int lane = t & 31, warp = t >> 5;
  mh_warp_argmin(key, idx);
  if (lane == 0) { s_key[warp] = *key; s_idx[warp] = *idx; }
  __syncthreads();
  *key = s_key[0]; *idx = s_idx[0];
  for (int w = 1; w < (nt + 31) / 32; ++w) mh_argmin_step(key, idx, s_key[w], s_idx[w]);
  __syncthreads();
}

/* Block-wide sum of a long long; every thread gets the result. */
__device__ __forceinline__ ll mh_block_sum(ll v) {
  __shared__ ll s_sum[MH_MAX_BLOCK];
  const int t = mh_tid(), nt = mh_nthreads();
  if (nt == 1) return v;
  s_sum[t] = v;
  __syncthreads();
  for (int half = 1; half < nt; half <<= 1) {
    if ((t & (2 * half - 1)) == 0 && t + half < nt) s_sum[t] += s_sum[t + half];
    __syncthreads();
  }
  v = s_sum[0];
  __syncthreads();
  return v;
}

/* Cyclic positions of a permutation read as a cycle (a tour, the order crossover's segments). */
__device__ __forceinline__ int mh_pos_next(int i, int n) { return i + 1 == n ? 0 : i + 1; }
__device__ __forceinline__ int mh_pos_prev(int i, int n) { return i == 0 ? n - 1 : i - 1; }

#endif /* MH_COMMON_CUH */
