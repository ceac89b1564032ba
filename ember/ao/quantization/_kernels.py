"""int8 linear and conv2d kernels: int32 accumulation, per-channel requantization, fused relu.

Why C: NumPy has no integer GEMM (its int matmul is a triple loop) and float GEMM on int8
data forfeits the 4x of VNNI's u8 x s8 dot products. `_int8_kernels.c` holds the kernels
(built once through ember._inductor.native, -march=native, OpenMP); without a C compiler
the same integers come from the NumPy path below (float64 matmul, exact for these sums).

Math (PyTorch's quantized linear/conv, x86 engine):
    acc[c]  = sum_k (x[k] - x_zp) * w[c, k]                    (int32)
    real[c] = acc[c] * x_scale * w_scale[c] + bias[c]          (float32)
    out[c]  = clamp(round_half_even(real[c] / out_scale) + out_zp, qmin, qmax)
A fused relu/hardtanh clamps real[c] to [lo, hi] first; in the quantized domain that is
exactly clamping to [quantize(lo), quantize(hi)] (quantization is monotonic). The float32
variant returns real[c], clamped.
The C kernels take symmetric weights (zero point 0, as PyTorch's x86 and XNNPACK quantizers
make them); a weight with nonzero zero points takes the NumPy path, w - w_zp.
"""
import ctypes
import functools
import os

import numpy as np

__all__ = ["qlinear", "qconv2d", "native_lib"]

_P, _I64, _I32, _F = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32, ctypes.c_float
_REQUANT = [_P, _P, _F, _I32, _I32, _I32, _I32, _F, _F]     # _Requant.args()
_SIGS = {
    "em_q_set_threads": [ctypes.c_int],
    "em_q_conv2d": [_P] + [_I64] * 4 + [_P] + [_I64] * 12 + [_I32, _I32] + _REQUANT + [_P],
    "em_q_linear": [_P, _I64, _I64, _P, _I64, _I32, _I32] + _REQUANT + [_P],
}


def native_lib():
    """The int8 kernels' ctypes library (None without a C compiler), with OpenMP set to
    ember.get_num_threads() — one thread in a forked child, whose OpenMP pool is gone (the
    inductor's rule; the OpenMP setting is per process, so its record is shared)."""
    lib = _library()
    if lib is not None:
        from ..._inductor import compile_fx as cfx
        from ..._inductor.native import threads
        n = threads()
        if n != cfx._THREADS[0]:
            lib.em_q_set_threads(int(n))
            cfx._THREADS[0] = n
    return lib


@functools.lru_cache(maxsize=None)
def _library():
    """The ctypes library of the int8 kernels, or None (NumPy path) without a C compiler."""
    from ..._inductor.native import load_native
    with open(os.path.join(os.path.dirname(__file__), "_int8_kernels.c")) as f:
        lib = load_native("int8", f.read())
    if lib is not None:
        for name, sig in _SIGS.items():
            getattr(lib, name).argtypes = sig
            getattr(lib, name).restype = None
    return lib


_K_MAX = 43_000     # longer sums could overflow the C kernels' int32: the NumPy path (float64)
_KINDS = {np.dtype(np.uint8): (0, 0, 255), np.dtype(np.int8): (1, -128, 127),
          np.dtype(np.float32): (2, 0, 0)}        # C kind, integer range


class _Requant:
    """The per-output-channel constants of the requantization (float32, as PyTorch's)."""

    def __init__(self, x_scale, w_scale, bias, out_scale, out_zp, out_dtype, clamp, oc):
        ws = np.asarray(w_scale, np.float32).reshape(-1)
        self.mult = np.multiply(ws if ws.size == oc else np.full(oc, ws[0], np.float32),
                                np.float32(x_scale), dtype=np.float32)
        self.bias = None if bias is None else np.ascontiguousarray(bias, np.float32)
        self.out_dtype = np.dtype(out_dtype)
        self.kind, self.qmin, self.qmax = _KINDS[self.out_dtype]
        self.inv_so = np.float32(1.0) / np.float32(out_scale)
        self.zo = int(out_zp) if self.kind != 2 else 0
        self.lo, self.hi = (float(np.float32(v)) for v in clamp)
        if self.kind != 2:
            if self.lo > -np.inf:
                self.qmin = max(self.qmin, self._quantize(self.lo))
            if self.hi < np.inf:
                self.qmax = min(self.qmax, self._quantize(self.hi))

    def _quantize(self, v):
        return int(np.rint(np.float32(v) * self.inv_so)) + self.zo

    def args(self):
        return (self.mult.ctypes.data, None if self.bias is None else self.bias.ctypes.data,
                float(self.inv_so), self.zo, self.qmin, self.qmax, self.kind, self.lo,
                self.hi)

    def apply(self, acc, shape):
        """NumPy path: int acc (..., oc) laid out with channels on `shape`'s axis 1 or last."""
        real = acc.astype(np.float32) * self.mult.reshape(shape)
        if self.bias is not None:
            real = real + self.bias.reshape(shape)
        if self.kind == 2:
            return np.clip(real, np.float32(self.lo), np.float32(self.hi))
        q = np.rint(real * self.inv_so) + self.zo
        return np.clip(q, self.qmin, self.qmax).astype(self.out_dtype)


def _as_u8(x, x_zp):
    """(uint8 array, zero point): int8 activations shift by +128 (their bits xor 0x80)."""
    if x.dtype == np.int8:
        return x.view(np.uint8), int(x_zp) + 128, 1
    return x, int(x_zp), 0


def qlinear(x, x_scale, x_zp, w, w_scale, w_zp, bias, out_scale, out_zp, out_dtype,
            clamp=(-np.inf, np.inf)):
    """x (..., K) uint8/int8, w (N, K) int8, w_scale (N,) or scalar -> (..., N) of
    out_dtype (uint8, int8 or float32); clamp: the real (lo, hi) of a fused relu/hardtanh."""
    lead, k = x.shape[:-1], x.shape[-1]
    n = w.shape[0]
    rq = _Requant(x_scale, w_scale, bias, out_scale, out_zp, out_dtype, clamp, n)
    x2 = np.ascontiguousarray(x.reshape(-1, k))
    m = x2.shape[0]
    lib = native_lib()
    if lib is None or m == 0 or n == 0 or k > _K_MAX or _asymmetric(w_zp):
        acc = (x2.astype(np.float64) - int(x_zp)) @ _centered(w, w_zp).T
        return rq.apply(acc, (1, n)).reshape(*lead, n)
    xu, za, flip = _as_u8(x2, x_zp)
    wc = np.ascontiguousarray(w)
    out = np.empty((m, n), rq.out_dtype)
    lib.em_q_linear(xu.ctypes.data, m, k, wc.ctypes.data, n, za, flip, *rq.args(),
                    out.ctypes.data)
    return out.reshape(*lead, n)


def conv_out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def qconv2d(x, x_scale, x_zp, w, w_scale, w_zp, bias, stride, padding, dilation, groups,
            out_scale, out_zp, out_dtype, clamp=(-np.inf, np.inf)):
    """x (N, C, H, W) uint8/int8, w (OC, C/groups, KH, KW) int8 -> (N, OC, OH, OW)."""
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    oh, ow = conv_out_size(h, kh, sh, ph, dh), conv_out_size(wd, kw, sw, pw, dw)
    rq = _Requant(x_scale, w_scale, bias, out_scale, out_zp, out_dtype, clamp, oc)
    lib = native_lib()
    if lib is None or 0 in (n, oc, oh, ow) or cg * kh * kw > _K_MAX or _asymmetric(w_zp):
        return _qconv2d_numpy(x, x_zp, _centered(w, w_zp), rq, stride, padding, dilation,
                              groups, oh, ow)
    xu, za, flip = _as_u8(np.ascontiguousarray(x), x_zp)
    wc = np.ascontiguousarray(w)
    out = np.empty((n, oc, oh, ow), rq.out_dtype)
    lib.em_q_conv2d(xu.ctypes.data, n, c, h, wd, wc.ctypes.data, oc, kh, kw, sh, sw, ph, pw,
                    dh, dw, groups, oh, ow, za, flip, *rq.args(), out.ctypes.data)
    return out


def _asymmetric(w_zp):
    return w_zp is not None and bool(np.asarray(w_zp).any())


def _centered(w, w_zp):
    """w - w_zp (per output channel) as float64: exact for int8 data."""
    w = w.astype(np.float64)
    if w_zp is None:
        return w
    zp = np.broadcast_to(np.asarray(w_zp, np.float64).reshape(-1), (w.shape[0],))
    return w - zp.reshape((-1,) + (1,) * (w.ndim - 1))


def _qconv2d_numpy(x, x_zp, w, rq, stride, padding, dilation, groups, oh, ow):
    """The same integers with NumPy: zero-point-padded windows, float64 (exact) matmul;
    w is the centered float64 weight."""
    n, c = x.shape[:2]
    oc, cg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xc = np.pad(x.astype(np.float64) - int(x_zp), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    win = np.lib.stride_tricks.sliding_window_view(
        xc, ((kh - 1) * dh + 1, (kw - 1) * dw + 1), axis=(2, 3))
    win = win[:, :, ::sh, ::sw, ::dh, ::dw][:, :, :oh, :ow]        # (N, C, OH, OW, KH, KW)
    ocg = oc // groups
    acc = np.empty((n, oc, oh, ow))
    for g in range(groups):
        xs = win[:, g * cg:(g + 1) * cg]
        wg = w[g * ocg:(g + 1) * ocg]
        acc[:, g * ocg:(g + 1) * ocg] = np.einsum("ncyxij,ocij->noyx", xs, wg)
    return rq.apply(acc, (1, oc, 1, 1))
