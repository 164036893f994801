/* mh_rng.cuh - counter-based random numbers shared by both builds.
 *
 * A stream is keyed by (seed, stream id), and the k-th draw of a stream is a pure function of
 * (key, k): SplitMix64 (Steele, Lea and Flood 2014) evaluated at state key + (k+1)*gamma. The
 * same seed therefore draws the same numbers on the CPU and on a GPU, whatever the thread
 * layout. metaheur/engine/rng.py is the same generator in numpy, for host code and tests.
 */
#ifndef MH_RNG_CUH
#define MH_RNG_CUH

#define MH_GOLDEN 0x9E3779B97F4A7C15ULL

__device__ __forceinline__ unsigned long long mh_mix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* Key of stream `stream` under `seed` (e.g. stream = search id). */
__device__ __forceinline__ unsigned long long mh_stream_key(unsigned long long seed, unsigned long long stream) {
  return mh_mix64(seed ^ mh_mix64(stream + 0x632BE59BD9B4E019ULL));
}

/* Draw number `counter` of the stream `key`. */
__device__ __forceinline__ unsigned long long mh_rand64(unsigned long long key, unsigned long long counter) {
  return mh_mix64(key + (counter + 1ULL) * MH_GOLDEN);
}

/* Uniform double in (0, 1]. */
__device__ __forceinline__ double mh_uniform(unsigned long long key, unsigned long long counter) {
  return (double)((mh_rand64(key, counter) >> 11) + 1ULL) * (1.0 / 9007199254740992.0);
}

/* Integer in [0, m) for 0 < m < 2^32 (multiply-shift on the high 32 bits). */
__device__ __forceinline__ int mh_below(unsigned long long key, unsigned long long counter, int m) {
  return (int)(((mh_rand64(key, counter) >> 32) * (unsigned long long)(unsigned int)m) >> 32);
}

#endif /* MH_RNG_CUH */
