"""numpy.fft on Tensors, computed by ember.fft (pocketfft underneath, as NumPy).

Note: NumPy 2's dtypes: float32 (and float16, computed in float32) transform to
complex64, float64 and integers to complex128; `axis`/`axes` name the dims, `n`/`s` the
lengths. fftfreq/rfftfreq follow NumPy's formula (integer bins times 1/(n*d)), so the
values match to the bit.
"""
import numpy as np

import ember
from .. import _dtype as D
from ._util import Unsupported, asarray, cast, check_out, float_dtype_for, norm_axis


def _in(a, name):
    x = asarray(a)
    if x.dtype.is_complex:
        return x
    if x.dtype in (D.float16, D.bfloat16, D.float32):
        return cast(x, D.float32)
    return cast(x, float_dtype_for(x.dtype))


def _real_in(a, name):
    x = _in(a, name)
    if x.dtype.is_complex:
        raise TypeError(f"ufunc '{name}' did not contain a loop with signature matching "
                        "types")
    return x


def _one(name, fn, real=False):
    def f(a, n=None, axis=-1, norm=None, out=None):
        check_out(name, out)
        x = _real_in(a, name) if real else _in(a, name)
        if x.ndim == 0:
            raise IndexError("tuple index out of range")
        return fn(x, n=n, dim=norm_axis(axis, x.ndim), norm=norm)
    f.__name__ = name
    return f


def _many(name, fn, real=False, default_axes=None):
    def f(a, s=None, axes=default_axes, norm=None, out=None):
        check_out(name, out)
        x = _real_in(a, name) if real else _in(a, name)
        if axes is not None:
            axes = tuple(norm_axis(ax, x.ndim) for ax in axes)
        if s is not None and axes is None:
            axes = tuple(range(x.ndim - len(s), x.ndim))
        return fn(x, s=None if s is None else tuple(s), dim=axes, norm=norm)
    f.__name__ = name
    return f


fft = _one("fft", ember.fft.fft)
ifft = _one("ifft", ember.fft.ifft)
rfft = _one("rfft", ember.fft.rfft, real=True)
irfft = _one("irfft", ember.fft.irfft)
hfft = _one("hfft", ember.fft.hfft)
ihfft = _one("ihfft", ember.fft.ihfft, real=True)
fftn = _many("fftn", ember.fft.fftn)
ifftn = _many("ifftn", ember.fft.ifftn)
rfftn = _many("rfftn", ember.fft.rfftn, real=True)
irfftn = _many("irfftn", ember.fft.irfftn)
fft2 = _many("fft2", ember.fft.fftn, default_axes=(-2, -1))
ifft2 = _many("ifft2", ember.fft.ifftn, default_axes=(-2, -1))
rfft2 = _many("rfft2", ember.fft.rfftn, real=True, default_axes=(-2, -1))
irfft2 = _many("irfft2", ember.fft.irfftn, default_axes=(-2, -1))


def _freq_scale(n, d):
    if isinstance(d, ember.Tensor):
        raise Unsupported("numpy.fft.fftfreq with an array spacing")
    if not isinstance(n, (int, np.integer)):
        raise ValueError("n should be an integer")
    return 1.0 / (n * d)


def fftfreq(n, d=1.0, device=None):
    val = _freq_scale(n, d)
    N = (n - 1) // 2 + 1
    bins = ember.cat([ember.arange(0, N, dtype=D.int64),
                      ember.arange(-(n // 2), 0, dtype=D.int64)])
    from ._ufuncs import make_ufunc
    return make_ufunc(np.multiply)(bins, val)


def rfftfreq(n, d=1.0, device=None):
    val = _freq_scale(n, d)
    from ._ufuncs import make_ufunc
    return make_ufunc(np.multiply)(ember.arange(0, n // 2 + 1, dtype=D.int64), val)


def _shift(x, axes, sign):
    t = asarray(x)
    if axes is None:
        axes = tuple(range(t.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    axes = tuple(norm_axis(a, t.ndim) for a in axes)
    if not axes:
        return ember.clone(t)
    shifts = tuple(sign * (t.shape[a] // 2) for a in axes)
    return ember.roll(t, shifts, axes)


def fftshift(x, axes=None):
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    return _shift(x, axes, -1)


NAMES = ("fft ifft rfft irfft hfft ihfft fftn ifftn rfftn irfftn fft2 ifft2 rfft2 irfft2 "
         "fftfreq rfftfreq fftshift ifftshift")
