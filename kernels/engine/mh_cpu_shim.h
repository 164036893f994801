/* mh_cpu_shim.h - run CUDA-C kernels as plain C++ on the host (the "CPU build").
 *
 * The loader prepends this header when it compiles a kernel source with the host compiler
 * (never for NVRTC). It defines the CUDA qualifiers and built-ins the kernels use and the
 * launcher macro MH_RUN_GRID, which runs a launch's blocks as a loop spread over OpenMP threads.
 *
 * Two modes:
 *  - default ("fast"): every block runs with ONE thread. threadIdx is the constant (0,0,0) and
 *    blockDim the constant (1,1,1), so a block-stride loop
 *        for (k = threadIdx.x; k < m; k += blockDim.x)
 *    is a plain sequential loop the compiler can vectorise, and __syncthreads() costs nothing.
 *    The `block` of a launch is accepted and ignored: kernels must give the same result for any
 *    blockDim, which the simulation mode below lets the tests check without a GPU.
 *  - MH_SIM_THREADS ("sim"): each CUDA thread of a block is a fiber (ucontext) on one OS thread
 *    and __syncthreads() returns to a scheduler, so kernels that meet at barriers run with the
 *    block shape a GPU would use. Between two barriers the threads run one after another in the
 *    launch's `order` (forward, reverse or a seeded random permutation per phase), so a race
 *    between threads shows as results that differ between orders. Slow; for tests only. Blocks
 *    run one after another.
 *
 * __shared__ variables become static thread-local storage: one copy per OS thread, which is per
 * block because an OS thread runs one block at a time (and all fibers of a block share it).
 * Warp shuffles: __shfl_down_sync only, called by every thread of the block the same number of
 * times (the simulation exchanges values through a block barrier; a lane outside `mask` or the
 * block reads a poison value, where CUDA's result is undefined). Not supported (no kernel may use
 * them): dynamic `extern __shared__` memory, other shuffles and votes, __device__ global
 * variables, textures.
 */
#ifndef MH_CPU_SHIM_H
#define MH_CPU_SHIM_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MH_CPU 1
#define __global__
#define __device__ static inline
#define __host__
#define __forceinline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __shared__ static __thread
#define __launch_bounds__(...)
#define __threadfence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define __threadfence_block() __atomic_thread_fence(__ATOMIC_SEQ_CST)

struct mh_uint3 { unsigned int x, y, z; };
typedef mh_uint3 uint3;
typedef mh_uint3 dim3;

/* Launch description passed by the loader (ctypes): grid and block shape, OpenMP threads. */
struct mh_launch_t {
  unsigned int grid[3];
  unsigned int block[3];
  int threads;       /* OpenMP threads for the block loop (1 = sequential) */
  int error;         /* out: non-zero when a simulated block diverged at a barrier */
  int order;         /* sim mode: thread order between barriers (0 forward, 1 reverse, >= 2 random) */
  double deadline;   /* CLOCK_MONOTONIC seconds at which the launch's searches stop (0: none) */
  const volatile int *stop; /* the run's stop flag (non-zero: stop now), or null */
};

static __thread mh_uint3 blockIdx;
static __thread mh_uint3 gridDim;
static __thread const mh_launch_t *mh_launch_; /* the launch of this thread's block */

static inline void mh_set_block(const mh_launch_t *L, long long b) {
  mh_launch_ = L;
  gridDim.x = L->grid[0]; gridDim.y = L->grid[1]; gridDim.z = L->grid[2];
  blockIdx.x = (unsigned int)(b % L->grid[0]);
  blockIdx.y = (unsigned int)((b / L->grid[0]) % L->grid[1]);
  blockIdx.z = (unsigned int)(b / ((long long)L->grid[0] * L->grid[1]));
}

/* ---------------------------------------------------------------- atomics (device memory) */
static inline int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline unsigned int atomicAdd(unsigned int *p, unsigned int v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
static inline int atomicMin(int *p, int v) {
  int old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
  return old;
}
static inline long long atomicMin(long long *p, long long v) {
  long long old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
  return old;
}
static inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v) {
  unsigned long long old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
  return old;
}
static inline int atomicMax(int *p, int v) {
  int old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v > old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
  return old;
}
static inline int atomicCAS(int *p, int cmp, int v) {
  __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return cmp;
}
static inline int atomicExch(int *p, int v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }

#ifndef MH_SIM_THREADS
/* ================================================================ fast mode: one thread a block */
static const mh_uint3 threadIdx = {0u, 0u, 0u};
static const mh_uint3 blockDim = {1u, 1u, 1u};
#define __syncthreads() ((void)0)
/* one lane: every source lane is past the warp's width, which returns the caller's own value */
template <typename T> static inline T __shfl_down_sync(unsigned, T v, unsigned) { return v; }

#ifdef _OPENMP
#define MH_RUN_GRID(L, CALL)                                                                   \
  do {                                                                                        \
    const long long mh_nb_ = (long long)(L)->grid[0] * (L)->grid[1] * (L)->grid[2];            \
    const int mh_nt_ = (L)->threads < mh_nb_ ? ((L)->threads > 1 ? (L)->threads : 1) : (int)mh_nb_; \
    _Pragma("omp parallel for schedule(dynamic, 1) num_threads(mh_nt_) if (mh_nt_ > 1)")      \
    for (long long mh_b_ = 0; mh_b_ < mh_nb_; ++mh_b_) { mh_set_block((L), mh_b_); CALL; }     \
  } while (0)
#else
#define MH_RUN_GRID(L, CALL)                                                                   \
  do {                                                                                        \
    const long long mh_nb_ = (long long)(L)->grid[0] * (L)->grid[1] * (L)->grid[2];            \
    for (long long mh_b_ = 0; mh_b_ < mh_nb_; ++mh_b_) { mh_set_block((L), mh_b_); CALL; }     \
  } while (0)
#endif

#else
/* ================================================================ sim mode: fibers per thread */
#include <ucontext.h>

#define MH_SIM_STACK (256 * 1024)

static __thread mh_uint3 threadIdx;
static __thread mh_uint3 blockDim;

struct mh_fiber_t {
  ucontext_t ctx;
  char *stack;
  int done;
};

static __thread mh_fiber_t *mh_fib;
static __thread int mh_nfib, mh_cur;
static __thread ucontext_t mh_home;
static __thread void (*mh_body)(void *);
static __thread void *mh_body_arg;

static inline void mh_use_fiber(int k) {
  mh_cur = k;
  threadIdx.x = (unsigned int)(k % blockDim.x);
  threadIdx.y = (unsigned int)((k / blockDim.x) % blockDim.y);
  threadIdx.z = (unsigned int)(k / (blockDim.x * blockDim.y));
}

/* A barrier: the fiber hands control back to the block's scheduler (mh_sim_block). */
static inline void __syncthreads(void) { swapcontext(&mh_fib[mh_cur].ctx, &mh_home); }

#define MH_SHFL_POISON 0x5a5a5a5a5a5a5a5aULL
static __thread unsigned long long mh_shfl_slot[1024];

/* The lane `off` above the caller in its warp gives its `v`: every thread publishes, a barrier,
 * every thread reads, a barrier (so the slots are free for the next exchange). */
template <typename T> static inline T __shfl_down_sync(unsigned mask, T v, unsigned off) {
  static_assert(sizeof(T) <= sizeof(unsigned long long), "shuffle of a type wider than 64 bits");
  memcpy(&mh_shfl_slot[mh_cur], &v, sizeof(T));
  __syncthreads();
  const unsigned lane = (unsigned)mh_cur % 32u, src = lane + off;
  T out = v;
  if (src < 32u) {
    const unsigned long long poison = MH_SHFL_POISON;
    const bool present = (mask >> src) & 1u && mh_cur + (int)off < mh_nfib;
    memcpy(&out, present ? &mh_shfl_slot[mh_cur + off] : &poison, sizeof(T));
  }
  __syncthreads();
  return out;
}

static void mh_fiber_entry(void) {
  mh_body(mh_body_arg);
  mh_fib[mh_cur].done = 1; /* uc_link returns to the scheduler */
}

/* SplitMix64 finaliser: the random thread orders of the simulation. */
static inline unsigned long long mh_sim_mix(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* The order in which the threads of a block run the code between two barriers (phase `phase` of
 * block `block`): order 0 = 0, 1, ..., nt-1; order 1 = the reverse; order >= 2 = a random
 * permutation drawn from (order, block, phase). A kernel whose threads race (one reads or writes
 * shared or global memory another writes between the same two barriers) gives results that
 * depend on this order. */
static void mh_sim_order(int *order_out, int nt, int order, long long block, long long phase) {
  for (int k = 0; k < nt; ++k) order_out[k] = order == 1 ? nt - 1 - k : k;
  if (order < 2) return;
  const unsigned long long seed = mh_sim_mix(mh_sim_mix((unsigned long long)order) ^ (unsigned long long)block) ^
                                  mh_sim_mix((unsigned long long)phase + 0x9e3779b97f4a7c15ULL);
  for (int k = nt - 1; k > 0; --k) {
    const int j = (int)(mh_sim_mix(seed + (unsigned long long)k) % (unsigned long long)(k + 1));
    const int t = order_out[k]; order_out[k] = order_out[j]; order_out[j] = t;
  }
}

/* Run one block: every thread of blockDim as a fiber. Each phase runs every live thread, in the
 * launch's order, up to its next barrier or its end. A phase after which some threads have
 * finished while others wait at a barrier is a divergence bug (returns 1). */
static int mh_sim_block(const mh_launch_t *L, long long block, void (*body)(void *), void *arg) {
  blockDim.x = L->block[0]; blockDim.y = L->block[1]; blockDim.z = L->block[2];
  mh_nfib = (int)(L->block[0] * L->block[1] * L->block[2]);
  mh_fib = (mh_fiber_t *)calloc((size_t)mh_nfib, sizeof(mh_fiber_t));
  int *order = (int *)malloc(sizeof(int) * (size_t)mh_nfib);
  mh_body = body; mh_body_arg = arg;
  for (int k = 0; k < mh_nfib; ++k) {
    mh_fib[k].stack = (char *)malloc(MH_SIM_STACK);
    getcontext(&mh_fib[k].ctx);
    mh_fib[k].ctx.uc_stack.ss_sp = mh_fib[k].stack;
    mh_fib[k].ctx.uc_stack.ss_size = MH_SIM_STACK;
    mh_fib[k].ctx.uc_link = &mh_home;
    makecontext(&mh_fib[k].ctx, mh_fiber_entry, 0);
  }
  int diverged = 0, live = mh_nfib;
  for (long long phase = 0; live > 0; ++phase) {
    mh_sim_order(order, mh_nfib, L->order, block, phase);
    for (int q = 0; q < mh_nfib; ++q) {
      const int k = order[q];
      if (mh_fib[k].done) continue;
      mh_use_fiber(k);
      swapcontext(&mh_home, &mh_fib[k].ctx);
    }
    live = 0;
    for (int k = 0; k < mh_nfib; ++k) live += !mh_fib[k].done;
    if (live > 0 && live < mh_nfib) diverged = 1;
  }
  for (int k = 0; k < mh_nfib; ++k) free(mh_fib[k].stack);
  free(order);
  free(mh_fib);
  return diverged;
}

template <typename F> static void mh_sim_call(void *f) { (*(F *)f)(); }

template <typename F> static void mh_run_grid_sim(mh_launch_t *L, F f) {
  const long long nb = (long long)L->grid[0] * L->grid[1] * L->grid[2];
  for (long long b = 0; b < nb; ++b) {
    mh_set_block(L, b);
    if (mh_sim_block(L, b, mh_sim_call<F>, (void *)&f)) L->error = 1;
  }
}

#define MH_RUN_GRID(L, CALL) mh_run_grid_sim((L), [&]() { CALL; })
#endif /* MH_SIM_THREADS */

/* Whether this block's search should stop now: the run's stop flag is up or the launch's deadline
 * has passed (docs/long-runs.md). Searches call it between steps (an iteration, a descent's row),
 * where what they hold is a whole solution with its exact cost, so a long launch ends within one
 * step of a time limit or a Ctrl-C. The threads of a simulated block must agree on every branch,
 * so the simulation (tests) never stops early; nor does a GPU (mh_common.cuh). */
static inline bool mh_time_up(void) {
#ifdef MH_SIM_THREADS
  return false;
#else
  const mh_launch_t *L = mh_launch_;
  if (L == NULL) return false;
  if (L->stop != NULL && *L->stop) return true;
  if (L->deadline <= 0.0) return false;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec >= L->deadline;
#endif
}

#endif /* MH_CPU_SHIM_H */
