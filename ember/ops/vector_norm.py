"""torch.norm and torch.dist: p-norms over dims (and the nuclear norm).

Note: `norm` is PyTorch's `torch.norm`, a vector norm except for p='nuc', keeping every
reduced dim with keepdim=True (the 1.7 behaviour). It sits above reduction.py (it uses
its dim helpers) and below linalg, whose vector/matrix norms call `p_norm_decomp`.
"""
import math
import numbers

import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor, _wrap_dim
from ._elementwise import write_out, type_name
from ._registry import register, check_dtype_arg
from .reduction import reduce_dims, reduced_shape, unsqueeze_to

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = ["norm", "dist"]


# --------------------------------------------------------------------- norm

def _norm_checks(a, p, dims, dtype):
    """linalg.vector_norm's argument checks (torch.norm routes through it)."""
    if a._kind < 2:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {type_name(a)}")
    if dtype is not None:
        check_dtype_arg(dtype, "norm")
        if dtype._kind < 2:
            raise RuntimeError("linalg.vector_norm: dtype should be floating point or complex, "
                               f"but got {type_name(dtype)}")


def _check_identity(shape, p, dims):
    """Norms without an identity (p < 0, inf) refuse to reduce an empty extent."""
    if not (p < 0 or math.isinf(p)):
        return
    pname = ("inf" if p > 0 else "-inf") if math.isinf(p) else f"{p:g}"
    if dims is None:
        if 0 in shape:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {pname} norm on an empty "
                               "tensor because the operation does not have an identity")
        return
    for d in dims:
        if shape[d] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {pname} norm on the "
                               f"dimension {d}because this dimension is empty and the operation "
                               "does not have an identity")


def _norm_kernel(a, p, dims, keepdim, dtype):
    _norm_checks(D.from_numpy_dtype(a.dtype), p, dims, dtype)
    _check_identity(a.shape, p, dims)
    if dtype is not None:
        a = a.astype(dtype.np)
    out = np.dtype(D.from_numpy_dtype(a.dtype).to_real().np)
    x = np.abs(a).astype(np.float32 if out.itemsize == 2 else out, copy=False)
    kw = dict(axis=dims, keepdims=keepdim)
    with np.errstate(all="ignore"):
        if p == 2:
            r = np.sqrt(np.sum(x * x, **kw))
        elif p == 1:
            r = np.sum(x, **kw)
        elif p == 0:
            r = np.sum(x != 0, dtype=x.dtype, **kw)
        elif p == math.inf:
            r = np.max(x, **kw)
        elif p == -math.inf:
            r = np.min(x, **kw)
        else:
            r = np.sum(x ** p, **kw) ** (1.0 / p)
    return np.asarray(r).astype(out, copy=False)


def _norm_meta(a, p, dims, keepdim, dtype):
    _norm_checks(a.dtype, p, dims, dtype)
    _check_identity(a.shape, p, dims)
    return reduced_shape(a.shape, dims, keepdim), (dtype or a.dtype).to_real()


def _norm_vjp(ctx, g):
    """PyTorch's norm_backward, case by case (p = 0 has a zero gradient)."""
    x, p, dims, keepdim, dtype = ctx.args
    shape = ctx.shapes[0]
    if dtype is not None:
        x = x.to(dtype)
    if p == 0:
        return (x.real * 0 if x.is_complex() else x * 0, None, None, None, None)
    g = unsqueeze_to(g, shape, dims, keepdim)
    n = unsqueeze_to(ctx.out, shape, dims, keepdim)
    if p == 1:
        gi = x.sgn() * g
    elif p == 2:
        gi = x * (g / n).masked_fill(n == 0, 0)
    elif math.isinf(p):
        xa = x.abs()
        mask = (xa == n).logical_or(xa.isnan())
        count = mask.sum(dims, keepdim=True) if dims is not None else mask.sum()
        gi = x.sgn() * ((g / count) * mask)
    elif p < 1:
        gi = x.sgn() * x.abs().pow(p - 1).masked_fill(x == 0, 0) * g * n.pow(1 - p)
    elif p < 2:
        gi = x.sgn() * x.abs().pow(p - 1) * (g / n.pow(p - 1)).masked_fill(n == 0, 0)
    else:
        gi = x * x.abs().pow(p - 2) * (g / n.pow(p - 1)).masked_fill(n == 0, 0)
    return (gi, None, None, None, None)


def p_norm_decomp(a, p, dims, keepdim):
    """The p-norm from prims: amax/amin of |a| for p = +-inf, the count of nonzeros for
    p = 0, else sum(|a|**p) ** (1/p) (also linalg.vector_norm's decomposition)."""
    from .. import _prims as P
    if isinstance(dims, int):
        dims = (dims,)
    if dims is not None and len(dims) == 0:
        dims = None
    if dims is not None:                      # sum's vjp reads non-negative dims
        dims = tuple(d % max(a.dim(), 1) for d in dims)
    x = P.abs(a)
    if p == math.inf:
        return P.amax(x, dims, keepdim)
    if p == -math.inf:
        return P.amin(x, dims, keepdim)
    if p == 0:
        return P._to_copy(P.sum(P.ne(x, 0), dims, keepdim, None), x.dtype)
    if p == 1:
        return P.sum(x, dims, keepdim, None)
    if p == 2:
        return P.sqrt(P.sum(P.mul(x, x), dims, keepdim, None))
    return P.pow(P.sum(P.pow(x, p), dims, keepdim, None), 1.0 / p)


def _norm_decomp(a, p, dims, keepdim, dtype=None):
    from .. import _prims as P
    if dtype is not None:
        a = P._to_copy(a, dtype)
    return p_norm_decomp(a, 2 if p is None else p, dims, keepdim)


NORM = register("norm", _norm_kernel, meta=_norm_meta, vjp=_norm_vjp, save=(0,), save_out=True,
                tags=("reduction",), decomp=_norm_decomp,
                schema="norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1]? dim, "
                       "bool keepdim, *, ScalarType? dtype) -> Tensor")


def _vector_norm(input, p, dim, keepdim, dtype, out):
    if not isinstance(p, numbers.Real) or isinstance(p, bool):
        raise TypeError(f"norm(): argument 'p' must be a number or str, not {type(p).__name__}")
    if isinstance(dim, int):
        dim = (dim,)
    dims = reduce_dims(dim, input._data.ndim, "norm")
    res = dispatch(NORM, (input, float(p), dims, keepdim, dtype))
    return res if out is None else write_out(out, res, "norm")


def _nuclear_norm(input, dim, keepdim, dtype, out):
    """p='nuc': the sum of singular values over two dims (through ember.linalg.svdvals)."""
    from .. import linalg
    if input._data.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    dims = list(range(input._data.ndim)) if dim is None else list(dim)
    if len(dims) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got " +
                           " ".join(str(d) for d in dims))
    d0, d1 = (_wrap_dim(d, input._data.ndim, "norm") for d in dims)
    svdvals = getattr(linalg, "svdvals", None)
    if svdvals is None:
        raise NotImplementedError("norm(p='nuc') needs ember.linalg.svdvals")
    x = input if dtype is None else input.to(dtype)
    res = svdvals(x.movedim((d0, d1), (-2, -1))).sum(-1)
    if keepdim:
        for d in sorted((d0, d1)):
            res = res.unsqueeze(d)
    return res if out is None else write_out(out, res, "norm")


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: a vector norm over `dim` (all dims by default), or the nuclear norm."""
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return _vector_norm(input, 2, dim, keepdim, dtype, out)
        if p == "nuc":
            return _nuclear_norm(input, dim, keepdim, dtype, out)
        if p == "fro":
            raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got " +
                               " ".join(str(d) for d in dim))
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    return _vector_norm(input, 2 if p is None else p, dim, keepdim, dtype, out)


def dist(input, other, p=2):
    """norm(input - other, p): floating inputs only, as PyTorch."""
    for t in (input, other):
        if isinstance(t, Tensor) and t._dtype._kind < 2:
            raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                               f"Got {type_name(t._dtype)} instead.")
    return _vector_norm(input - other, p, None, False, None, None)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dimension (F.pairwise_distance; the triplet and
    cosine-free margin losses use it, so it sits here, below nn)."""
    out_dim = max(x1.dim(), x2.dim())
    diff = x1 - x2 + eps
    if out_dim == 0:
        return diff.abs() if p != 0 else (diff != 0).to(diff.dtype)
    return diff.norm(p, out_dim - 1, keepdim)


def _make_methods():
    METHODS["dist"] = dist

    def norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
        return norm(self, p, dim, keepdim, dtype=dtype)
    norm_method.__name__ = "norm"
    METHODS["norm"] = norm_method


_make_methods()
