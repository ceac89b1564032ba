"""C kernels for 2:4 semi-structured sparse products on CPU (SparseSemiStructuredTensor).

Note: the weight W (m, k) is stored as its kept values V (m, k/2) and one code byte per
group of four columns (m, k/4): bits 0-1 and 2-3 are the positions of the two kept values.
The kernels read them reordered by `blocked` into the order they visit them, so a pass
streams one contiguous run (row strides of 4 KiB and more touched a page per row and
restarted the prefetcher per block).
Only kept values are loaded and multiplied:

    gather  y[n, i] = sum_g V[i, 2g] x[n, 4g + c0] + V[i, 2g+1] x[n, 4g + c1]   (x @ W^T)
    scatter y[n, 4g + c] += V[i, .] x[n, i]                                      (x @ W)

Both first copy x transposed into x^T (columns contiguous over the batch, padded to the
batch tile BT, converted to the accumulator type: float for float32/bf16/fp16, int32 for
int8), so each kept value multiplies BT contiguous inputs held in registers; the reduction
dim is blocked (KB rows of x^T, one L1-sized block) and rows are split among OpenMP tasks.
bf16/fp16 are computed in float32 and rounded once; int8 accumulates in int32 and wraps to
int8 at the store (modular, so equal to PyTorch's dense int8 result). Without a C compiler
`gather`/`scatter` run on NumPy over the same storage.
"""
import ctypes

import numpy as np

from .._inductor.native import load_native, threads

__all__ = ["gather", "scatter", "blocked", "columns"]

KB, RB = 64, 64     # the C source's reduction block and row block

_SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#define BT 64           /* batch tile: 4 zmm of float */
#define KB 64           /* reduction block: KB rows of x^T (16 KiB of float) in L1 */
#define RB 64           /* output rows per task */

static inline float bf2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f;
    memcpy(&f, &u, 4); return f; }
static inline uint16_t f2bf(float f) { uint32_t u; memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u); return (uint16_t)(u >> 16); }
static inline float h2f(uint16_t h) { _Float16 v; memcpy(&v, &h, 2); return (float)v; }
static inline uint16_t f2h(float f) { _Float16 v = (_Float16)f; uint16_t h;
    memcpy(&h, &v, 2); return h; }
static inline int32_t i2i(int8_t v) { return v; }
static inline int8_t i2b(int32_t v) { return (int8_t)(uint8_t)((uint32_t)v & 0xffu); }
static inline float f2f(float v) { return v; }
static inline float i2f(int8_t v) { return (float)v; }

static inline int64_t ntiles(int64_t n) { return (n + BT - 1) / BT; }

/* Tile-major x^T: xT[(t * K + c) * BT + j] = x[n * s0 + c * s1] with n = t * BT + j < N,
   else 0; one tile's reduction block is then one contiguous run (no L1 set conflicts). */
#define PACK(NAME, XT, ACC, CONV)                                                      \
static void NAME(const XT* x, int64_t N, int64_t K, int64_t s0, int64_t s1, ACC* xT,     \
                 int nth) {                                                             \
    int64_t nt = ntiles(N), nc = (K + 15) / 16;                                         \
    _Pragma("omp parallel for schedule(static) num_threads(nth)")                       \
    for (int64_t task = 0; task < nt * nc; task++) {                                    \
        int64_t t = task / nc, c0 = (task % nc) * 16, c1 = c0 + 16 < K ? c0 + 16 : K;   \
        for (int64_t j0 = 0; j0 < BT; j0 += 16)                                         \
            for (int64_t c = c0; c < c1; c++)                                           \
                for (int64_t j = j0; j < j0 + 16; j++) {                                \
                    int64_t n = t * BT + j;                                             \
                    xT[(t * K + c) * BT + j] = n < N ? CONV(x[n * s0 + c * s1]) : (ACC)0; \
                }                                                                       \
    }                                                                                   \
}

PACK(pack_f32, float, float, f2f)
PACK(pack_bf16, uint16_t, float, bf2f)
PACK(pack_f16, uint16_t, float, h2f)
PACK(pack_i8, int8_t, int32_t, i2i)
#ifdef __AVX512F__
PACK(pack_i8f, int8_t, float, i2f)
#endif

/* One row's kept values of one reduction block, times its BT inputs, into acc[BT]. */
#define ROW_GATHER_C(NAME, VT, ACC, VCONV)                                              \
static inline void NAME(const VT* v, const uint8_t* code, int64_t ng, const ACC* xk,    \
                        int64_t ld, ACC* acc) {                                         \
    for (int64_t g = 0; g < ng; g++) {                                                  \
        ACC w0 = VCONV(v[2 * g]), w1 = VCONV(v[2 * g + 1]);                             \
        const ACC* x0 = xk + (4 * g + (code[g] & 3)) * ld;                              \
        const ACC* x1 = xk + (4 * g + (code[g] >> 2)) * ld;                             \
        for (int n = 0; n < BT; n++) acc[n] += w0 * x0[n] + w1 * x1[n];                 \
    }                                                                                   \
}

#ifdef __AVX512F__
#define ROW_GATHER_F(NAME, VT, VCONV)                                                   \
static inline void NAME(const VT* v, const uint8_t* code, int64_t ng, const float* xk,  \
                        int64_t ld, float* acc) {                                       \
    __m512 a0 = _mm512_loadu_ps(acc), a1 = _mm512_loadu_ps(acc + 16);                   \
    __m512 a2 = _mm512_loadu_ps(acc + 32), a3 = _mm512_loadu_ps(acc + 48);              \
    __m512 b0 = _mm512_setzero_ps(), b1 = b0, b2 = b0, b3 = b0;                         \
    for (int64_t g = 0; g < ng; g++) {                                                  \
        __m512 w0 = _mm512_set1_ps(VCONV(v[2 * g])), w1 = _mm512_set1_ps(VCONV(v[2 * g + 1])); \
        const float* x0 = xk + (4 * g + (code[g] & 3)) * ld;                            \
        const float* x1 = xk + (4 * g + (code[g] >> 2)) * ld;                           \
        a0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x0), a0);                              \
        a1 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x0 + 16), a1);                         \
        a2 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x0 + 32), a2);                         \
        a3 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x0 + 48), a3);                         \
        b0 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x1), b0);                              \
        b1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x1 + 16), b1);                         \
        b2 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x1 + 32), b2);                         \
        b3 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x1 + 48), b3);                         \
    }                                                                                   \
    _mm512_storeu_ps(acc, _mm512_add_ps(a0, b0));                                       \
    _mm512_storeu_ps(acc + 16, _mm512_add_ps(a1, b1));                                  \
    _mm512_storeu_ps(acc + 32, _mm512_add_ps(a2, b2));                                  \
    _mm512_storeu_ps(acc + 48, _mm512_add_ps(a3, b3));                                  \
}
ROW_GATHER_F(row_f32, float, f2f)
ROW_GATHER_F(row_bf16, uint16_t, bf2f)
ROW_GATHER_F(row_f16, uint16_t, h2f)

/* int8: float products and sums within one reduction block are exact integers (at most
   32 products of |v x| <= 2^14 per sum, far below 2^24), added to int32 once per block. */
static inline void row_i8(const int8_t* v, const uint8_t* code, int64_t ng, const float* xk,
                          int64_t ld, int32_t* acc) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0;
    __m512 b3 = a0;
    for (int64_t g = 0; g < ng; g++) {
        __m512 w0 = _mm512_set1_ps((float)v[2 * g]), w1 = _mm512_set1_ps((float)v[2 * g + 1]);
        const float* x0 = xk + (4 * g + (code[g] & 3)) * ld;
        const float* x1 = xk + (4 * g + (code[g] >> 2)) * ld;
        a0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x0), a0);
        a1 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x0 + 16), a1);
        a2 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x0 + 32), a2);
        a3 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x0 + 48), a3);
        b0 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x1), b0);
        b1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x1 + 16), b1);
        b2 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x1 + 32), b2);
        b3 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x1 + 48), b3);
    }
    __m512 s[4] = {_mm512_add_ps(a0, b0), _mm512_add_ps(a1, b1), _mm512_add_ps(a2, b2),
                   _mm512_add_ps(a3, b3)};
    for (int r = 0; r < 4; r++)
        _mm512_storeu_si512(acc + 16 * r, _mm512_add_epi32(_mm512_loadu_si512(acc + 16 * r),
                                                           _mm512_cvtps_epi32(s[r])));
}
#else
ROW_GATHER_C(row_f32, float, float, f2f)
ROW_GATHER_C(row_bf16, uint16_t, float, bf2f)
ROW_GATHER_C(row_f16, uint16_t, float, h2f)
ROW_GATHER_C(row_i8, int8_t, int32_t, i2i)
#endif

/* y[n * ys0 + i * ys1] = sum over kept (i, c) V x[n, c] (+ bias[i]): y = x @ W^T. */
/* XACC: the packed input's type, ACC: the sums' (int8: float products, int32 sums). */ \
#define GATHER(NAME, VT, XT, OT, XACC, ACC, PACKF, ROWF, OCONV)                         \
int NAME(const VT* vals, const uint8_t* meta, int64_t M, int64_t K, const XT* x,        \
         int64_t N, int64_t xs0, int64_t xs1, const ACC* bias, OT* y, int64_t ys0,      \
         int64_t ys1, int nth) {                                                        \
    int64_t ld = ntiles(N) * BT, nt = ntiles(N), nr = (M + RB - 1) / RB;                \
    XACC* xT = (XACC*)aligned_alloc(64, (size_t)(K * ld * sizeof(XACC) + 64));          \
    if (!xT) return 1;                                                                  \
    PACKF(x, N, K, xs0, xs1, xT, nth);                                                  \
    _Pragma("omp parallel num_threads(nth)")                                            \
    {                                                                                   \
        ACC* buf = (ACC*)aligned_alloc(64, RB * BT * sizeof(ACC));                      \
        _Pragma("omp for schedule(dynamic, 1)")                                         \
        for (int64_t task = 0; task < nr * nt; task++) {                                \
            int64_t r0 = (task / nt) * RB, t0 = (task % nt) * BT;                       \
            int64_t r1 = r0 + RB < M ? r0 + RB : M, nrow = r1 - r0;                     \
            const VT* vb = vals + r0 * (K / 2);                                         \
            const uint8_t* mb = meta + r0 * (K / 4);                                    \
            memset(buf, 0, RB * BT * sizeof(ACC));                                      \
            for (int64_t k0 = 0; k0 < K; k0 += KB) {                                    \
                int64_t ng = ((k0 + KB < K ? k0 + KB : K) - k0) / 4;                    \
                const XACC* xk = xT + ((task % nt) * K + k0) * BT;                      \
                for (int64_t i = r0; i < r1; i++)                                       \
                    ROWF(vb + k0 / 2 * nrow + (i - r0) * ng * 2,                        \
                         mb + k0 / 4 * nrow + (i - r0) * ng, ng,                        \
                         xk, BT, buf + (i - r0) * BT);                                  \
            }                                                                           \
            int64_t n1 = t0 + BT < N ? t0 + BT : N;                                     \
            for (int64_t n = t0; n < n1; n++)                                           \
                for (int64_t i = r0; i < r1; i++)                                       \
                    y[n * ys0 + i * ys1] = OCONV(buf[(i - r0) * BT + (n - t0)]          \
                                                 + (bias ? bias[i] : (ACC)0));          \
        }                                                                               \
        free(buf);                                                                      \
    }                                                                                   \
    free(xT);                                                                           \
    return 0;                                                                           \
}

GATHER(ss_gather_f32, float, float, float, float, float, pack_f32, row_f32, f2f)
#ifdef __AVX512BF16__
/* bf16 with vdpbf16ps: one instruction multiplies a kept pair (v0, v1) by the pair
   (x[n, c0], x[n, c1]) for 16 n and adds both products into float32. The packed input holds,
   per tile and group of four columns, all six column pairs a < b interleaved over the tile:
   xP[(((t * G + g) * 6 + p) * BT + j) * 2 + {0, 1}] = x[n, 4g + a], x[n, 4g + b]. */
#define KB2 32
static const uint8_t PAIR_A[6] = {0, 0, 1, 0, 1, 2}, PAIR_B[6] = {1, 2, 2, 3, 3, 3};
static const int8_t SLOT[16] = {-1, -1, -1, -1, 0, -1, -1, -1, 1, 2, -1, -1, 3, 4, 5, -1};

static void pack_pairs(const uint16_t* x, int64_t N, int64_t K, int64_t s0, int64_t s1,
                       uint16_t* xP, int nth) {
    int64_t nt = ntiles(N), G = K / 4;
    #pragma omp parallel for schedule(static) num_threads(nth)
    for (int64_t task = 0; task < nt * G; task++) {
        int64_t t = task / G, g = task % G;
        uint16_t* out = xP + (t * G + g) * 6 * BT * 2;
        for (int p = 0; p < 6; p++)
            for (int64_t j = 0; j < BT; j++) {
                int64_t n = t * BT + j;
                out[(p * BT + j) * 2] = n < N ? x[n * s0 + (4 * g + PAIR_A[p]) * s1] : 0;
                out[(p * BT + j) * 2 + 1] = n < N ? x[n * s0 + (4 * g + PAIR_B[p]) * s1] : 0;
            }
    }
}

int ss_gather_bf16(const uint16_t* vals, const uint8_t* meta, int64_t M, int64_t K,
                   const uint16_t* x, int64_t N, int64_t xs0, int64_t xs1, const float* bias,
                   uint16_t* y, int64_t ys0, int64_t ys1, int nth) {
    int64_t nt = ntiles(N), nr = (M + RB - 1) / RB, G = K / 4;
    uint16_t* xP = (uint16_t*)aligned_alloc(64, (size_t)(nt * G * 6 * BT * 2 * 2 + 64));
    if (!xP) return 1;
    pack_pairs(x, N, K, xs0, xs1, xP, nth);
    #pragma omp parallel num_threads(nth)
    {
        float* buf = (float*)aligned_alloc(64, RB * BT * sizeof(float));
        #pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < nr * nt; task++) {
            int64_t r0 = (task / nt) * RB, t = task % nt, t0 = t * BT;
            int64_t r1 = r0 + RB < M ? r0 + RB : M, nrow = r1 - r0;
            memset(buf, 0, RB * BT * sizeof(float));
            for (int64_t g0 = 0; g0 < G; g0 += KB2 / 4) {
                int64_t g1 = g0 + KB2 / 4 < G ? g0 + KB2 / 4 : G;
                int64_t kb0 = g0 * 4 / KB * KB, h = g0 - kb0 / 4;
                int64_t ngb = ((kb0 + KB < K ? kb0 + KB : K) - kb0) / 4;
                const uint16_t* xg = xP + (t * G + g0) * 6 * BT * 2;
                for (int64_t i = r0; i < r1; i++) {
                    float* acc = buf + (i - r0) * BT;
                    const uint32_t* v = (const uint32_t*)(vals + r0 * (K / 2) + kb0 / 2 * nrow
                                                          + (i - r0) * ngb * 2) + h;
                    const uint8_t* code = meta + r0 * (K / 4) + kb0 / 4 * nrow + (i - r0) * ngb + h;
                    __m512 a0 = _mm512_loadu_ps(acc), a1 = _mm512_loadu_ps(acc + 16);
                    __m512 a2 = _mm512_loadu_ps(acc + 32), a3 = _mm512_loadu_ps(acc + 48);
                    __m512 b0 = _mm512_setzero_ps(), b1 = b0, b2 = b0, b3 = b0;
                    int64_t g = 0;
                    for (; g + 1 < g1 - g0; g += 2) {     /* two groups: 8 independent sums */
                        __m512bh w = (__m512bh)_mm512_set1_epi32((int)v[g]);
                        __m512bh u = (__m512bh)_mm512_set1_epi32((int)v[g + 1]);
                        const uint16_t* xp = xg + (g * 6 + SLOT[code[g]]) * BT * 2;
                        const uint16_t* xq = xg + ((g + 1) * 6 + SLOT[code[g + 1]]) * BT * 2;
                        a0 = _mm512_dpbf16_ps(a0, w, (__m512bh)_mm512_loadu_si512(xp));
                        a1 = _mm512_dpbf16_ps(a1, w, (__m512bh)_mm512_loadu_si512(xp + 32));
                        a2 = _mm512_dpbf16_ps(a2, w, (__m512bh)_mm512_loadu_si512(xp + 64));
                        a3 = _mm512_dpbf16_ps(a3, w, (__m512bh)_mm512_loadu_si512(xp + 96));
                        b0 = _mm512_dpbf16_ps(b0, u, (__m512bh)_mm512_loadu_si512(xq));
                        b1 = _mm512_dpbf16_ps(b1, u, (__m512bh)_mm512_loadu_si512(xq + 32));
                        b2 = _mm512_dpbf16_ps(b2, u, (__m512bh)_mm512_loadu_si512(xq + 64));
                        b3 = _mm512_dpbf16_ps(b3, u, (__m512bh)_mm512_loadu_si512(xq + 96));
                    }
                    for (; g < g1 - g0; g++) {
                        __m512bh w = (__m512bh)_mm512_set1_epi32((int)v[g]);
                        const uint16_t* xp = xg + (g * 6 + SLOT[code[g]]) * BT * 2;
                        a0 = _mm512_dpbf16_ps(a0, w, (__m512bh)_mm512_loadu_si512(xp));
                        a1 = _mm512_dpbf16_ps(a1, w, (__m512bh)_mm512_loadu_si512(xp + 32));
                        a2 = _mm512_dpbf16_ps(a2, w, (__m512bh)_mm512_loadu_si512(xp + 64));
                        a3 = _mm512_dpbf16_ps(a3, w, (__m512bh)_mm512_loadu_si512(xp + 96));
                    }
                    _mm512_storeu_ps(acc, _mm512_add_ps(a0, b0));
                    _mm512_storeu_ps(acc + 16, _mm512_add_ps(a1, b1));
                    _mm512_storeu_ps(acc + 32, _mm512_add_ps(a2, b2));
                    _mm512_storeu_ps(acc + 48, _mm512_add_ps(a3, b3));
                }
            }
            int64_t n1 = t0 + BT < N ? t0 + BT : N;
            for (int64_t n = t0; n < n1; n++)
                for (int64_t i = r0; i < r1; i++)
                    y[n * ys0 + i * ys1] = f2bf(buf[(i - r0) * BT + (n - t0)]
                                                + (bias ? bias[i] : 0.f));
        }
        free(buf);
    }
    free(xP);
    return 0;
}
#else
GATHER(ss_gather_bf16, uint16_t, uint16_t, uint16_t, float, float, pack_bf16, row_bf16, f2bf)
#endif
GATHER(ss_gather_f16, uint16_t, uint16_t, uint16_t, float, float, pack_f16, row_f16, f2h)
#ifdef __AVX512F__
GATHER(ss_gather_i8, int8_t, int8_t, int8_t, float, int32_t, pack_i8f, row_i8, i2b)
#else
GATHER(ss_gather_i8, int8_t, int8_t, int8_t, int32_t, int32_t, pack_i8, row_i8, i2b)
#endif

/* y[n * ys0 + c * ys1] = sum over kept (i, c) V x[n, i]: y = x @ W (x has M columns). */
#define SCATTER(NAME, VT, XT, OT, ACC, PACKF, VCONV, OCONV)                             \
int NAME(const VT* vals, const uint8_t* meta, int64_t M, int64_t K, const XT* x,        \
         int64_t N, int64_t xs0, int64_t xs1, OT* y, int64_t ys0, int64_t ys1, int nth) {\
    int64_t ld = ntiles(N) * BT, nt = ntiles(N), nc = (K + KB - 1) / KB;                \
    ACC* xT = (ACC*)aligned_alloc(64, (size_t)(M * ld * sizeof(ACC) + 64));             \
    if (!xT) return 1;                                                                  \
    PACKF(x, N, M, xs0, xs1, xT, nth);                                                  \
    _Pragma("omp parallel num_threads(nth)")                                            \
    {                                                                                   \
        ACC* buf = (ACC*)aligned_alloc(64, KB * BT * sizeof(ACC));                      \
        _Pragma("omp for schedule(dynamic, 1)")                                         \
        for (int64_t task = 0; task < nc * nt; task++) {                                \
            int64_t k0 = (task / nt) * KB, t0 = (task % nt) * BT;                       \
            int64_t k1 = k0 + KB < K ? k0 + KB : K, ng = (k1 - k0) / 4;                 \
            memset(buf, 0, KB * BT * sizeof(ACC));                                      \
            for (int64_t i = 0; i < M; i++) {                                           \
                const ACC* xi = xT + ((task % nt) * M + i) * BT;                        \
                const VT* v = vals + k0 / 2 * M + i * ng * 2;                           \
                const uint8_t* code = meta + k0 / 4 * M + i * ng;                       \
                for (int64_t g = 0; g < ng; g++) {                                      \
                    ACC w0 = VCONV(v[2 * g]), w1 = VCONV(v[2 * g + 1]);                 \
                    ACC* o0 = buf + (4 * g + (code[g] & 3)) * BT;                       \
                    ACC* o1 = buf + (4 * g + (code[g] >> 2)) * BT;                      \
                    for (int n = 0; n < BT; n++) o0[n] += w0 * xi[n];                   \
                    for (int n = 0; n < BT; n++) o1[n] += w1 * xi[n];                   \
                }                                                                       \
            }                                                                           \
            int64_t n1 = t0 + BT < N ? t0 + BT : N;                                     \
            for (int64_t n = t0; n < n1; n++)                                           \
                for (int64_t c = k0; c < k1; c++)                                       \
                    y[n * ys0 + c * ys1] = OCONV(buf[(c - k0) * BT + (n - t0)]);        \
        }                                                                               \
        free(buf);                                                                      \
    }                                                                                   \
    free(xT);                                                                           \
    return 0;                                                                           \
}

SCATTER(ss_scatter_f32, float, float, float, float, pack_f32, f2f, f2f)
SCATTER(ss_scatter_bf16, uint16_t, uint16_t, uint16_t, float, pack_bf16, bf2f, f2bf)
SCATTER(ss_scatter_f16, uint16_t, uint16_t, uint16_t, float, pack_f16, h2f, f2h)
SCATTER(ss_scatter_i8, int8_t, int8_t, int8_t, int32_t, pack_i8, i2i, i2b)
"""

_SUFFIX = {"float32": "f32", "bfloat16": "bf16", "float16": "f16", "int8": "i8"}
_P = ctypes.c_void_p
_I = ctypes.c_int64


def _lib():
    lib = load_native("2:4 semi-structured sparse", _SOURCE)
    if lib is not None and not getattr(lib, "_ss_typed", False):
        for s in _SUFFIX.values():
            f = getattr(lib, f"ss_gather_{s}")
            f.argtypes = [_P, _P, _I, _I, _P, _I, _I, _I, _P, _P, _I, _I, ctypes.c_int]
            f.restype = ctypes.c_int
            f = getattr(lib, f"ss_scatter_{s}")
            f.argtypes = [_P, _P, _I, _I, _P, _I, _I, _I, _P, _I, _I, ctypes.c_int]
            f.restype = ctypes.c_int
        lib._ss_typed = True
    return lib


def _acc_dtype(dtype):
    return np.int32 if dtype == np.int8 else np.float32


def _strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def _check(rc, what):
    if rc:
        raise MemoryError(f"{what}: could not allocate the packed input")


def blocked(vals, meta, by_rows):
    """`vals`, `meta` reordered for the kernels (flat arrays): block by block of KB columns,
    each block's slice of every row one after the other; `by_rows` (the gather kernel's
    order): within each block of RB rows first, so one row block's pass reads one run."""
    k, m = vals.shape[1] * 2, vals.shape[0]
    row_blocks = [(r, min(r + RB, m)) for r in range(0, m, RB)] if by_rows else [(0, m)]
    cols = [(c, min(c + KB, k)) for c in range(0, k, KB)]
    vb = [vals[r0:r1, c0 // 2:c1 // 2].reshape(-1) for r0, r1 in row_blocks for c0, c1 in cols]
    mb = [meta[r0:r1, c0 // 4:c1 // 4].reshape(-1) for r0, r1 in row_blocks for c0, c1 in cols]
    return (np.concatenate(vb) if vb else vals.reshape(-1),
            np.concatenate(mb) if mb else meta.reshape(-1))


def gather(vals, meta, x, bias=None, layout=None):
    """x (N, k) @ W^T -> (N, m), W the (m, k) 2:4 matrix of `vals` (m, k/2) / `meta`
    (m, k/4); bias (m,) in the accumulator dtype (float32, or int32 for int8) or None;
    `layout`: blocked(vals, meta, True) when the caller keeps it."""
    m, k = vals.shape[0], vals.shape[1] * 2
    n = x.shape[0]
    y = np.empty((n, m), vals.dtype)
    lib = _lib()
    if lib is None or n == 0 or m == 0 or k == 0:
        return _gather_numpy(vals, meta, x, bias, y)
    xs0, xs1 = _strides(x)
    vb, mb = layout or blocked(vals, meta, True)
    fn = getattr(lib, f"ss_gather_{_SUFFIX[vals.dtype.name]}")
    _check(fn(vb.ctypes.data, mb.ctypes.data, m, k, x.ctypes.data, n, xs0, xs1,
              None if bias is None else bias.ctypes.data, y.ctypes.data, m, 1, threads()),
           "semi-structured mm")
    return y


def scatter(vals, meta, x, layout=None):
    """x (N, m) @ W -> (N, k), with W the (m, k) 2:4 matrix of `vals` / `meta`;
    `layout`: blocked(vals, meta, False) when the caller keeps it."""
    m, k = vals.shape[0], vals.shape[1] * 2
    n = x.shape[0]
    y = np.empty((n, k), vals.dtype)
    lib = _lib()
    if lib is None or n == 0 or m == 0 or k == 0:
        return _scatter_numpy(vals, meta, x, y)
    xs0, xs1 = _strides(x)
    vb, mb = layout or blocked(vals, meta, False)
    fn = getattr(lib, f"ss_scatter_{_SUFFIX[vals.dtype.name]}")
    _check(fn(vb.ctypes.data, mb.ctypes.data, m, k, x.ctypes.data, n, xs0, xs1,
              y.ctypes.data, k, 1, threads()), "semi-structured mm")
    return y


def columns(meta):
    """(m, k/2) column index of each kept value, from the (m, k/4) codes."""
    base = 4 * np.arange(meta.shape[1], dtype=np.int64)
    c0 = base + (meta & 3).astype(np.int64)
    c1 = base + (meta >> 2).astype(np.int64)
    return np.stack([c0, c1], axis=-1).reshape(meta.shape[0], -1)


def _gather_numpy(vals, meta, x, bias, y):
    acc = _acc_dtype(vals.dtype)
    xa = np.asarray(x, acc)
    cols = columns(meta)
    out = np.einsum("mj,nmj->nm", vals.astype(acc), xa[:, cols]) if xa.size and cols.size \
        else np.zeros((x.shape[0], vals.shape[0]), acc)
    if bias is not None:
        out = out + bias
    y[...] = out.astype(y.dtype) if acc is np.float32 else out.astype(np.int8)
    return y


def _scatter_numpy(vals, meta, x, y):
    acc = _acc_dtype(vals.dtype)
    m, h = vals.shape
    dense = np.zeros((m, 2 * h), acc)
    np.put_along_axis(dense, columns(meta), vals.astype(acc), axis=1)
    y[...] = (np.asarray(x, acc) @ dense).astype(y.dtype)
    return y
