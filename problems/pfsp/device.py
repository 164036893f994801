"""The flow shop's device code (the device contract of docs/problems.md), one source for both builds.

Data: ``p`` the job-major n x m times (``p[j * m + h]``), ``m`` the number of machines.

* ``cost``: the makespan, by the recurrence over jobs with one completion time per machine
  (a local array of at most :data:`MAX_MACHINES`).
* ``insert_row`` and ``partial_insert_row``: Taillard's acceleration (Taillard 1990, "Some efficient
  heuristic methods for the flow shop sequencing problem"): the heads ``e`` (earliest completion of
  the first k jobs on each machine) and tails ``q`` (the time from each job's start on each machine
  to the end) of the sequence without the inserted job, then every insertion position in O(m):
  ``f_h = max(f_{h-1}, e[pos-1][h]) + p[job][h]`` and the makespan ``max_h f_h + q[pos][h]``; all
  positions in O(nm). One thread alone computes the heads row by row, then the tails; a block
  computes them by anti-diagonal wavefronts (heads and tails at once, len + m - 1 barriers), one
  warp (the engine's ``MH_PS_WARP`` kernels, ``PermSearchParams(kernel="warp")``) by the same
  wavefronts with warp shuffles and no barrier a diagonal, then the positions are shared
  block-stride: the same integers every way.
* ``partial_insert_tie``: Fernandez-Viagas and Framinan's tie-breaking (Comput. Oper. Res. 45,
  2014): of the positions of equal makespan, the one whose insertion makes the least idle time
  on machines 2..m, counted as ``f_h - e[pos-1][h] - p[elem][h]`` (the inserted job) at the last
  position and as ``f'_h - e[pos][h] - p[elem][h]`` elsewhere, ``f'`` the new completion times of
  the job put back, O(m) a position from the heads of ``partial_insert_row``.
* ``swap_delta`` and ``insert_delta``: the makespan of the moved sequence (read through the move,
  without a copy) minus the makespan, O(nm).

``work`` holds the heads and tails: ``2 n m`` int64 per search (int32 cells, half of it, with the
warp kernels where the declared bound keeps every makespan below 2^29).
"""

from __future__ import annotations

MAX_MACHINES = 256

DEVICE_CODE = r"""
#define PFSP_MAX_MACHINES @MAX_MACHINES@

/* The job at position k of perm after move (kind, i, j): 0 none, 1 swap i < j, 2 insert i -> j. */
__device__ __forceinline__ int pfsp_moved_job(const int *perm, int kind, int i, int j, int k) {
  if (kind == 1) return perm[k == i ? j : (k == j ? i : k)];
  if (kind == 2) {
    if (k == j) return perm[i];
    if (i < j && k >= i && k < j) return perm[k + 1];
    if (i > j && k > j && k <= i) return perm[k - 1];
  }
  return perm[k];
}

__device__ ll pfsp_makespan(const Data &d, const int *perm, int kind, int i, int j) {
  const int m = (int)d.m;
  ll c[PFSP_MAX_MACHINES];
  for (int h = 0; h < m; ++h) c[h] = 0;
  for (int k = 0; k < d.n; ++k) {
    const int *pj = d.p + (ll)pfsp_moved_job(perm, kind, i, j, k) * m;
    ll left = 0;
    for (int h = 0; h < m; ++h) {
      left = (left > c[h] ? left : c[h]) + pj[h];
      c[h] = left;
    }
  }
  return c[m - 1];
}

__device__ ll cost(const Data &d, const int *perm) { return pfsp_makespan(d, perm, 0, 0, 0); }

__device__ ll swap_delta(const Data &d, const int *perm, const ll *cache, int i, int j) {
  return pfsp_makespan(d, perm, 1, i, j) - pfsp_makespan(d, perm, 0, 0, 0);
}

__device__ ll insert_delta(const Data &d, const int *perm, const ll *cache, int i, int j) {
  return pfsp_makespan(d, perm, 2, i, j) - pfsp_makespan(d, perm, 0, 0, 0);
}

/* The job at position k of seq[0..len+1) without position `skip` (none when skip < 0). */
__device__ __forceinline__ const int *pfsp_times_at(const Data &d, const int *seq, int skip, int k) {
  return d.p + (ll)seq[skip >= 0 && k >= skip ? k + 1 : k] * (int)d.m;
}

/* A cell of the heads and tails: int with the warp kernels where the declared bound keeps every
 * makespan below 2^29 (MH_USER_DELTA32), which halves the bytes the tables move; else ll. */
#if defined(MH_PS_WARP) && defined(MH_USER_DELTA32)
typedef int pfsp_cell_t;
#else
typedef ll pfsp_cell_t;
#endif

#ifdef MH_PS_WARP
/* The heads e and tails q of seq[0..len+1) without `skip` by one warp (MH_PS_WARP: a search is a
 * block of 32 threads, PermSearchParams(kernel="warp")): the machines in strips of up to 32 lanes,
 * each strip a wavefront over its anti-diagonals. Lane l holds column c = s0 + w - 1 - l of the
 * strip (heads: machine c; tails: machine m - 1 - c, rows from the end): the cell above is its own
 * last value (a register), the cell to its left lane l + 1's last value (__shfl_down_sync), the
 * strip's first column reads the previous strip's last from memory; a barrier a strip, none a
 * diagonal (len + w - 1 steps a strip). The same integers as the rows and the block's wavefronts. */
__device__ void pfsp_warp_tables(const Data &d, const int *seq, int skip, int len, pfsp_cell_t *e, pfsp_cell_t *q) {
  const int m = (int)d.m, lane = mh_tid();
  for (int s0 = 0; s0 < m; s0 += 32) {
    const int w = m - s0 < 32 ? m - s0 : 32, c = s0 + w - 1 - lane, h = m - 1 - c, on = lane < w;
    pfsp_cell_t head = 0, tail = 0; /* the lane's value of its last row */
    for (int step = 0; step < len + w - 1; ++step) {
      const pfsp_cell_t hl = __shfl_down_sync(0xffffffffu, head, 1), tl = __shfl_down_sync(0xffffffffu, tail, 1);
      const int k = step - (w - 1 - lane), kk = len - 1 - k;
      if (!on || k < 0 || k >= len) continue;
      const pfsp_cell_t left = lane < w - 1 ? hl : (c ? e[(ll)k * m + c - 1] : 0);
      const pfsp_cell_t up = k ? head : 0;
      head = (left > up ? left : up) + pfsp_times_at(d, seq, skip, k)[c];
      e[(ll)k * m + c] = head;
      const pfsp_cell_t right = lane < w - 1 ? tl : (h + 1 < m ? q[(ll)kk * m + h + 1] : 0);
      const pfsp_cell_t down = k ? tail : 0;
      tail = (right > down ? right : down) + pfsp_times_at(d, seq, skip, kk)[h];
      q[(ll)kk * m + h] = tail;
    }
    __syncthreads();
  }
}
#endif

/* out[pos], pos = 0..len: the makespan of seq[0..len+1) without position `skip` (none when skip < 0),
 * len jobs, with `elem` inserted at pos. Every thread of the block calls it. */
__device__ void pfsp_insertions(const Data &d, const int *seq, int skip, int len, int elem, ll *out, ll *work) {
  const int m = (int)d.m, t = mh_tid(), nt = mh_nthreads();
  pfsp_cell_t *e = (pfsp_cell_t *)work, *q = e + (ll)len * m;
#ifdef MH_PS_WARP
  if (nt == 32) pfsp_warp_tables(d, seq, skip, len, e, q); else
#endif
  if (nt == 1) { /* one thread: the heads row by row, then the tails */
    for (int k = 0; k < len; ++k) {
      const int *pj = pfsp_times_at(d, seq, skip, k);
      ll left = 0;
      for (int h = 0; h < m; ++h) {
        const ll up = k ? e[(ll)(k - 1) * m + h] : 0;
        left = (left > up ? left : up) + pj[h];
        e[(ll)k * m + h] = left;
      }
    }
    for (int k = len - 1; k >= 0; --k) {
      const int *pj = pfsp_times_at(d, seq, skip, k);
      ll right = 0;
      for (int h = m - 1; h >= 0; --h) {
        const ll down = k + 1 < len ? q[(ll)(k + 1) * m + h] : 0;
        right = (right > down ? right : down) + pj[h];
        q[(ll)k * m + h] = right;
      }
    }
  } else { /* a block: anti-diagonal wavefronts (cell (k, h) needs (k -/+ 1, h) and (k, h -/+ 1)),
            * the heads on the first half of the threads, the tails on the second, one barrier a
            * diagonal: len + m - 1 steps instead of len * m; the same values */
    const int half = nt / 2, heads = t < half, u = heads ? t : t - half, width = heads ? half : nt - half;
    for (int diag = 0; diag < len + m - 1; ++diag) {
      for (int hh = u; hh < m; hh += width) {
        const int kk = diag - hh;
        if (kk < 0 || kk >= len) continue;
        if (heads) {
          const ll up = kk ? e[(ll)(kk - 1) * m + hh] : 0, left = hh ? e[(ll)kk * m + hh - 1] : 0;
          e[(ll)kk * m + hh] = (left > up ? left : up) + pfsp_times_at(d, seq, skip, kk)[hh];
        } else {
          const int k = len - 1 - kk, h = m - 1 - hh;
          const ll down = k + 1 < len ? q[(ll)(k + 1) * m + h] : 0, right = h + 1 < m ? q[(ll)k * m + h + 1] : 0;
          q[(ll)k * m + h] = (right > down ? right : down) + pfsp_times_at(d, seq, skip, k)[h];
        }
      }
      __syncthreads();
    }
  }
  __syncthreads();
  const int *pe = d.p + (ll)elem * m;
  for (int pos = t; pos <= len; pos += nt) {
    ll f = 0, best = 0;
    for (int h = 0; h < m; ++h) {
      const ll up = pos ? e[(ll)(pos - 1) * m + h] : 0;
      f = (f > up ? f : up) + pe[h];
      const ll through = f + (pos < len ? q[(ll)pos * m + h] : 0);
      best = best > through ? best : through;
    }
    out[pos] = best;
  }
  __syncthreads();
}

__device__ void insert_row(const Data &d, const int *perm, const ll *cache, int i, ll *out, ll *work) {
  pfsp_insertions(d, perm, i, d.n - 1, perm[i], out, work);
  const ll base = out[i];
  __syncthreads();
  for (int j = mh_tid(); j < d.n; j += mh_nthreads()) out[j] -= base;
}

__device__ void partial_insert_row(const Data &d, const int *seq, int len, int elem, ll *out, ll *work) {
  pfsp_insertions(d, seq, -1, len, elem, out, work);
}

/* Between insertion positions of equal makespan: on machines 2..m, the idle time before `elem`
 * plus the change of the idle time before the job it puts back (none at the last position), from
 * the heads `e` that partial_insert_row left in `work`; the least is taken. */
__device__ ll partial_insert_tie(const Data &d, const int *seq, int len, int elem, int pos, const ll *work) {
  const int m = (int)d.m;
  const pfsp_cell_t *e = (const pfsp_cell_t *)work;
  const int *pe = d.p + (ll)elem * m, *pn = pos < len ? d.p + (ll)seq[pos] * m : pe;
  ll f = 0, g = 0, idle = 0;
  for (int h = 0; h < m; ++h) {
    const ll up = pos ? e[(ll)(pos - 1) * m + h] : 0;
    f = (f > up ? f : up) + pe[h];
    if (pos < len) {
      g = (g > f ? g : f) + pn[h];
      if (h) idle += g - e[(ll)pos * m + h] - pe[h];
    } else if (h) {
      idle += f - up - pe[h];
    }
  }
  return idle;
}
""".replace("@MAX_MACHINES@", str(MAX_MACHINES))
