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

__all__ = ["cast"]

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
"""

_F32, _BF16, _F16 = np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)
_NAMES = {(_F32, _BF16): "f32_to_bf16", (_BF16, _F32): "bf16_to_f32",
          (_F32, _F16): "f32_to_f16", (_F16, _F32): "f16_to_f32"}
_MIN_SIZE = 4096            # below this a ctypes call costs more than NumPy's loop
_FUNCS = {}                 # name -> ctypes function, or None: no C compiler here
_VP, _I64 = ctypes.c_void_p, ctypes.c_int64


def _func(name):
    f = _FUNCS.get(name, False)
    if f is False:
        from .._inductor.native import load_native
        lib = load_native("float32/bfloat16/float16 cast", _SOURCE)
        for n in _NAMES.values():
            _FUNCS[n] = None if lib is None else getattr(lib, n)
            if lib is not None:
                _FUNCS[n].argtypes, _FUNCS[n].restype = (_VP, _VP, _I64), None
        f = _FUNCS[name]
    return f


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
