"""FlashAttention-style CPU kernels in C: blocked over keys with an online softmax, so the
L x S score matrix is never materialised (memory O((L + S) * D) per thread).

Forward, per (batch, head, block of BQ queries): for each block of BK keys,
    s = q k^T * scale + mask;  m' = max(m, rowmax s);  p = exp(s - m')
    l = l * exp(m - m') + rowsum p;  acc = acc * exp(m - m') + p v
then out = acc / l and logsumexp = m + log l (saved for the backward).
Backward, per (batch, key/value head): the same blocks are recomputed from q, k, lse:
    p = exp(s - lse);  dv += p^T do;  dp = do v^T;  ds = p * (dp - rowsum(do * out))
    dq += ds k * scale;  dk += ds^T q * scale
GQA: query head h reads key/value head h // (H / Hk); the backward runs one task per
key/value head, so the heads of a group add into dk/dv without races.

Inputs are read with their strides (last dim contiguous) in float32, bfloat16, float16 or
float64 and widened per row (float64 computes in double, the others in float); outputs are
written contiguous in the input dtype (bfloat16 rounded to nearest even). The block
products go through one register-blocked micro-kernel (AVX-512 when the compiler targets
it, else loops the compiler vectorizes); exp is a polynomial that vectorizes (float path).
`None` from `lib()` means no C compiler: the callers use `_flash_numpy` instead.
"""
import ctypes

import ml_dtypes
import numpy as np

__all__ = ["lib", "threads", "DTYPE_CODE", "BQ", "BK"]

BQ, BK = 64, 64
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(ml_dtypes.bfloat16): 1,
              np.dtype(np.float16): 2, np.dtype(np.float64): 3}

_COMMON = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif
#define BQ 64
#define BK 64
#define MIN(a, b) ((a) < (b) ? (a) : (b))

static int64_t elem_size(int code) { return code == 3 ? 8 : (code == 0 ? 4 : 2); }

static inline float bf16_to_f(uint16_t h) {
    uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f;
}
static inline uint16_t f_to_bf16(float f) {
    uint32_t u; memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* exp(x) for float, as 2^n * 2^f with a degree-6 polynomial (rel. error ~2e-7); vectorizes.
   x = -inf (a masked score) gives 0. */
static inline float fast_expf(float x) {
    float t = x * 1.44269504088896341f;
    t = t < -127.0f ? -127.0f : (t > 127.0f ? 127.0f : t);
    float n = floorf(t);
    float f = t - n;
    float p = 1.535336188319500e-4f;
    p = p * f + 1.339887440266574e-3f;
    p = p * f + 9.618437357674640e-3f;
    p = p * f + 5.550332471162809e-2f;
    p = p * f + 2.402264791363012e-1f;
    p = p * f + 6.931472028550421e-1f;
    p = p * f + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale; memcpy(&scale, &bits, 4);
    return p * scale;
}
"""

# The body, generated once per accumulation type (T = float or double).
_BODY = r"""
static void load_row_SUF(const char* src, int code, int64_t n, T* dst) {
    switch (code) {
    case 0: for (int64_t i = 0; i < n; i++) dst[i] = (T)((const float*)src)[i]; break;
    case 1: for (int64_t i = 0; i < n; i++) dst[i] = (T)bf16_to_f(((const uint16_t*)src)[i]);
            break;
    case 2: for (int64_t i = 0; i < n; i++) dst[i] = (T)((const _Float16*)src)[i]; break;
    default: for (int64_t i = 0; i < n; i++) dst[i] = (T)((const double*)src)[i];
    }
}

static void store_row_SUF(char* dst, int code, int64_t n, const T* src) {
    switch (code) {
    case 0: for (int64_t i = 0; i < n; i++) ((float*)dst)[i] = (float)src[i]; break;
    case 1: for (int64_t i = 0; i < n; i++) ((uint16_t*)dst)[i] = f_to_bf16((float)src[i]);
            break;
    case 2: for (int64_t i = 0; i < n; i++) ((_Float16*)dst)[i] = (_Float16)src[i]; break;
    default: for (int64_t i = 0; i < n; i++) ((double*)dst)[i] = (double)src[i];
    }
}

/* C[M x N] += A[M x K] B[K x N]; row-major with leading dims lda, ldb, ldc. */
static void gemm_SUF(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda,
                     const T* B, int64_t ldb, T* C, int64_t ldc) {
#if defined(__AVX512F__) && IS_FLOAT
    for (int64_t j0 = 0; j0 < N; j0 += 64) {
        __mmask16 mk[4];
        for (int v = 0; v < 4; v++) {
            int64_t left = N - j0 - 16 * v;
            mk[v] = left >= 16 ? (__mmask16)0xffff
                               : (left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1));
        }
        for (int64_t i0 = 0; i0 < M; i0 += 4) {
            const T* a[4];
            __m512 c[4][4];
            for (int r = 0; r < 4; r++) {
                a[r] = A + MIN(i0 + r, M - 1) * lda;
                for (int v = 0; v < 4; v++)
                    c[r][v] = _mm512_maskz_loadu_ps(mk[v], C + MIN(i0 + r, M - 1) * ldc
                                                           + j0 + 16 * v);
            }
            for (int64_t k = 0; k < K; k++) {
                const T* b = B + k * ldb + j0;
                __m512 bv[4];
                for (int v = 0; v < 4; v++) bv[v] = _mm512_maskz_loadu_ps(mk[v], b + 16 * v);
                for (int r = 0; r < 4; r++) {
                    __m512 av = _mm512_set1_ps(a[r][k]);
                    for (int v = 0; v < 4; v++) c[r][v] = _mm512_fmadd_ps(av, bv[v], c[r][v]);
                }
            }
            for (int r = 0; r < 4 && i0 + r < M; r++)
                for (int v = 0; v < 4; v++)
                    _mm512_mask_storeu_ps(C + (i0 + r) * ldc + j0 + 16 * v, mk[v], c[r][v]);
        }
    }
#else
    for (int64_t i = 0; i < M; i++) {
        T* c = C + i * ldc;
        for (int64_t k = 0; k < K; k++) {
            T a = A[i * lda + k];
            const T* b = B + k * ldb;
            #pragma omp simd
            for (int64_t j = 0; j < N; j++) c[j] += a * b[j];
        }
    }
#endif
}

static inline T exp_SUF(T x) { return IS_FLOAT ? (T)fast_expf((float)x) : (T)exp((double)x); }

/* Mask value for (query row i, key column j); NULL mask adds nothing. */
static inline const T* mask_row_SUF(const T* mask, const int64_t* ms, int64_t b, int64_t h,
                                    int64_t i) {
    return mask ? mask + b * ms[0] + h * ms[1] + i * ms[2] : NULL;
}

/* scores of one block: s[i][j] = s[i][j] * scale + mask, -inf where causal hides it. */
static void finish_scores_SUF(T* s, int64_t m, int64_t n, int64_t i0, int64_t j0, T scale,
                              const T* mask, const int64_t* ms, int64_t b, int64_t h,
                              int causal) {
    for (int64_t i = 0; i < m; i++) {
        T* row = s + i * BK;
        const T* mr = mask_row_SUF(mask, ms, b, h, i0 + i);
        if (mr) {
            int64_t st = ms[3];
            for (int64_t j = 0; j < n; j++) row[j] = row[j] * scale + mr[(j0 + j) * st];
        } else {
            #pragma omp simd
            for (int64_t j = 0; j < n; j++) row[j] *= scale;
        }
        if (causal)
            for (int64_t j = (i0 + i + 1 - j0 > 0 ? i0 + i + 1 - j0 : 0); j < n; j++)
                row[j] = -INFINITY;
    }
}

/* Keys of head (b, hk) transposed per block of BK ([D][BK] each) and values row-major. */
static void pack_kv_SUF(int code, const char* k, const char* v, int64_t b, int64_t hk,
                        int64_t S, int64_t D, const int64_t* ks, const int64_t* vs,
                        T* ktall, T* vall) {
    const int64_t es = elem_size(code);
    T tmp[D > 0 ? D : 1];
    for (int64_t j = 0; j < S; j++) {
        T* kt = ktall + (j / BK) * D * BK + j % BK;
        load_row_SUF(k + (b * ks[0] + hk * ks[1] + j * ks[2]) * es, code, D, tmp);
        for (int64_t d = 0; d < D; d++) kt[d * BK] = tmp[d];
        load_row_SUF(v + (b * vs[0] + hk * vs[1] + j * vs[2]) * es, code, D, vall + j * D);
    }
}

void flash_fwd_SUF(int code, const char* q, const char* k, const char* v, char* out, T* lse,
                   int64_t B, int64_t H, int64_t Hk, int64_t L, int64_t S, int64_t D,
                   const int64_t* qs, const int64_t* ks, const int64_t* vs,
                   const T* mask, const int64_t* ms, int causal, double scale_d,
                   int nthreads) {
    const T scale = (T)scale_d;
    const int64_t es = elem_size(code), group = H / Hk, nqb = (L + BQ - 1) / BQ;
    const int64_t ntask = B * H * nqb;
    #pragma omp parallel num_threads(nthreads)
    {
        const int64_t nkb = (S + BK - 1) / BK;
        T* qb = malloc(sizeof(T) * BQ * D);
        T* acc = malloc(sizeof(T) * BQ * D);
        T* ktall = malloc(sizeof(T) * (nkb * D * BK + 1));  /* per key block: [D][BK] */
        T* vall = malloc(sizeof(T) * (S * D + 1));
        T* s = malloc(sizeof(T) * BQ * BK);
        T mrow[BQ], lrow[BQ];
        int64_t packed = -1;          /* the (b, hk) whose keys/values ktall/vall hold */
        #pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < ntask; task++) {
            int64_t b = task / (H * nqb), h = (task / nqb) % H, i0 = (task % nqb) * BQ;
            int64_t hk = h / group, m = MIN(BQ, L - i0);
            int64_t kend = causal ? MIN(S, i0 + m) : S;
            for (int64_t i = 0; i < m; i++)
                load_row_SUF(q + (b * qs[0] + h * qs[1] + (i0 + i) * qs[2]) * es, code, D,
                             qb + i * D);
            memset(acc, 0, sizeof(T) * m * D);
            for (int64_t i = 0; i < m; i++) { mrow[i] = -INFINITY; lrow[i] = 0; }
            if (packed != b * Hk + hk) {      /* consecutive tasks mostly share a head */
                packed = b * Hk + hk;
                pack_kv_SUF(code, k, v, b, hk, S, D, ks, vs, ktall, vall);
            }
            for (int64_t j0 = 0; j0 < kend; j0 += BK) {
                int64_t n = MIN(BK, kend - j0);
                const T* kt = ktall + (j0 / BK) * D * BK;
                const T* vb = vall + j0 * D;
                memset(s, 0, sizeof(T) * m * BK);
                gemm_SUF(m, n, D, qb, D, kt, BK, s, BK);
                finish_scores_SUF(s, m, n, i0, j0, scale, mask, ms, b, h, causal);
                for (int64_t i = 0; i < m; i++) {
                    T* row = s + i * BK;
                    T mx = mrow[i];
                    #pragma omp simd reduction(max:mx)
                    for (int64_t j = 0; j < n; j++) mx = row[j] > mx ? row[j] : mx;
                    if (mx == -INFINITY) {            /* every key so far is masked */
                        for (int64_t j = 0; j < n; j++) row[j] = 0;
                        continue;
                    }
                    T alpha = exp_SUF(mrow[i] - mx), sum = 0;
                    #pragma omp simd reduction(+:sum)
                    for (int64_t j = 0; j < n; j++) {
                        row[j] = exp_SUF(row[j] - mx);
                        sum += row[j];
                    }
                    lrow[i] = lrow[i] * alpha + sum;
                    mrow[i] = mx;
                    if (alpha != (T)1)
                        for (int64_t d = 0; d < D; d++) acc[i * D + d] *= alpha;
                }
                gemm_SUF(m, D, n, s, BK, vb, D, acc, D);
            }
            for (int64_t i = 0; i < m; i++) {
                T inv = lrow[i] > 0 ? (T)1 / lrow[i] : (T)0;
                for (int64_t d = 0; d < D; d++) acc[i * D + d] *= inv;
                int64_t row = (b * H + h) * L + i0 + i;
                store_row_SUF(out + row * D * es, code, D, acc + i * D);
                lse[row] = lrow[i] > 0 ? mrow[i] + log(lrow[i]) : -INFINITY;
            }
        }
        free(qb); free(acc); free(ktall); free(vall); free(s);
    }
}

static void transpose_SUF(const T* src, int64_t m, int64_t n, int64_t lds, T* dst,
                          int64_t ldd) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) dst[j * ldd + i] = src[i * lds + j];
}

void flash_bwd_SUF(int code, const char* q, const char* k, const char* v, const char* o,
                   const char* dout, const T* lse, char* dq, char* dk, char* dv,
                   int64_t B, int64_t H, int64_t Hk, int64_t L, int64_t S, int64_t D,
                   const int64_t* qs, const int64_t* ks, const int64_t* vs,
                   const int64_t* os, const int64_t* dos,
                   const T* mask, const int64_t* ms, int causal, double scale_d,
                   int nthreads) {
    const T scale = (T)scale_d;
    const int64_t es = elem_size(code), group = H / Hk, ntask = B * Hk;
    #pragma omp parallel num_threads(nthreads)
    {
        T* Q = malloc(sizeof(T) * (L * D + 1));
        T* dO = malloc(sizeof(T) * (L * D + 1));
        T* dQ = malloc(sizeof(T) * (L * D + 1));
        T* Di = malloc(sizeof(T) * (L + 1));
        T* dK = malloc(sizeof(T) * (S * D + 1));
        T* dV = malloc(sizeof(T) * (S * D + 1));
        T* kb = malloc(sizeof(T) * BK * D);
        T* kt = malloc(sizeof(T) * D * BK);
        T* vt = malloc(sizeof(T) * D * BK);
        T* s = malloc(sizeof(T) * BQ * BK);
        T* dp = malloc(sizeof(T) * BQ * BK);
        T* tb = malloc(sizeof(T) * BK * BQ);
        T* orow = malloc(sizeof(T) * (D + 1));
        #pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < ntask; task++) {
            int64_t b = task / Hk, hk = task % Hk;
            memset(dK, 0, sizeof(T) * S * D);
            memset(dV, 0, sizeof(T) * S * D);
            for (int64_t h = hk * group; h < (hk + 1) * group; h++) {
                const T* lse_h = lse + (b * H + h) * L;
                for (int64_t i = 0; i < L; i++) {
                    load_row_SUF(q + (b * qs[0] + h * qs[1] + i * qs[2]) * es, code, D,
                                 Q + i * D);
                    load_row_SUF(dout + (b * dos[0] + h * dos[1] + i * dos[2]) * es, code, D,
                                 dO + i * D);
                    load_row_SUF(o + (b * os[0] + h * os[1] + i * os[2]) * es, code, D, orow);
                    T acc = 0;
                    for (int64_t d = 0; d < D; d++) acc += dO[i * D + d] * orow[d];
                    Di[i] = acc;
                }
                memset(dQ, 0, sizeof(T) * L * D);
                for (int64_t j0 = 0; j0 < S; j0 += BK) {
                    int64_t n = MIN(BK, S - j0);
                    for (int64_t j = 0; j < n; j++) {
                        load_row_SUF(k + (b * ks[0] + hk * ks[1] + (j0 + j) * ks[2]) * es,
                                     code, D, kb + j * D);
                        load_row_SUF(v + (b * vs[0] + hk * vs[1] + (j0 + j) * vs[2]) * es,
                                     code, D, orow);
                        for (int64_t d = 0; d < D; d++) {
                            kt[d * BK + j] = kb[j * D + d];
                            vt[d * BK + j] = orow[d];
                        }
                    }
                    int64_t istart = causal ? (j0 / BQ) * BQ : 0;
                    for (int64_t i0 = istart; i0 < L; i0 += BQ) {
                        int64_t m = MIN(BQ, L - i0);
                        memset(s, 0, sizeof(T) * m * BK);
                        gemm_SUF(m, n, D, Q + i0 * D, D, kt, BK, s, BK);
                        finish_scores_SUF(s, m, n, i0, j0, scale, mask, ms, b, h, causal);
                        for (int64_t i = 0; i < m; i++) {
                            T* row = s + i * BK;
                            T l = lse_h[i0 + i];
                            if (l == -INFINITY) {
                                for (int64_t j = 0; j < n; j++) row[j] = 0;
                            } else {
                                #pragma omp simd
                                for (int64_t j = 0; j < n; j++) row[j] = exp_SUF(row[j] - l);
                            }
                        }
                        /* dV += P^T dO */
                        transpose_SUF(s, m, n, BK, tb, BQ);
                        gemm_SUF(n, D, m, tb, BQ, dO + i0 * D, D, dV + j0 * D, D);
                        /* dS = P * (dO V^T - Di) * scale */
                        memset(dp, 0, sizeof(T) * m * BK);
                        gemm_SUF(m, n, D, dO + i0 * D, D, vt, BK, dp, BK);
                        for (int64_t i = 0; i < m; i++) {
                            T di = Di[i0 + i];
                            #pragma omp simd
                            for (int64_t j = 0; j < n; j++)
                                dp[i * BK + j] = s[i * BK + j] * (dp[i * BK + j] - di) * scale;
                        }
                        gemm_SUF(m, D, n, dp, BK, kb, D, dQ + i0 * D, D);
                        transpose_SUF(dp, m, n, BK, tb, BQ);
                        gemm_SUF(n, D, m, tb, BQ, Q + i0 * D, D, dK + j0 * D, D);
                    }
                }
                for (int64_t i = 0; i < L; i++)
                    store_row_SUF(dq + ((b * H + h) * L + i) * D * es, code, D, dQ + i * D);
            }
            for (int64_t j = 0; j < S; j++) {
                store_row_SUF(dk + ((b * Hk + hk) * S + j) * D * es, code, D, dK + j * D);
                store_row_SUF(dv + ((b * Hk + hk) * S + j) * D * es, code, D, dV + j * D);
            }
        }
        free(Q); free(dO); free(dQ); free(Di); free(dK); free(dV); free(kb); free(kt);
        free(vt); free(s); free(dp); free(tb); free(orow);
    }
}
"""


def _source():
    parts = [_COMMON]
    for suf, typ, is_float in (("f32", "float", 1), ("f64", "double", 0)):
        body = _BODY.replace("_SUF", "_" + suf).replace("IS_FLOAT", str(is_float))
        parts.append(f"#define T {typ}\n{body}\n#undef T\n")
    return "".join(parts)


SOURCE = _source()
_VP, _I64, _INT, _DBL = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_double
_FWD_ARGS = (_INT, _VP, _VP, _VP, _VP, _VP, *([_I64] * 6), _VP, _VP, _VP, _VP, _VP, _INT,
             _DBL, _INT)
_BWD_ARGS = (_INT, *([_VP] * 9), *([_I64] * 6), *([_VP] * 5), _VP, _VP, _INT, _DBL, _INT)
_LIB = []


def threads():
    """OpenMP threads for one call (native.threads(): 1 in a forked child)."""
    from .._inductor.native import threads
    return threads()


def lib():
    """{'fwd_f32', 'bwd_f32', 'fwd_f64', 'bwd_f64'} -> ctypes functions, or None without a
    C compiler (built once per process, cached on disk)."""
    if not _LIB:
        from .._inductor.native import load_native
        so = load_native("flash attention", SOURCE)
        funcs = None
        if so is not None:
            funcs = {}
            for suf in ("f32", "f64"):
                for kind, argtypes in (("fwd", _FWD_ARGS), ("bwd", _BWD_ARGS)):
                    f = getattr(so, f"flash_{kind}_{suf}")
                    f.argtypes, f.restype = argtypes, None
                    funcs[f"{kind}_{suf}"] = f
        _LIB.append(funcs)
    return _LIB[0]
