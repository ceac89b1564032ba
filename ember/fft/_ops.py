"""The three FFT primitives, as ATen has them: fft_c2c, fft_r2c, fft_c2r.

Note: each takes `dim` (a tuple of wrapped dims), `normalization` (ATen's
fft_norm_mode: 0 none, 1 by 1/sqrt(n), 2 by 1/n -- a scale, whatever the direction)
and a direction flag or size. The kernels call pocketfft through `scipy.fft` (it keeps
complex64 for float32 input), or `numpy.fft` when SciPy is missing; SciPy is imported
on first use, never when ember is imported. The public functions in ember.fft resize
(pad/trim) the input and pick the primitive. Backward formulas are PyTorch's
(`_fft_c2c_backward`, `_fft_r2c_backward`, `_fft_c2r_backward`): the adjoint of a DFT
is the opposite-direction DFT with the same scale; a one-sided r2c's adjoint pads the
gradient with zeros to the full length; c2r's adjoint doubles the non-edge bins that
stand for two (conjugate) frequencies.
Arguments are checked by the metas before the kernels run (check=True).
Autocast: PyTorch's AutocastCPU runs the fft_* functions in float32 (policy fp32).
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor
from ..ops._elementwise import type_name
from ..ops._registry import register

NORM_NONE, NORM_SQRT, NORM_N = 0, 1, 2
# ATen's scale -> pocketfft's norm name, for forward and for inverse transforms
_FWD_NORM = {NORM_NONE: "backward", NORM_SQRT: "ortho", NORM_N: "forward"}
_INV_NORM = {NORM_NONE: "forward", NORM_SQRT: "ortho", NORM_N: "backward"}
_REAL = (D.float32, D.float64)
_COMPLEX = (D.complex64, D.complex128)

_LIB = None


def _lib():
    """scipy.fft (float32 stays float32), else numpy.fft; imported on first use."""
    global _LIB
    if _LIB is None:
        try:
            import scipy.fft as lib
        except ImportError:       # pragma: no cover - scipy is optional
            import numpy.fft as lib
        _LIB = lib
    return _LIB


# ------------------------------------------------------------------ argument checks

def _check_common(self, dim, normalization):
    if not isinstance(self, Tensor):
        raise TypeError(f"argument 'self' must be Tensor, not {type(self).__name__}")
    if normalization not in _FWD_NORM:
        raise RuntimeError(f"Invalid normalization mode: {normalization}")
    ndim = self._data.ndim
    for d in dim:
        if not 0 <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {d})")
    if len(set(dim)) != len(dim):
        raise RuntimeError("FFT dims must be unique")


def _check_kind(self, allowed, what):
    if self.dtype not in allowed:
        raise RuntimeError(f"Only supports {what} dtypes, but found: {type_name(self.dtype)}")


def _c2c_meta(self, dim, normalization, forward):
    _check_common(self, dim, normalization)
    _check_kind(self, _COMPLEX, "complex")
    return tuple(self.shape), self.dtype


def _r2c_meta(self, dim, normalization, onesided):
    _check_common(self, dim, normalization)
    _check_kind(self, _REAL, "floating-point")
    shape = list(self.shape)
    if onesided and dim:
        shape[dim[-1]] = shape[dim[-1]] // 2 + 1
    return tuple(shape), self.dtype.to_complex()


def _c2r_meta(self, dim, normalization, last_dim_size):
    _check_common(self, dim, normalization)
    _check_kind(self, _COMPLEX, "complex")
    if not dim:
        raise RuntimeError("_fft_c2r: dim must not be empty")
    if last_dim_size < 1:
        raise RuntimeError(f"Invalid number of data points ({last_dim_size}) specified")
    shape = list(self.shape)
    shape[dim[-1]] = last_dim_size
    return tuple(shape), self.dtype.to_real()


# ------------------------------------------------------------------------- kernels

def _c2c_kernel(x, dim, normalization, forward):
    if not dim or x.size == 0:
        return x.copy()
    lib = _lib()
    fn, norm = (lib.fftn, _FWD_NORM) if forward else (lib.ifftn, _INV_NORM)
    return np.asarray(fn(x, axes=dim, norm=norm[normalization]), dtype=x.dtype)


def _r2c_kernel(x, dim, normalization, onesided):
    out = np.dtype(np.complex64 if x.dtype == np.float32 else np.complex128)
    if not dim or x.size == 0:
        shape = list(x.shape)
        if onesided and dim:
            shape[dim[-1]] = shape[dim[-1]] // 2 + 1
        return np.zeros(shape, out) if x.size == 0 else x.astype(out)
    lib = _lib()
    fn = lib.rfftn if onesided else lib.fftn
    return np.asarray(fn(x, axes=dim, norm=_FWD_NORM[normalization]), dtype=out)


def _c2r_kernel(x, dim, normalization, last_dim_size):
    out = np.dtype(np.float32 if x.dtype == np.complex64 else np.float64)
    shape = [x.shape[d] for d in dim[:-1]] + [last_dim_size]
    if x.size == 0:
        full = list(x.shape)
        full[dim[-1]] = last_dim_size
        return np.zeros(full, out)
    res = _lib().irfftn(x, s=shape, axes=dim, norm=_INV_NORM[normalization])
    return np.asarray(res, dtype=out)


# ------------------------------------------------------------------------ backward

def _c2c_vjp(ctx, g):
    _, dim, normalization, forward = ctx.args
    if not g.is_complex():
        g = g.to(ctx.dtypes[0])
    return dispatch(FFT_C2C, (g, dim, normalization, not forward)), None, None, None


def _r2c_vjp(ctx, g):
    _, dim, normalization, onesided = ctx.args
    if not g.is_complex():
        g = g.to(ctx.dtypes[0].to_complex())
    if onesided:
        last = dim[-1]
        missing = ctx.shapes[0][last] - g.shape[last]
        if missing > 0:      # the dropped (conjugate) half of the spectrum gets zeros
            from ..ops.shape import cat
            pad = list(g.shape)
            pad[last] = missing
            g = cat([g, g.new_zeros(pad)], last)
    full = dispatch(FFT_C2C, (g, dim, normalization, False))
    return full.real, None, None, None


def _c2r_vjp(ctx, g):
    _, dim, normalization, last_dim_size = ctx.args
    last = dim[-1]
    gi = dispatch(FFT_R2C, (g, dim, normalization, True))
    double = g.shape[last] - gi.shape[last]
    if double > 0:           # bins 1..double stand for two frequencies each
        from ..ops.creation import tensor
        scale = np.ones(gi.shape[last], dtype=g.dtype.np)
        scale[1:1 + double] = 2
        shape = [1] * gi.ndim
        shape[last] = gi.shape[last]
        gi = gi * tensor(scale.reshape(shape), dtype=g.dtype)
    return gi, None, None, None


FFT_C2C = register("fft_c2c", _c2c_kernel, meta=_c2c_meta, vjp=_c2c_vjp, save=(),
                   tags=("prim", "fft"), amp_policy="fp32", check=True,
                   schema="_fft_c2c(Tensor self, SymInt[] dim, int normalization, "
                          "bool forward) -> Tensor")
FFT_R2C = register("fft_r2c", _r2c_kernel, meta=_r2c_meta, vjp=_r2c_vjp, save=(),
                   tags=("prim", "fft"), amp_policy="fp32", check=True,
                   schema="_fft_r2c(Tensor self, int[] dim, int normalization, "
                          "bool onesided) -> Tensor")
FFT_C2R = register("fft_c2r", _c2r_kernel, meta=_c2r_meta, vjp=_c2r_vjp, save=(),
                   tags=("prim", "fft"), amp_policy="fp32", check=True,
                   schema="_fft_c2r(Tensor self, int[] dim, int normalization, "
                          "SymInt last_dim_size) -> Tensor")
