"""bfloat16 matrix product with float32 accumulation, in C (AVX-512 BF16 `vdpbf16ps`).

Why: a bf16 matmul that casts both operands to float32, runs sgemm and rounds back moves
three times the bytes of the bf16 operands and is slower than float32 itself, so an
autocast step ran slower than float32. OpenBLAS ships no sbgemm in NumPy's build. This
kernel multiplies pairs of bf16 along K with the CPU's bf16 dot-product instruction
(twice the multiply-adds of an fp32 FMA per instruction), accumulates in float32 and
rounds once, as PyTorch's CPU bf16 matmul does. Without AVX512_BF16 (or a C compiler) the
cast + sgemm path stays.
"""
import ctypes

import ml_dtypes
import numpy as np

__all__ = ["mm"]

_SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef __AVX512BF16__
#include <immintrin.h>
#define MR 12
#define KC 256
#define NC 512

/* B block (rows k0..k0+kc, cols n0..n0+nc; kc even) packed as [kc/2][ncp][2]: the pairs
   along K that vdpbf16ps multiplies, zero-padded to a multiple of 32 columns. */
static void pack_b(const uint16_t* B, int64_t sbk, int64_t sbn, int64_t k0, int64_t kc,
                   int64_t n0, int64_t nc, int64_t ncp, uint16_t* P) {
    if (sbk == 1 && sbn % 2 == 0 && k0 % 2 == 0) {   /* B = W^T, W row-major: 32-bit pairs */
        uint32_t* P32 = (uint32_t*)P;
        for (int64_t jb = 0; jb < nc; jb += 16) {
            int64_t je = jb + 16 < nc ? jb + 16 : nc;
            for (int64_t kp = 0; kp < kc / 2; kp++)
                for (int64_t j = jb; j < je; j++)
                    P32[kp * ncp + j] = ((const uint32_t*)(B + (n0 + j) * sbn + k0))[kp];
        }
    } else {
        for (int64_t kp = 0; kp < kc / 2; kp++) {
            uint16_t* row = P + kp * ncp * 2;
            const uint16_t* ba = B + (k0 + 2 * kp) * sbk + n0 * sbn;
            const uint16_t* bb = ba + sbk;
            for (int64_t j = 0; j < nc; j++) {
                row[2 * j] = ba[j * sbn];
                row[2 * j + 1] = bb[j * sbn];
            }
        }
    }
    for (int64_t kp = 0; kp < kc / 2; kp++)
        for (int64_t j = nc; j < ncp; j++)
            ((uint32_t*)P)[kp * ncp + j] = 0;
}

static inline void store_tile(float* c, __m512 v0, __m512 v1, int64_t w) {
    if (w >= 32) {
        _mm512_storeu_ps(c, _mm512_add_ps(_mm512_loadu_ps(c), v0));
        _mm512_storeu_ps(c + 16, _mm512_add_ps(_mm512_loadu_ps(c + 16), v1));
    } else {
        float tmp[32];
        _mm512_storeu_ps(tmp, v0); _mm512_storeu_ps(tmp + 16, v1);
        for (int64_t t = 0; t < w; t++) c[t] += tmp[t];
    }
}

/* C rows m0..m0+R (R == MR: the unrolled full tile) += A[rows, k0..k0+kc] @ packed B. */
#define MICRO(NAME, R_EXPR)                                                                  \
static void NAME(const uint16_t* A, int64_t lda, int64_t m0, int64_t R, int64_t k0,         \
                 int64_t kc, const uint16_t* P, int64_t ncp, int64_t nc, float* C,          \
                 int64_t ldc, int64_t n0) {                                                  \
    const int64_t rows = R_EXPR;                                                             \
    for (int64_t j = 0; j < ncp; j += 32) {                                                  \
        __m512 acc0[MR], acc1[MR];                                                           \
        for (int i = 0; i < rows; i++) {                                                     \
            acc0[i] = _mm512_setzero_ps(); acc1[i] = _mm512_setzero_ps();                      \
        }                                                                                    \
        const uint32_t* a32 = (const uint32_t*)(A + m0 * lda + k0);                         \
        for (int64_t kp = 0; kp < kc / 2; kp++) {                                            \
            const uint16_t* prow = P + kp * ncp * 2 + j * 2;                                 \
            __m512bh b0 = (__m512bh)_mm512_loadu_si512((const void*)prow);                   \
            __m512bh b1 = (__m512bh)_mm512_loadu_si512((const void*)(prow + 32));            \
            for (int i = 0; i < rows; i++) {                                                 \
                __m512bh a = (__m512bh)_mm512_set1_epi32((int)a32[i * (lda / 2) + kp]);     \
                acc0[i] = _mm512_dpbf16_ps(acc0[i], a, b0);                                  \
                acc1[i] = _mm512_dpbf16_ps(acc1[i], a, b1);                                  \
            }                                                                                \
        }                                                                                    \
        for (int i = 0; i < rows; i++)                                                       \
            store_tile(C + (m0 + i) * ldc + n0 + j, acc0[i], acc1[i], nc - j);               \
    }                                                                                        \
}
MICRO(micro_full, MR)
MICRO(micro_rest, R)
#endif

int bf16_gemm_available(void) {
#ifdef __AVX512BF16__
    return 1;
#else
    return 0;
#endif
}

/* C[M,N] (float32, contiguous, zeroed by the caller) = A[M,K] (bf16, row stride lda, unit
   K stride, lda even) @ B[K,N] (bf16, strides sbk, sbn in elements); K even. */
void bf16_gemm(const uint16_t* A, int64_t lda, const uint16_t* B, int64_t sbk, int64_t sbn,
               float* C, int64_t M, int64_t N, int64_t K, int nthreads) {
#ifdef __AVX512BF16__
    /* One parallel region, no barrier inside: each thread takes a band of rows and packs
       the B blocks it reads itself (K*N extra work per thread against M*N*K/threads of
       products). A barrier per block made the product 100x slower whenever the cores were
       busy with other processes (OpenMP's waiting threads spin against the workers). */
    int64_t bands = (M + MR - 1) / MR;
    int nt = (nthreads > 1 && M * N * K > (1 << 24) && bands >= 2 * nthreads) ? nthreads : 1;
    #pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int t = 0, T = 1;
#ifdef _OPENMP
        t = omp_get_thread_num(); T = omp_get_num_threads();
#endif
        int64_t b0 = bands * t / T, b1 = bands * (t + 1) / T;
        int64_t mlo = b0 * MR, mhi = b1 * MR < M ? b1 * MR : M;
        uint16_t* P = (uint16_t*)aligned_alloc(64, (size_t)(KC / 2) * ((NC + 31) / 32 * 32) * 4);
        for (int64_t n0 = 0; n0 < N && mlo < mhi; n0 += NC) {
            int64_t nc = N - n0 < NC ? N - n0 : NC;
            int64_t ncp = (nc + 31) / 32 * 32;
            for (int64_t k0 = 0; k0 < K; k0 += KC) {
                int64_t kc = K - k0 < KC ? K - k0 : KC;
                pack_b(B, sbk, sbn, k0, kc, n0, nc, ncp, P);
                for (int64_t m0 = mlo; m0 < mhi; m0 += MR) {
                    if (mhi - m0 >= MR) micro_full(A, lda, m0, MR, k0, kc, P, ncp, nc, C, N, n0);
                    else micro_rest(A, lda, m0, mhi - m0, k0, kc, P, ncp, nc, C, N, n0);
                }
            }
        }
        free(P);
    }
#endif
}
"""

_BF16 = np.dtype(ml_dtypes.bfloat16)
_MIN_WORK = 1 << 18          # multiply-adds below which cast + sgemm is as fast
_LIB = []


def _lib():
    if not _LIB:
        from .._inductor.native import load_native
        lib = load_native("bfloat16 matmul", _SOURCE)
        if lib is not None and lib.bf16_gemm_available():
            vp, i64 = ctypes.c_void_p, ctypes.c_int64
            lib.bf16_gemm.argtypes = (vp, i64, vp, i64, i64, vp, i64, i64, i64, ctypes.c_int)
            lib.bf16_gemm.restype = None
            _LIB.append(lib.bf16_gemm)
        else:
            _LIB.append(None)
    return _LIB[0]


def mm(a, b):
    """a @ b for 2-D bfloat16 arrays, float32 result (rounded by the caller), or None
    when this kernel does not serve the call (no AVX512_BF16, tiny or empty product)."""
    M, K = a.shape
    N = b.shape[1]
    if M * N * K < _MIN_WORK or M == 0 or N == 0 or K == 0:
        return None
    f = _lib()
    if f is None:
        return None
    if K % 2:                    # the kernel multiplies pairs along K: pad with a zero
        a = np.concatenate([a, np.zeros((M, 1), a.dtype)], axis=1)
        b = np.concatenate([b, np.zeros((1, N), b.dtype)], axis=0)
        K += 1
    if a.strides[1] != 2 or a.strides[0] % 4 or a.ctypes.data % 4:   # pairs load as uint32
        a = np.ascontiguousarray(a)
    if b.strides[0] % 2 or b.strides[1] % 2:
        return None
    from .._inductor.native import threads
    c = np.zeros((M, N), np.float32)
    f(a.ctypes.data, a.strides[0] // 2, b.ctypes.data, b.strides[0] // 2, b.strides[1] // 2,
      c.ctypes.data, M, N, K, threads())
    return c
