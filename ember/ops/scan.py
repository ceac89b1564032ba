"""Scans along one dim: cumsum, cumprod, cummax, cummin, logcumsumexp.

Note: PyTorch's dtype rules: cumsum/cumprod of integers and bool give int64 (unless
dtype= says otherwise); half precision accumulates in float32 and rounds each output.
Backward formulas are PyTorch's (cumprod handles zeros exactly, cummax/cummin scatter
to the returned indices, logcumsumexp works in log space for stability).
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch, STATE
from .._tensor import Tensor, _wrap_dim
from ._elementwise import write_out, type_name, inplace
from ._registry import register, check_dtype_arg
from .reduction import return_type

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]


def _flip(t, dim):
    """Reverse `t` along dim (index_select keeps it differentiable)."""
    from .creation import arange
    n = t.shape[dim]
    return t.index_select(dim, arange(n - 1, -1, -1))


def _rev_cumsum(t, dim):
    return _flip(_flip(t, dim).cumsum(dim), dim)


def _half(npd):
    return npd.kind == "f" and npd.itemsize == 2 or npd == D.bfloat16.np


# ---------------------------------------------------------- cumsum / cumprod

def _cum_dtypes(a, dtype):
    """(output, accumulate) NumPy dtypes: ints/bool -> int64, half accumulates in float32."""
    out = dtype.np if dtype is not None else np.dtype(np.int64) if a.dtype.kind in "biu" \
        else a.dtype
    return out, np.dtype(np.float32) if _half(out) else out


def _cum_kernel(np_fn):
    def kernel(a, dim, dtype):
        out, acc = _cum_dtypes(a, dtype)
        x = a.astype(out, copy=False).astype(acc, copy=False)
        if x.ndim == 0:
            return x.astype(out, copy=True)
        return np_fn(x, axis=dim).astype(out, copy=False)
    return kernel


def _cum_meta(name):
    def meta(a, dim, dtype):
        check_dtype_arg(dtype, name)
        _wrap_dim(dim, a.dim(), name)
        return tuple(a.shape), dtype if dtype is not None else \
            D.int64 if a.dtype._kind < 2 else a.dtype
    return meta


def _cumsum_vjp(ctx, g):
    _, dim, _ = ctx.args
    if g.dim() == 0 or g.numel() == 0:
        return (g, None, None)
    return (_rev_cumsum(g, dim), None, None)


def _cumprod_vjp(ctx, g):
    """PyTorch's cumprod_backward: exact with zeros.

    Before the first zero of a slice, d/dx_i = revcumsum(g * y)_i / x_i; at the first
    zero it is revcumsum(g * y')_i with y' the cumprod of x with that zero set to one;
    after it, zero. That O(n) form has the right value but not the right derivative
    at zeros, so with create_graph (grad mode on) PyTorch's O(n^2) form is used.
    """
    x, dim, dtype = ctx.args
    if g.dim() == 0 or g.numel() == 0:
        return (g, None, None)
    if dtype is not None:
        x = x.to(dtype)
    if STATE.grad_enabled:
        return (_cumprod_grad_quadratic(x, g, dim), None, None)
    y = ctx.out
    zero = x == 0
    seen = zero.cumsum(dim)
    before = seen == 0
    first = zero.logical_and(seen == 1)
    part_before = _rev_cumsum(g * y.conj(), dim) / x.masked_fill(before.logical_not(), 1).conj()
    y1 = x.masked_fill(first, 1).cumprod(dim)
    part_first = _rev_cumsum(g * y1.conj(), dim)
    return (part_before.masked_fill(before.logical_not(), 0) +
            part_first.masked_fill(first.logical_not(), 0), None, None)


def _cumprod_grad_quadratic(x, g, dim):
    """d/dx_i = sum_{k >= i} g_k prod_{j <= k, j != i} x_j, one cumprod per omitted i."""
    from .creation import arange, eye
    n = x.shape[dim]
    xm, gm = x.movedim(dim, -1), g.movedim(dim, -1)
    omit = xm.unsqueeze(-2).expand(*xm.shape[:-1], n, n).masked_fill(eye(n, dtype=D.bool), 1)
    ar = arange(n)
    upper = ar.unsqueeze(0) >= ar.unsqueeze(1)                 # [i, k]: k >= i
    return (omit.cumprod(-1).conj() * gm.unsqueeze(-2) * upper).sum(-1).movedim(-1, dim)


CUMSUM = register("cumsum", _cum_kernel(np.cumsum), meta=_cum_meta("cumsum"), vjp=_cumsum_vjp,
                  save=(), check=True, tags=("prim", "reduction"),
                  schema="cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor")
CUMPROD = register("cumprod", _cum_kernel(np.cumprod), meta=_cum_meta("cumprod"),
                   vjp=_cumprod_vjp, save=(0,), save_out=True, check=True,
                   tags=("prim", "reduction"),
                   schema="cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor")


def _scan(op, input, dim, dtype, out):
    if out is not None and dtype is None and isinstance(out, Tensor):
        dtype = out._dtype            # PyTorch: an out= tensor's dtype is the result's
    res = dispatch(op, (input, _wrap_dim(dim, input._data.ndim, op.name), dtype))
    return res if out is None else write_out(out, res, op.name)


def cumsum(input, dim, *, dtype=None, out=None):
    return _scan(CUMSUM, input, dim, dtype, out)


def cumprod(input, dim, *, dtype=None, out=None):
    return _scan(CUMPROD, input, dim, dtype, out)


def _cum_inplace(op):
    def method(self, dim, *, dtype=None):
        if dtype is not None and dtype is not self._dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype {self._dtype.np} and output "
                               f"tensor dtype {dtype.np} should match")
        return inplace(op, self, (self, _wrap_dim(dim, self._data.ndim, op.name),
                                  self._dtype))
    method.__name__ = op.name + "_"
    return method


# ---------------------------------------------------------- cummax / cummin

def _cumext_kernel(ufunc, name):
    def kernel(a, dim):
        _check_real(a.dtype, name)
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        x = a.astype(np.float32) if a.dtype == D.bfloat16.np else a
        values = ufunc.accumulate(x, axis=dim)
        pos = np.arange(a.shape[dim]).reshape([-1 if i == dim else 1 for i in range(a.ndim)])
        hit = x == values                        # a new extreme or a tie: PyTorch takes it
        if x.dtype.kind == "f":
            hit |= np.isnan(x)                   # NaN sticks; each NaN takes the index
        idx = np.maximum.accumulate(np.where(hit, pos, 0), axis=dim)
        return values.astype(a.dtype, copy=False), idx.astype(np.int64, copy=False)
    return kernel


def _check_real(npd, name):
    if npd.kind == "c":
        raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                  f"'{type_name(D.from_numpy_dtype(npd))}'")


def _cumext_meta(name):
    def meta(a, dim):
        _check_real(a.dtype.np, name)
        _wrap_dim(dim, a.dim(), name)
        return (tuple(a.shape), a.dtype), (tuple(a.shape), D.int64)
    return meta


def _cumext_vjp(ctx, g, _gi=None):
    """The gradient goes to the index each output was taken from (scatter_add)."""
    _, dim = ctx.args
    if g.dim() == 0 or g.numel() == 0:
        return (g, None)
    return (g.new_zeros(ctx.shapes[0]).scatter_add(dim, ctx.out[1], g), None)


CUMMAX = register("cummax", _cumext_kernel(np.maximum, "cummax"), meta=_cumext_meta("cummax"),
                  vjp=_cumext_vjp, save=(1,), save_out=True, nondiff_outputs=(1,),
                  tags=("prim", "reduction"),
                  schema="cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)")
CUMMIN = register("cummin", _cumext_kernel(np.minimum, "cummin"), meta=_cumext_meta("cummin"),
                  vjp=_cumext_vjp, save=(1,), save_out=True, nondiff_outputs=(1,),
                  tags=("prim", "reduction"),
                  schema="cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)")


def _cumext(op, input, dim, out):
    values, indices = dispatch(op, (input, _wrap_dim(dim, input._data.ndim, op.name)))
    if out is not None:
        values = write_out(out[0], values, op.name)
        indices = write_out(out[1], indices, op.name)
    return return_type(op.name, ("values", "indices"))(values, indices)


def cummax(input, dim, *, out=None):
    return _cumext(CUMMAX, input, dim, out)


def cummin(input, dim, *, out=None):
    return _cumext(CUMMIN, input, dim, out)


# ------------------------------------------------------------- logcumsumexp

def _check_lcse(dtype):
    if dtype._kind < 2:
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                  f"'{type_name(dtype)}'")


def _log_add_exp_complex(a, b):
    """log(exp(a) + exp(b)) for complex a, b, scaled by the larger real part."""
    swap = a.real < b.real
    hi, lo = np.where(swap, b, a), np.where(swap, a, b)
    with np.errstate(all="ignore"):
        r = hi + np.log1p(np.exp(lo - hi))
    both_neg_inf = np.isneginf(hi.real)
    return np.where(both_neg_inf, hi, r)


def _lcse_kernel(a, dim):
    _check_lcse(D.from_numpy_dtype(a.dtype))
    x = a.astype(np.float32) if _half(a.dtype) else a
    if x.ndim == 0 or x.size == 0:
        return x.astype(a.dtype, copy=True)
    if x.dtype.kind == "f":
        r = np.logaddexp.accumulate(x, axis=dim)
    else:
        r = np.moveaxis(np.array(x, copy=True), dim, 0)
        for k in range(1, r.shape[0]):
            r[k] = _log_add_exp_complex(r[k - 1], r[k])
        r = np.moveaxis(r, 0, dim)
    return r.astype(a.dtype, copy=False)


def _lcse_meta(a, dim):
    _check_lcse(a.dtype)
    _wrap_dim(dim, a.dim(), "logcumsumexp")
    return tuple(a.shape), a.dtype


def _lcse_vjp(ctx, g):
    """PyTorch's logcumsumexp_backward: positive and negative parts of g in log space."""
    x, dim = ctx.args
    if g.dim() == 0 or g.numel() == 0:
        return (g, None)
    out = ctx.out

    def rev_lcse(t):
        return _flip(_flip(t, dim).logcumsumexp(dim), dim)
    if g.is_complex():
        return ((rev_lcse(g.conj().log() - out) + x).exp().conj(), None)
    lowest = D.finfo(g.dtype).min
    log_abs = g.abs().log()
    pos = log_abs.masked_fill((g > 0).logical_not(), lowest)
    neg = log_abs.masked_fill((g < 0).logical_not(), lowest)
    return ((rev_lcse(pos - out) + x).exp() - (rev_lcse(neg - out) + x).exp(), None)


def _lcse_decomp(a, dim):
    """log(cumsum(exp(a - m))) + m, m the (detached, finite) max along dim."""
    from .. import _prims as P
    if a.dim() == 0:
        return P.clone(a, None)
    dim = dim % a.dim()
    m = P.detach(P.amax(a, (dim,), True))
    m = P.where(P.logical_not(P.isfinite(m)), P.full((), 0, m.dtype), m)
    return P.add(P.log(P.cumsum(P.exp(P.sub(a, m)), dim, None)), m)


LOGCUMSUMEXP = register("logcumsumexp", _lcse_kernel, meta=_lcse_meta, vjp=_lcse_vjp, save=(0,),
                        save_out=True, tags=("reduction",), decomp=_lcse_decomp,
                        schema="logcumsumexp(Tensor self, int dim) -> Tensor")


def logcumsumexp(input, dim, *, out=None):
    res = dispatch(LOGCUMSUMEXP, (input, _wrap_dim(dim, input._data.ndim, "logcumsumexp")))
    return res if out is None else write_out(out, res, "logcumsumexp")


def _make_methods():
    for f in (cumsum, cumprod, cummax, cummin, logcumsumexp):
        METHODS[f.__name__] = f
    METHODS["cumsum_"] = _cum_inplace(CUMSUM)
    METHODS["cumprod_"] = _cum_inplace(CUMPROD)


_make_methods()
