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
 *    and __syncthreads() switches fibers round-robin, so kernels that meet at barriers run with
 *    the block shape a GPU would use. Slow; for tests only. Blocks run one after another.
 *
 * __shared__ variables become static thread-local storage: one copy per OS thread, which is per
 * block because an OS thread runs one block at a time (and all fibers of a block share it).
 * Not supported (no kernel may use them): dynamic `extern __shared__` memory, warp shuffles and
 * votes, __device__ global variables, textures.
 */
#ifndef MH_CPU_SHIM_H
#define MH_CPU_SHIM_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
};

static __thread mh_uint3 blockIdx;
static __thread mh_uint3 gridDim;

static inline void mh_set_block(const mh_launch_t *L, long long b) {
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
  long long barriers; /* barriers passed, to detect divergence */
};

static __thread mh_fiber_t *mh_fib;
static __thread int mh_nfib, mh_cur, mh_diverged;
static __thread ucontext_t mh_home;
static __thread void (*mh_body)(void *);
static __thread void *mh_body_arg;

static inline void mh_use_fiber(int k) {
  mh_cur = k;
  threadIdx.x = (unsigned int)(k % blockDim.x);
  threadIdx.y = (unsigned int)((k / blockDim.x) % blockDim.y);
  threadIdx.z = (unsigned int)(k / (blockDim.x * blockDim.y));
}

/* Switch from the current fiber to the next one that has not finished (round-robin). */
static inline void mh_yield(void) {
  int from = mh_cur;
  for (int step = 1; step <= mh_nfib; ++step) {
    int k = (from + step) % mh_nfib;
    if (!mh_fib[k].done) {
      if (k == from) return;
      mh_use_fiber(k);
      swapcontext(&mh_fib[from].ctx, &mh_fib[k].ctx);
      mh_use_fiber(from);
      return;
    }
  }
}

static inline void __syncthreads(void) {
  mh_fib[mh_cur].barriers++;
  /* A barrier some threads of the block never reach is a divergence bug. */
  for (int k = 0; k < mh_nfib; ++k)
    if (mh_fib[k].done) mh_diverged = 1;
  mh_yield();
}

static void mh_fiber_entry(void) {
  mh_body(mh_body_arg);
  mh_fib[mh_cur].done = 1;
  for (int k = 0; k < mh_nfib; ++k)
    if (!mh_fib[k].done && mh_fib[k].barriers != mh_fib[mh_cur].barriers) mh_diverged = 1;
  int next = -1;
  for (int step = 1; step <= mh_nfib; ++step) {
    int k = (mh_cur + step) % mh_nfib;
    if (!mh_fib[k].done) { next = k; break; }
  }
  if (next < 0) { setcontext(&mh_home); }
  int from = mh_cur;
  mh_use_fiber(next);
  swapcontext(&mh_fib[from].ctx, &mh_fib[next].ctx);
}

/* Run one block: every thread of blockDim as a fiber, starting with thread 0. */
static int mh_sim_block(const mh_launch_t *L, void (*body)(void *), void *arg) {
  blockDim.x = L->block[0]; blockDim.y = L->block[1]; blockDim.z = L->block[2];
  mh_nfib = (int)(L->block[0] * L->block[1] * L->block[2]);
  mh_fib = (mh_fiber_t *)calloc((size_t)mh_nfib, sizeof(mh_fiber_t));
  mh_body = body; mh_body_arg = arg; mh_diverged = 0;
  for (int k = 0; k < mh_nfib; ++k) {
    mh_fib[k].stack = (char *)malloc(MH_SIM_STACK);
    getcontext(&mh_fib[k].ctx);
    mh_fib[k].ctx.uc_stack.ss_sp = mh_fib[k].stack;
    mh_fib[k].ctx.uc_stack.ss_size = MH_SIM_STACK;
    mh_fib[k].ctx.uc_link = &mh_home;
    makecontext(&mh_fib[k].ctx, mh_fiber_entry, 0);
  }
  mh_use_fiber(0);
  swapcontext(&mh_home, &mh_fib[0].ctx);
  for (int k = 0; k < mh_nfib; ++k) free(mh_fib[k].stack);
  free(mh_fib);
  return mh_diverged;
}

template <typename F> static void mh_sim_call(void *f) { (*(F *)f)(); }

template <typename F> static void mh_run_grid_sim(mh_launch_t *L, F f) {
  const long long nb = (long long)L->grid[0] * L->grid[1] * L->grid[2];
  for (long long b = 0; b < nb; ++b) {
    mh_set_block(L, b);
    if (mh_sim_block(L, mh_sim_call<F>, (void *)&f)) L->error = 1;
  }
}

#define MH_RUN_GRID(L, CALL) mh_run_grid_sim((L), [&]() { CALL; })
#endif /* MH_SIM_THREADS */

#endif /* MH_CPU_SHIM_H */
