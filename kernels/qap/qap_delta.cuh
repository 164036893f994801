/* qap_delta.cuh - exact swap deltas of the QAP (Taillard 1991, "Robust taboo search for the
 * quadratic assignment problem", Parallel Computing 17, eqs. for Delta(p, r, s)).
 *
 * Cost: sum_ij a[i][j] * b[p[i]][p[j]]. Swapping the locations of units r and s changes it by
 *   (a_rr - a_ss)(b_psps - b_prpr) + (a_rs - a_sr)(b_psp r - b_prps)
 *   + sum_{k != r,s} (a_kr - a_ks)(b_pkps - b_pkpr) + (a_rk - a_sk)(b_pspk - b_prpk)
 * which is O(n). After a move (r, s) has been applied, the delta of every pair (i, j) disjoint
 * from {r, s} changes by the O(1) amount
 *   (u_i - u_j)(v_i - v_j) + (u'_i - u'_j)(v'_i - v'_j)
 * with u_k = a_rk - a_sk, v_k = b_p(s)p(k) - b_p(r)p(k), u'_k = a_kr - a_ks,
 * v'_k = b_p(k)p(s) - b_p(k)p(r) and p the permutation after the move; pairs touching r or s
 * (2n - 3 of them) need the O(n) formula again.
 *
 * With MH_QAP_SYMMETRIC defined (both matrices symmetric; the loader checks) the primed terms
 * equal the unprimed ones and the formulas halve. Matrices are int32, products and sums long long.
 */
#ifndef MH_QAP_DELTA_CUH
#define MH_QAP_DELTA_CUH

/* The sums over k of the row formulas below: int32 where the host's bound on every swap delta and
 * every partial sum of it (metaheur.problems.qap.device_data.delta_bound) is below 2^28
 * (MH_QAP_DELTA32: twice the SIMD lanes of 64-bit products on a CPU), else long long. */
#ifdef MH_QAP_DELTA32
typedef int mh_qacc;
#else
typedef ll mh_qacc;
#endif

/* The terms of mh_qap_delta(r, s) outside its sum over k: the k = r and k = s terms of the sum
 * removed, the two exact ones added (the symmetric case's sum is doubled by the caller, these
 * terms too but the last). */
__device__ __forceinline__ ll mh_qap_delta_rest(const int *__restrict__ a, const int *__restrict__ b,
                                                const int *__restrict__ p, int n, int r, int s, ll sum) {
  const int pr = p[r], ps = p[s];
  const int *ar = a + (ll)r * n, *as = a + (ll)s * n;
  const int *bpr = b + (ll)pr * n, *bps = b + (ll)ps * n;
#ifdef MH_QAP_SYMMETRIC
  sum -= (ll)(ar[r] - as[r]) * (bps[pr] - bpr[pr]) + (ll)(ar[s] - as[s]) * (bps[ps] - bpr[ps]);
  return 2 * sum + (ll)(ar[r] - as[s]) * (bps[ps] - bpr[pr]);
#else
  sum -= (ll)(ar[r] - ar[s]) * (bpr[ps] - bpr[pr]) + (ll)(ar[r] - as[r]) * (bps[pr] - bpr[pr]);
  sum -= (ll)(as[r] - as[s]) * (bps[ps] - bps[pr]) + (ll)(ar[s] - as[s]) * (bps[ps] - bpr[ps]);
  return sum + (ll)(ar[r] - as[s]) * (bps[ps] - bpr[pr]) + (ll)(ar[s] - as[r]) * (bps[pr] - bpr[ps]);
#endif
}

/* O(n) delta of swapping units r != s; a, b are n x n, p the permutation (unit -> location). */
__device__ __forceinline__ ll mh_qap_delta(const int *__restrict__ a, const int *__restrict__ b,
                                           const int *__restrict__ p, int n, int r, int s) {
  const int pr = p[r], ps = p[s];
  const int *ar = a + (ll)r * n, *as = a + (ll)s * n;
  const int *bpr = b + (ll)pr * n, *bps = b + (ll)ps * n;
  ll sum = 0;
#ifdef MH_QAP_SYMMETRIC
  for (int k = 0; k < n; ++k) {
    const int pk = p[k];
    sum += (ll)(ar[k] - as[k]) * (bps[pk] - bpr[pk]);
  }
#else
  for (int k = 0; k < n; ++k) {
    const int pk = p[k];
    const int *ak = a + (ll)k * n, *bpk = b + (ll)pk * n;
    sum += (ll)(ak[r] - ak[s]) * (bpk[ps] - bpk[pr]) + (ll)(ar[k] - as[k]) * (bps[pk] - bpr[pk]);
  }
#endif
  return mh_qap_delta_rest(a, b, p, n, r, s, sum);
}

/* Pairs owned by a thread (the streaming kernels): thread t owns pairs q = t, t + nt, ... of the
 * packed triangle (rows i < n - 1, j > i, in the order of i * n + j). The first: pair q. */
__device__ __forceinline__ void mh_qap_pair_first(int n, ll q, int *i, int *j) {
  int row = 0;
  ll len = n - 1;
  while (len > 0 && q >= len) { q -= len; ++row; --len; }
  *i = row;
  *j = row + 1 + (int)q;
}

/* The pair `step` pairs after (i, j); i >= n - 1 once past the last. */
__device__ __forceinline__ void mh_qap_pair_next(int n, int step, int *i, int *j) {
  int row = *i;
  ll off = (ll)(*j - row - 1) + step;
  while (row < n - 1 && off >= n - 1 - row) { off -= n - 1 - row; ++row; }
  *i = row;
  *j = row + 1 + (int)off;
}



/* The terms of mh_qap_delta_rows(i, j) outside its sum over k: the k = i, j terms of that sum
 * removed, the two exact ones added. */
__device__ __forceinline__ ll mh_qap_delta_ends(const int *__restrict__ a, const int *__restrict__ at,
                                                const int *__restrict__ bp, const int *__restrict__ bpt, int n,
                                                int i, int j) {
  const int *ai = a + (ll)i * n, *aj = a + (ll)j * n, *bi = bp + (ll)i * n, *bj = bp + (ll)j * n;
#ifdef MH_QAP_SYMMETRIC
  const ll ti = 2 * (ll)(ai[i] - aj[i]) * (bj[i] - bi[i]), tj = 2 * (ll)(ai[j] - aj[j]) * (bj[j] - bi[j]);
#else
  const int *ti_ = at + (ll)i * n, *tj_ = at + (ll)j * n, *ci = bpt + (ll)i * n, *cj = bpt + (ll)j * n;
  const ll ti = (ll)(ti_[i] - tj_[i]) * (cj[i] - ci[i]) + (ll)(ai[i] - aj[i]) * (bj[i] - bi[i]);
  const ll tj = (ll)(ti_[j] - tj_[j]) * (cj[j] - ci[j]) + (ll)(ai[j] - aj[j]) * (bj[j] - bi[j]);
#endif
  return -ti - tj + (ll)(ai[i] - aj[j]) * (bj[j] - bi[i]) + (ll)(ai[j] - aj[i]) * (bj[i] - bi[j]);
}

/* The symmetric case's sums over k count each term once and are doubled. */
#ifdef MH_QAP_SYMMETRIC
#define MH_QAP_SUM_SCALE 2
#else
#define MH_QAP_SUM_SCALE 1
#endif

/* The same O(n) delta from rows of permuted copies kept by a search (Taillard 1991; the layout of
 * the yardstick shared/yardsticks/rots.c): bp[x][y] = b[p[x]][p[y]], bpt its transpose, at = a
 * transposed, so that every term reads contiguous rows:
 *   sum_k (at_i[k] - at_j[k])(bpt_j[k] - bpt_i[k]) + (a_i[k] - a_j[k])(bp_j[k] - bp_i[k]),
 * minus the k = i, j terms, plus the two exact ones (mh_qap_delta_ends). */
__device__ __forceinline__ ll mh_qap_delta_rows(const int *__restrict__ a, const int *__restrict__ at,
                                                const int *__restrict__ bp, const int *__restrict__ bpt, int n,
                                                int i, int j) {
  const int *ai = a + (ll)i * n, *aj = a + (ll)j * n, *bi = bp + (ll)i * n, *bj = bp + (ll)j * n;
  mh_qacc s = 0;
#ifdef MH_QAP_SYMMETRIC
  for (int k = 0; k < n; ++k) s += (mh_qacc)(ai[k] - aj[k]) * (bj[k] - bi[k]);
#else
  const int *ti = at + (ll)i * n, *tj = at + (ll)j * n, *ci = bpt + (ll)i * n, *cj = bpt + (ll)j * n;
  for (int k = 0; k < n; ++k)
    s += (mh_qacc)(ti[k] - tj[k]) * (cj[k] - ci[k]) + (mh_qacc)(ai[k] - aj[k]) * (bj[k] - bi[k]);
#endif
  return MH_QAP_SUM_SCALE * (ll)s + mh_qap_delta_ends(a, at, bp, bpt, n, i, j);
}

/* Row m's terms of the sums of mh_qap_delta_rows(k, r) and (k, s), added to xr and xs. Row k's
 * entry m is entry k of m's row in the transposes (a_k[m] = at_m[k], bp_k[m] = bpt_m[k], and the
 * other way round), so that consecutive k read consecutive entries. */
#ifdef MH_QAP_SYMMETRIC
#define MH_QAP_SUMS2_TERMS(m, k, xr, xs)                                                                      \
  do {                                                                                                          \
    const int amk = a[(ll)(m) * n + (k)], bmk = bp[(ll)(m) * n + (k)];                                         \
    xr += (mh_qacc)(amk - ar[m]) * (br[m] - bmk);                                                               \
    xs += (mh_qacc)(amk - as[m]) * (bs[m] - bmk);                                                               \
  } while (0)
#else
#define MH_QAP_SUMS2_TERMS(m, k, xr, xs)                                                                      \
  do {                                                                                                          \
    const ll mk = (ll)(m) * n + (k);                                                                            \
    const int amk = a[mk], bmk = bp[mk], tmk = at[mk], cmk = bpt[mk];                                          \
    xr += (mh_qacc)(amk - tr[m]) * (cr[m] - bmk) + (mh_qacc)(tmk - ar[m]) * (br[m] - cmk);                     \
    xs += (mh_qacc)(amk - ts[m]) * (cs[m] - bmk) + (mh_qacc)(tmk - as[m]) * (bs[m] - cmk);                     \
  } while (0)
#endif

/* The sums over m of mh_qap_delta_rows(k, r) and (k, s) for every k (a tabu search recomputes
 * these pairs after the move (r, s)), into sr[k] and ss[k]; threads tid, tid + nt, ... own their
 * k, so there is no barrier inside. In the CPU build (one thread) the loop over m is outside and
 * the loop over k inside, along rows: no reduction per k, one vector pass per m. On a GPU, and in
 * the CPU simulation of its blocks, each thread sums its k in registers, and a warp's reads of
 * one row m are coalesced. */
__device__ __forceinline__ void mh_qap_delta_sums2(const int *__restrict__ a, const int *__restrict__ at,
                                                   const int *__restrict__ bp, const int *__restrict__ bpt, int n,
                                                   int r, int s, mh_qacc *__restrict__ sr, mh_qacc *__restrict__ ss,
                                                   int tid, int nt) {
  const int *ar = a + (ll)r * n, *as = a + (ll)s * n, *br = bp + (ll)r * n, *bs = bp + (ll)s * n;
  const int *tr = at + (ll)r * n, *ts = at + (ll)s * n, *cr = bpt + (ll)r * n, *cs = bpt + (ll)s * n;
  (void)tr; (void)ts; (void)cr; (void)cs;
#if defined(MH_CPU) && !defined(MH_SIM_THREADS)
  for (int k = tid; k < n; k += nt) { sr[k] = 0; ss[k] = 0; }
  for (int m = 0; m < n; ++m)
    for (int k = tid; k < n; k += nt) MH_QAP_SUMS2_TERMS(m, k, sr[k], ss[k]);
#else
  for (int k = tid; k < n; k += nt) {
    mh_qacc xr = 0, xs = 0;
    for (int m = 0; m < n; ++m) MH_QAP_SUMS2_TERMS(m, k, xr, xs);
    sr[k] = xr;
    ss[k] = xs;
  }
#endif
}

#endif /* MH_QAP_DELTA_CUH */
