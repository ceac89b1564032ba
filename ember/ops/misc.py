"""The remaining tensor functions PyTorch users reach for: fill_/zero_, torch.<op>_ forms,
in-place view methods, diff/ravel/isin/cov/corrcoef/trapezoid/gradient, windows, frexp.

Note: only `fill` is a new primitive (PyTorch's fill_: the gradient w.r.t. self is
zero, w.r.t. a tensor value it is grad.sum()); everything else composes existing ops,
so gradients come from the pieces.
"""
import builtins
import math

import numpy as np

from .. import _dtype as D
from .._dispatch import STATE, dispatch
from .._tensor import Tensor, _wrap_dim
from ._elementwise import inplace, write_out
from ._registry import register

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = ["fill", "fill_", "zero_", "diff", "ravel", "isin", "cov", "corrcoef", "trapezoid",
           "trapz", "cumulative_trapezoid", "gradient", "unravel_index", "frexp", "renorm",
           "bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window", "detach", "detach_", "range", "empty_strided", "frombuffer",
           "typename", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes",
           "empty_permuted"]


# ------------------------------------------------------------------------ fill / zero

def _fill_kernel(a, value):
    v = value if not isinstance(value, np.ndarray) else value.reshape(())
    return np.full_like(a, v)


def _fill_meta(a, value):
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.dim()} dimensions.")
    return tuple(a.shape), a.dtype


def _fill_vjp(ctx, g):
    _, value = ctx.args
    gv = g.sum() if isinstance(value, Tensor) and ctx.needs_input_grad[1] else None
    return (g * 0 if ctx.needs_input_grad[0] else None, gv)


def _fill_decomp(x, value):
    """The value cast to x's dtype, expanded to x's shape and copied."""
    from .. import _prims as P
    v = value if isinstance(value, Tensor) else P.full((), value, x.dtype)
    if v.dtype != x.dtype:
        v = P._to_copy(v, x.dtype)
    return P.clone(P.expand(v, list(x.shape)), None)


FILL = register("fill", _fill_kernel, meta=_fill_meta, vjp=_fill_vjp, check=True,
                save=(1,), tags=("pointwise",), decomp=_fill_decomp,
                schema="fill.Tensor(Tensor self, Tensor value) -> Tensor")


def fill(input, value):
    return dispatch(FILL, (input, value))


def fill_(input, value):
    if not isinstance(value, Tensor):
        from .creation import _scalar     # PyTorch's Scalar check: fits the dtype, a number
        _scalar(value, input._dtype, "fill_")
    return inplace(FILL, input, (input, value))


def zero_(input):
    return inplace(FILL, input, (input, 0))


# ------------------------------------------------------- torch.<op>_ (function forms)

def _install_inplace_functions():
    """torch.exp_(t) etc.: the function form of every Tensor.<op>_ that ember has."""
    import ember
    made = []
    for name in dir(Tensor):
        if not name.endswith("_") or name.startswith("_") or name.endswith("__"):
            continue
        if hasattr(ember, name):
            continue
        method = getattr(Tensor, name)
        if not callable(method):
            continue
        fn = (lambda m: lambda input, *args, **kwargs: m(input, *args, **kwargs))(method)
        fn.__name__ = name
        made.append((name, fn))
    return made


# --------------------------------------------------------------- in-place view methods

def _view_inplace(view_fn, name):
    """x.t_() etc.: x becomes its own view (same storage, new shape/strides)."""
    def method(self, *args):
        v = view_fn(self, *args)
        if self.requires_grad and self._grad_fn is None:
            raise RuntimeError(f"{name}: a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        if STATE.modes:             # a mode sees the rebinding as the set_ op
            from .effects import SET_
            SET_(self, v)
        else:
            self._data = v._data
        if v._grad_fn is not None:
            self._grad_fn, self._output_nr = v._grad_fn, v._output_nr
        return self
    method.__name__ = name
    return method


# --------------------------------------------------------------------- compositions

def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    from .shape import cat
    d = _wrap_dim(dim, input.dim(), "diff")
    x = input
    parts = [p.expand(*(x.shape[:d] + (p.shape[d] if p.dim() else 1,) + x.shape[d + 1:]))
             if isinstance(p, Tensor) and p.dim() else p for p in (prepend, append)]
    if parts[0] is not None or parts[1] is not None:
        x = cat([t for t in (parts[0], x, parts[1]) if t is not None], d)
    for _ in builtins.range(n):
        L = x.shape[d]
        if L == 0:
            break
        hi, lo = x.narrow(d, 1, L - 1), x.narrow(d, 0, L - 1)
        x = (hi ^ lo) if x.dtype is D.bool else hi - lo
    return x if out is None else write_out(out, x, "diff")


def ravel(input):
    return input.reshape(-1)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    from .creation import as_tensor
    e = elements if isinstance(elements, Tensor) else as_tensor(elements)
    t = test_elements if isinstance(test_elements, Tensor) else as_tensor(test_elements)
    if t.numel() == 0:
        from .creation import zeros
        r = zeros(e.shape, dtype=D.bool)
    else:
        r = (e.reshape(-1, 1) == t.reshape(1, -1)).any(1).reshape(e.shape)
    return ~r if invert else r


def cov(input, *, correction=1, fweights=None, aweights=None):
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    if not (x.is_floating_point() or x.is_complex()):
        x = x.to(D.get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1)
        w_sum = n
        norm = n - correction
    else:
        w = w.to(x.dtype)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
    xm = x - avg.unsqueeze(1)
    xw = xm if w is None else xm * w
    c = xw.matmul(xm.conj().t()) / norm
    if isinstance(norm, (int, float)) and norm <= 0:
        import warnings
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.")
    # one variable (1-D input or a single row): a 0-d result, as aten squeezes it
    return c.squeeze() if input.dim() < 2 or input.shape[0] == 1 else c


def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    s = d.sqrt() if not c.is_complex() else d.real.sqrt()
    c = c / s.unsqueeze(1) / s.unsqueeze(0)
    return c.clamp(-1, 1) if not c.is_complex() else c


def _sample_spacing(x, y, d):
    """The distances between x's samples, shaped to broadcast against y along dim d (a 1-d
    x gives the spacing of every slice)."""
    dxs = diff(x, dim=-1 if x.dim() == 1 else d)
    if x.dim() == 1:
        shape = [1] * y.dim()
        shape[d] = y.shape[d] - 1
        dxs = dxs.reshape(shape)
    return dxs


def trapezoid(y, x=None, *, dx=None, dim=-1):
    d = _wrap_dim(dim, y.dim(), "trapezoid")
    L = y.shape[d]
    if L == 0:
        return y.sum(d)
    hi, lo = y.narrow(d, 1, L - 1), y.narrow(d, 0, L - 1)
    if x is None:
        return (hi + lo).sum(d) * ((1 if dx is None else dx) / 2)
    if isinstance(x, Tensor):
        dxs = _sample_spacing(x, y, d)
        return ((hi + lo) * dxs).sum(d) / 2
    return (hi + lo).sum(d) * (x / 2)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    d = _wrap_dim(dim, y.dim(), "cumulative_trapezoid")
    L = y.shape[d]
    if L == 0:
        return y.narrow(d, 0, 0)
    hi, lo = y.narrow(d, 1, L - 1), y.narrow(d, 0, L - 1)
    if isinstance(x, Tensor):
        dxs = _sample_spacing(x, y, d)
        return ((hi + lo) * dxs / 2).cumsum(d)
    step = (1 if dx is None else dx) if x is None else x
    return ((hi + lo) * (step / 2)).cumsum(d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """torch.gradient: central differences inside, one-sided at the edges."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(builtins.range(input.dim())) if dim is None else \
        [_wrap_dim(d, input.dim(), "gradient") for d in (dim if isinstance(dim, (list, tuple))
                                                         else [dim])]
    if spacing is None:                               # torch accepts spacing=None as 1
        spacing = 1
    if isinstance(spacing, (int, float)):
        spacing = [spacing] * len(dims)
    elif len(spacing) == 1 and len(dims) > 1:
        spacing = list(spacing) * len(dims)
    out = []
    from .shape import cat
    for d, h in zip(dims, spacing):
        L = input.shape[d]
        if L < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
        if isinstance(h, Tensor):
            out.append(_gradient_coords(input, h, d, edge_order))
            continue
        x = input if input.is_floating_point() or input.is_complex() else \
            input.to(D.get_default_dtype())
        interior = (x.narrow(d, 2, L - 2) - x.narrow(d, 0, L - 2)) / (2 * h)
        if edge_order == 1:
            first = (x.narrow(d, 1, 1) - x.narrow(d, 0, 1)) / h
            last = (x.narrow(d, L - 1, 1) - x.narrow(d, L - 2, 1)) / h
        else:
            first = (-1.5 * x.narrow(d, 0, 1) + 2 * x.narrow(d, 1, 1) - 0.5 * x.narrow(d, 2, 1)) / h
            last = (0.5 * x.narrow(d, L - 3, 1) - 2 * x.narrow(d, L - 2, 1) +
                    1.5 * x.narrow(d, L - 1, 1)) / h
        out.append(cat([first, interior, last], d))
    return tuple(out)


def _gradient_coords(x, coords, d, edge_order):
    """torch.gradient along d at the sample coordinates `coords` (1-d): aten's
    second-order nonuniform differences inside, first or second order at the edges."""
    from .shape import cat
    L = x.shape[d]
    shape = [1] * x.dim()
    shape[d] = -1
    dx = diff(coords, dim=0)
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * x.narrow(d, 0, L - 2) + b * x.narrow(d, 1, L - 2) + c * x.narrow(d, 2, L - 2)
    if edge_order == 1:
        first = (x.narrow(d, 1, 1) - x.narrow(d, 0, 1)) / dx[0]
        last = (x.narrow(d, L - 1, 1) - x.narrow(d, L - 2, 1)) / dx[-1]
    else:
        h0, h1 = dx[0], dx[1]
        first = (-(2.0 * h0 + h1) / (h0 * (h0 + h1)) * x.narrow(d, 0, 1)
                 + (h0 + h1) / (h0 * h1) * x.narrow(d, 1, 1)
                 + (-h0) / (h1 * (h0 + h1)) * x.narrow(d, 2, 1))
        hl, hp = dx[-1], dx[-2]
        last = (hl / (hp * (hl + hp)) * x.narrow(d, L - 3, 1)
                - (hl + hp) / (hl * hp) * x.narrow(d, L - 2, 1)
                + (2 * hl + hp) / (hl * (hl + hp)) * x.narrow(d, L - 1, 1))
    return cat([first, center, last], d)


def unravel_index(indices, shape):
    from .creation import as_tensor
    idx = indices if isinstance(indices, Tensor) else as_tensor(indices)
    if idx.dtype.is_floating_point or idx.dtype is D.bool or idx.dtype.is_complex:
        raise TypeError("expected 'indices' to be integer dtype, but got "
                        f"{idx.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    out = []
    for s in reversed(shape):
        out.append(idx % s)
        idx = idx.div(s, rounding_mode="floor")
    return tuple(reversed(out))


def frexp(input, *, out=None):
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    from .creation import from_numpy
    m, e = np.frexp(input.detach()._data.astype(np.float32 if input.dtype.itemsize == 2
                                                 else input._data.dtype))
    m, e = np.asarray(m), np.asarray(e)               # 0-d input: NumPy returns scalars
    res = _FREXP(from_numpy(m.astype(input.dtype.np)), from_numpy(e.astype(np.int32)))
    return res


def renorm(input, p, dim, maxnorm):
    d = _wrap_dim(dim, input.dim(), "renorm")
    dims = [i for i in builtins.range(input.dim()) if i != d]
    norms = input.norm(p=p, dim=dims, keepdim=True) if dims else input.abs() if p else input
    factor = (maxnorm / (norms + 1e-7)).clamp(max=1.0)
    return input * factor


def _window(name, fn):
    def window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
               requires_grad=False, **kw):
        from .creation import from_numpy
        if window_length < 0:
            raise RuntimeError(f"{name} requires non-negative window length, got "
                               f"window_length={window_length}")
        dtype = dtype or D.get_default_dtype()
        if not dtype.is_floating_point:
            raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
        if window_length == 0:
            arr = np.zeros(0)
        elif window_length == 1:
            arr = np.ones(1)
        else:
            n = window_length + 1 if periodic else window_length
            arr = fn(n, **kw)[:window_length]
        t = from_numpy(arr.astype(dtype.np))
        return t.requires_grad_(requires_grad)
    window.__name__ = name
    return window


bartlett_window = _window("bartlett_window", np.bartlett)
blackman_window = _window("blackman_window", np.blackman)
hann_window = _window("hann_window", np.hanning)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    def fn(n):
        k = np.arange(n)
        return alpha - beta * np.cos(2 * np.pi * k / (n - 1))
    return _window("hamming_window", fn)(window_length, periodic, dtype=dtype,
                                         requires_grad=requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    return _window("kaiser_window", lambda n: np.kaiser(n, beta))(
        window_length, periodic, dtype=dtype, requires_grad=requires_grad)


def detach(input):
    return input.detach()


def detach_(input):
    return input.detach_()


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
          requires_grad=False):
    """Deprecated torch.range: like arange but includes `end`."""
    import warnings
    from .creation import arange
    if end is None:
        start, end = 0, start
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning)
    n = int(math.floor((end - start) / step)) + 1
    return arange(0, n, dtype=D.float64).mul(step).add(start).to(
        dtype or D.get_default_dtype()).requires_grad_(requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False):
    from .creation import empty
    size, stride = tuple(size), tuple(stride)
    extent = 1 + builtins.sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    base = empty(extent, dtype=dtype)
    return base.as_strided(size, stride).requires_grad_(requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialised tensor of `size` whose memory order is `physical_layout`."""
    from .creation import empty
    size, perm = tuple(size), tuple(physical_layout)
    if len(perm) != len(size):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           "physical_layout")
    if sorted(perm) != list(builtins.range(len(size))):
        raise RuntimeError("Duplicate dim not allowed" if len(set(perm)) != len(perm)
                           else f"Dimension out of range (got {perm})")
    inv = [perm.index(i) for i in builtins.range(len(size))]
    base = empty(tuple(size[p] for p in perm), dtype=dtype)
    return base.permute(inv).requires_grad_(requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    from .creation import from_numpy
    arr = np.frombuffer(buffer, dtype=dtype.np, count=count, offset=offset)
    return from_numpy(arr).requires_grad_(requires_grad)


def typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    return type(obj).__module__ + "." + type(obj).__qualname__


def unsafe_chunk(input, chunks, dim=0):
    return tuple(t.clone() for t in input.chunk(chunks, dim))


def unsafe_split(input, split_size, dim=0):
    return tuple(t.clone() for t in input.split(split_size, dim))


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return tuple(t.clone() for t in input.split(list(split_sizes), dim))


def _make_methods():
    from .reduction import return_type
    global _FREXP
    _FREXP = return_type("frexp", ("mantissa", "exponent"))
    METHODS["fill_"] = fill_
    METHODS["zero_"] = zero_
    METHODS["diff"] = diff
    METHODS["ravel"] = ravel
    METHODS["isin"] = lambda self, test_elements, **kw: isin(self, test_elements, **kw)
    METHODS["cov"] = cov
    METHODS["corrcoef"] = corrcoef
    METHODS["frexp"] = frexp
    METHODS["renorm"] = renorm
    METHODS["renorm_"] = lambda self, p, dim, maxnorm: self.copy_(renorm(self, p, dim, maxnorm))
    METHODS["squeeze_"] = _view_inplace(lambda x, *a: x.squeeze(*a), "squeeze_")
    METHODS["unsqueeze_"] = _view_inplace(lambda x, d: x.unsqueeze(d), "unsqueeze_")
    METHODS["transpose_"] = _view_inplace(lambda x, a, b: x.transpose(a, b), "transpose_")
    METHODS["swapaxes_"] = METHODS["transpose_"]
    METHODS["swapdims_"] = METHODS["transpose_"]
    METHODS["t_"] = _view_inplace(lambda x: x.t(), "t_")
    METHODS["as_strided_"] = _view_inplace(
        lambda x, size, stride, off=None: x.as_strided(size, stride, off), "as_strided_")
    METHODS["fill_diagonal_"] = _fill_diagonal_


def _fill_diagonal_(self, fill_value, wrap=False):
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = min(self.shape)
    from .creation import arange
    idx = arange(n)
    if self.dim() == 2 and wrap and self.shape[0] > self.shape[1] + 1:
        rows = arange(0, self.shape[0])
        keep = (rows % (self.shape[1] + 1)) < self.shape[1]
        r = rows[keep]
        c = r % (self.shape[1] + 1)
        self[r, c] = fill_value
        return self
    self[(idx,) * self.dim()] = fill_value
    return self


_FREXP = None
_make_methods()
