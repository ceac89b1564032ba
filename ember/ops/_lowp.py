"""float32 <-> bfloat16/float16 casts for the eager kernels, in C.

Why: half-precision kernels compute in float32 and round once (`_dtype.compute_dtype`), so a
bf16 autocast step casts every activation twice or more. NumPy's casts to these types are
element-at-a-time loops (float32 -> float16 ~3.7 ms and -> bfloat16 ~0.5 ms per million
elements here), which made a bf16 step slower than float32. The C loops below vectorize
(F16C / AVX-512 for float16; integer round-to-nearest-even for bfloat16, which also keeps
subnormals, unlike the AVX-512 BF16 conversion instruction that flushes them) and give the
same bits as NumPy/ml_dtypes and PyTorch. Small or non-contiguous arrays keep NumPy's cast.
"""
import ctypes

import ml_dtypes
import numpy as np

__all__ = ["cast", "relu", "relu_backward"]

_SOURCE = r"""
#include <stdint.h>
void f32_to_bf16(const uint32_t* x, uint16_t* y, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = x[i];
        uint16_t r = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        y[i] = ((u & 0x7fffffffu) > 0x7f800000u) ? (uint16_t)((u >> 16) | 0x40u) : r;
    }
}
void bf16_to_f32(const uint16_t* x, uint32_t* y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = (uint32_t)x[i] << 16;
}
void f32_to_f16(const float* x, _Float16* y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = (_Float16)x[i];
}
void f16_to_f32(const _Float16* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = (float)x[i];
}
/* relu on the bits of bf16/fp16: negative, non-zero, non-NaN values (bits in (0x8000, ninf])
   become +0; -0.0 and NaN stay (PyTorch's relu). */
void relu16(const uint16_t* x, uint16_t* y, int64_t n, uint16_t ninf) {
    for (int64_t i = 0; i < n; i++) {
        uint16_t v = x[i];
        y[i] = (v > 0x8000u && v <= ninf) ? 0 : v;
    }
}
/* threshold_backward(g, out, 0) on the bits: g where out > 0 or out is NaN, else +0. */
void relu16_backward(const uint16_t* g, const uint16_t* out, uint16_t* r, int64_t n,
                     uint16_t pinf) {
    for (int64_t i = 0; i < n; i++) {
        uint16_t o = out[i];
        int keep = (o != 0 && o <= pinf) || (uint16_t)(o & 0x7fffu) > pinf;
        r[i] = keep ? g[i] : 0;
    }
}
"""

_F32, _BF16, _F16 = np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)
_NAMES = {(_F32, _BF16): "f32_to_bf16", (_BF16, _F32): "bf16_to_f32",
          (_F32, _F16): "f32_to_f16", (_F16, _F32): "f16_to_f32"}
_MIN_SIZE = 4096            # below this a ctypes call costs more than NumPy's loop
_FUNCS = {}                 # name -> ctypes function, or None: no C compiler here
_VP, _I64, _U16 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_uint16
_ARGS = {"relu16": (_VP, _VP, _I64, _U16), "relu16_backward": (_VP, _VP, _VP, _I64, _U16)}
# the bits of -inf / +inf: the ends of the negative / positive non-NaN ranges
_NINF = {_BF16: 0xFF80, _F16: 0xFC00}
_PINF = {_BF16: 0x7F80, _F16: 0x7C00}


def _func(name):
    f = _FUNCS.get(name, False)
    if f is False:
        from .._inductor.native import load_native
        lib = load_native("float32/bfloat16/float16 cast", _SOURCE)
        for n in (*_NAMES.values(), *_ARGS):
            _FUNCS[n] = None if lib is None else getattr(lib, n)
            if lib is not None:
                _FUNCS[n].argtypes, _FUNCS[n].restype = _ARGS.get(n, (_VP, _VP, _I64)), None
        f = _FUNCS[name]
    return f


def relu(a):
    """relu of a bfloat16/float16 array on its bits (no float32 copy), or None when this path
    does not serve it (other dtypes, small or non-contiguous arrays, no C compiler)."""
    lim = _NINF.get(a.dtype)
    if lim is None or a.size < _MIN_SIZE or not a.flags.c_contiguous:
        return None
    f = _func("relu16")
    if f is None:
        return None
    out = np.empty(a.shape, a.dtype)
    f(a.ctypes.data, out.ctypes.data, a.size, lim)
    return out


def relu_backward(g, out):
    """threshold_backward(g, out, 0) for bfloat16/float16 arrays of one shape on their bits,
    or None (as relu)."""
    lim = _PINF.get(g.dtype)
    if lim is None or out.dtype != g.dtype or g.shape != out.shape or g.size < _MIN_SIZE \
            or not (g.flags.c_contiguous and out.flags.c_contiguous):
        return None
    f = _func("relu16_backward")
    if f is None:
        return None
    res = np.empty(g.shape, g.dtype)
    f(g.ctypes.data, out.ctypes.data, res.ctypes.data, g.size, lim)
    return res


def cast(a, np_dtype, copy=True):
    """`a.astype(np_dtype, copy=copy)`, through C for large C-contiguous float32 <->
    bfloat16/float16 casts (same bits, same layout)."""
    np_dtype = np.dtype(np_dtype)
    name = _NAMES.get((a.dtype, np_dtype))
    if name is None or a.size < _MIN_SIZE or not a.flags.c_contiguous:
        return a.astype(np_dtype, copy=copy)
    f = _func(name)
    if f is None:
        return a.astype(np_dtype)
    out = np.empty(a.shape, np_dtype)
    f(a.ctypes.data, out.ctypes.data, a.size)
    return out
