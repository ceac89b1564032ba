"""batch_norm forward and backward for bfloat16/float16 inputs, in C.

Why: the NumPy kernels compute half precision through float32 copies (widen the input,
five full-size passes, round the output), which made a bf16 autocast step's batch norms
cost more than float32's. These loops read the half-precision bits, keep the per-channel
sums in double and write the rounded result in one more pass: two passes over the data
forward, two backward. Same arithmetic as the NumPy kernels (statistics recomputed from
the input, PyTorch's formulas), one rounding at the end. Small or non-contiguous inputs and
machines without a C compiler keep the NumPy path.
"""
import ctypes

import ml_dtypes
import numpy as np

from ._lowp import cast

__all__ = ["forward", "backward"]

_SOURCE = r"""
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float ld(const uint16_t* p, int64_t i, int bf) {
    if (bf) { uint32_t u = (uint32_t)p[i] << 16; float f; memcpy(&f, &u, 4); return f; }
    _Float16 h; memcpy(&h, p + i, 2); return (float)h;
}
static inline uint16_t st(float f, int bf) {
    if (bf) {
        uint32_t u; memcpy(&u, &f, 4);
        if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
        return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
    _Float16 h = (_Float16)f; uint16_t r; memcpy(&r, &h, 2); return r;
}

/* Per-channel mean and 1/sqrt(var + eps) of x (N, C, S): training statistics. */
static void stats(const uint16_t* x, int64_t N, int64_t C, int64_t S, int bf, double eps,
                  float* mean, float* invstd) {
    for (int64_t c = 0; c < C; c++) {
        double s = 0, q = 0;
        for (int64_t n = 0; n < N; n++) {
            const uint16_t* p = x + (n * C + c) * S;
            for (int64_t i = 0; i < S; i++) { double v = ld(p, i, bf); s += v; q += v * v; }
        }
        double m = (double)(N * S), mu = s / m, var = q / m - mu * mu;
        mean[c] = (float)mu;
        invstd[c] = (float)(1.0 / sqrt((var > 0 ? var : 0) + eps));
    }
}

/* y = (x - mean) * (invstd * w) + b; mean/invstd given (eval) or computed (training). */
void bn16_forward(const uint16_t* x, uint16_t* y, int64_t N, int64_t C, int64_t S, int bf,
                  int training, double eps, const float* w, const float* b, float* mean,
                  float* invstd) {
    if (training) stats(x, N, C, S, bf, eps, mean, invstd);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            const float mu = mean[c], sc = invstd[c] * (w ? w[c] : 1.0f), sh = b ? b[c] : 0.0f;
            const uint16_t* p = x + (n * C + c) * S;
            uint16_t* q = y + (n * C + c) * S;
            for (int64_t i = 0; i < S; i++) q[i] = st((ld(p, i, bf) - mu) * sc + sh, bf);
        }
}

/* grad_input (half) and the per-channel sums gsum = sum(g), gdot = sum(g * (x - mean)). */
void bn16_backward(const uint16_t* g, const uint16_t* x, uint16_t* gx, int64_t N, int64_t C,
                   int64_t S, int bf, int training, double eps, const float* w, float* mean,
                   float* invstd, float* gsum, float* gdot) {
    for (int64_t c = 0; c < C; c++) {
        double s = 0, q = 0, gs = 0, gxs = 0;
        for (int64_t n = 0; n < N; n++) {
            const uint16_t* p = x + (n * C + c) * S;
            const uint16_t* r = g + (n * C + c) * S;
            for (int64_t i = 0; i < S; i++) {
                double v = ld(p, i, bf), d = ld(r, i, bf);
                s += v; q += v * v; gs += d; gxs += d * v;
            }
        }
        double m = (double)(N * S);
        if (training) {
            double mu = s / m, var = q / m - mu * mu;
            mean[c] = (float)mu;
            invstd[c] = (float)(1.0 / sqrt((var > 0 ? var : 0) + eps));
        }
        gsum[c] = (float)gs;
        gdot[c] = (float)(gxs - (double)mean[c] * gs);
    }
    double m = (double)(N * S);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            const float is = invstd[c], sc = is * (w ? w[c] : 1.0f), mu = mean[c];
            const float k = training ? (float)(is * is * gdot[c] / m) : 0.0f;
            const float gm = training ? (float)(gsum[c] / m) : 0.0f;
            const uint16_t* p = x + (n * C + c) * S;
            const uint16_t* r = g + (n * C + c) * S;
            uint16_t* o = gx + (n * C + c) * S;
            for (int64_t i = 0; i < S; i++)
                o[i] = st((ld(r, i, bf) - (ld(p, i, bf) - mu) * k - gm) * sc, bf);
        }
}
"""

_HALF = {np.dtype(ml_dtypes.bfloat16): 1, np.dtype(np.float16): 0}
_MIN_SIZE = 4096
_LIB = []


def _lib():
    if not _LIB:
        from .._inductor.native import load_native
        lib = load_native("half-precision batch_norm", _SOURCE)
        if lib is not None:
            vp, i64, i32, f64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_double
            lib.bn16_forward.argtypes = (vp, vp, i64, i64, i64, i32, i32, f64, vp, vp, vp, vp)
            lib.bn16_backward.argtypes = (vp, vp, vp, i64, i64, i64, i32, i32, f64, vp, vp, vp,
                                          vp, vp)
            lib.bn16_forward.restype = lib.bn16_backward.restype = None
        _LIB.append(lib)
    return _LIB[0]


def _served(x):
    return x.dtype in _HALF and x.ndim >= 2 and x.size >= _MIN_SIZE and x.flags.c_contiguous


def _f32(p):
    return None if p is None else np.ascontiguousarray(cast(p.reshape(-1), np.float32))


def _ptr(a):
    return None if a is None else a.ctypes.data


def _channel_stats(rm, rv, c, training, eps):
    if training:
        return np.empty(c, np.float32), np.empty(c, np.float32)
    mean = _f32(rm).copy()
    return mean, (1 / np.sqrt(_f32(rv) + np.float32(eps))).astype(np.float32)


def forward(x, w, b, rm, rv, training, eps):
    """batch_norm's output for a half-precision x, or None when this path does not serve it."""
    lib = _lib() if _served(x) else None
    if lib is None:
        return None
    N, C = x.shape[:2]
    mean, invstd = _channel_stats(rm, rv, C, training, eps)
    w32, b32 = _f32(w), _f32(b)
    y = np.empty(x.shape, x.dtype)
    lib.bn16_forward(x.ctypes.data, y.ctypes.data, N, C, x.size // (N * C), _HALF[x.dtype],
                     int(bool(training)), eps, _ptr(w32), _ptr(b32), mean.ctypes.data,
                     invstd.ctypes.data)
    return y


def backward(g, x, w, rm, rv, training, eps):
    """(grad_input, grad_weight, grad_bias) for half-precision g and x, or None."""
    lib = _lib() if _served(x) and g.dtype == x.dtype and g.shape == x.shape \
        and g.flags.c_contiguous else None
    if lib is None:
        return None
    N, C = x.shape[:2]
    mean, invstd = _channel_stats(rm, rv, C, training, eps)
    gsum, gdot = np.empty(C, np.float32), np.empty(C, np.float32)
    w32 = _f32(w)
    gx = np.empty(x.shape, x.dtype)
    lib.bn16_backward(g.ctypes.data, x.ctypes.data, gx.ctypes.data, N, C, x.size // (N * C),
                      _HALF[x.dtype], int(bool(training)), eps, _ptr(w32), mean.ctypes.data,
                      invstd.ctypes.data, gsum.ctypes.data, gdot.ctypes.data)
    pdt = np.float32 if w is None else w.dtype
    return gx, cast(gdot * invstd, pdt), cast(gsum, pdt)
