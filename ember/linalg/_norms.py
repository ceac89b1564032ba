"""Norms: vector_norm (a registry op with PyTorch's norm_backward, which gives the
zero subgradient at 0), matrix_norm, norm and cond (compositions), matrix_rank.
"""
import math

import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor
from ..ops._elementwise import type_name
from ..ops._registry import register
from ._common import check_float, check_matrix, dtype_of, real_dtype, wrap_dims
from ._solve import _out

INF = math.inf


def _norm_dims(shape, dim, op):
    nd = len(shape)
    if dim is None:
        return tuple(range(nd))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = wrap_dims(dims, max(nd, 1), op) if nd else wrap_dims(dims, 1, op)
    if len(set(dims)) != len(dims):
        d = next(x for x in dims if dims.count(x) > 1)
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return tuple(d for d in dims if d < nd)


def _vector_norm_checks(x, ord, dim, keepdim, dtype):
    op = "linalg.vector_norm"
    xd = dtype_of(x)
    if xd._kind < 2:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. "
                           f"Got {type_name(xd)}")
    if dtype is not None:
        if dtype._kind < 2:
            raise RuntimeError(f"{op}: dtype should be floating point or complex, but got "
                               f"{type_name(dtype)}")
        if xd.is_complex and not dtype.is_complex:
            raise RuntimeError(f"{op}: dtype should be complex for complex input, but got "
                               f"{type_name(dtype)}")
    shape = tuple(x.shape)
    dims = _norm_dims(shape, dim, op)
    if (ord < 0 or ord == INF) and (any(shape[d] == 0 for d in dims)
                                    or (dim is None and 0 in shape)):
        what = "inf" if ord == INF else "negative"
        raise RuntimeError(f"{op} cannot compute the {what} norm on an empty tensor "
                           "because the operation does not have an identity")
    out_shape = tuple(1 if i in dims else s for i, s in enumerate(shape)) if keepdim else \
        tuple(s for i, s in enumerate(shape) if i not in dims)
    return dims, out_shape, real_dtype(dtype or xd)


def _vector_norm_kernel(x, ord, dim, keepdim, dtype):
    dims, shape, rd = _vector_norm_checks(x, ord, dim, keepdim, dtype)
    if dtype is not None:
        x = x.astype(dtype.np)
    a = np.abs(x)
    if a.dtype.itemsize == 2 or a.dtype == D.bfloat16.np:
        a = a.astype(np.float32)
    if ord == INF:
        r = a.max(axis=dims, keepdims=True)
    elif ord == -INF:
        r = a.min(axis=dims, keepdims=True)
    elif ord == 0:
        r = (a != 0).sum(axis=dims, keepdims=True).astype(a.dtype)
    elif ord == 1:
        r = a.sum(axis=dims, keepdims=True)
    elif ord == 2:
        r = np.sqrt((a * a).sum(axis=dims, keepdims=True))
    else:
        r = (a ** ord).sum(axis=dims, keepdims=True) ** (1.0 / ord)
    return np.asarray(r, rd.np).reshape(shape)


def _vector_norm_meta(x, ord, dim, keepdim, dtype):
    _, shape, rd = _vector_norm_checks(x, ord, dim, keepdim, dtype)
    return shape, rd


def _vector_norm_vjp(ctx, g):
    """PyTorch's norm_backward."""
    from ..ops.indexing import where
    x, ord, dim, keepdim, dtype = ctx.args
    norm = ctx.out
    if dtype is not None:
        x = x.to(dtype)
    dims, _, _ = _vector_norm_checks(x, ord, dim, keepdim, dtype)
    if not keepdim:
        kshape = tuple(1 if i in dims else s for i, s in enumerate(x.shape))
        g, norm = g.reshape(kshape), norm.reshape(kshape)
    if ord == 0:
        return x * 0, None, None, None, None
    if ord == 1:
        return x.sgn() * g, None, None, None, None
    if ord == 2:
        return x * where(norm == 0, 0, g / norm), None, None, None, None
    if ord in (INF, -INF):
        mask = (x.abs() == norm).to(g.dtype)
        return x.sgn() * (g / mask.sum(dims, keepdim=True)) * mask, None, None, None, None
    xa = x.abs()
    if ord < 1:
        scaled = where(x == 0, 0, x.sgn() * xa ** (ord - 1))
        return scaled * g * norm ** (1 - ord), None, None, None, None
    scaled = x.sgn() * xa ** (ord - 1) if ord < 2 else x * xa ** (ord - 2)
    return scaled * where(norm == 0, 0, g / norm ** (ord - 1)), None, None, None, None


def _vector_norm_decomp(a, ord=2, dim=None, keepdim=False, dtype=None):
    """The p-norm from prims (ember/ops/vector_norm.py: p_norm_decomp)."""
    from .. import _prims as P
    from ..ops.vector_norm import p_norm_decomp
    if dtype is not None:
        a = P._to_copy(a, dtype)
    return p_norm_decomp(a, ord, dim, keepdim)


VECTOR_NORM_OP = register("linalg_vector_norm", _vector_norm_kernel, meta=_vector_norm_meta,
                          vjp=_vector_norm_vjp, save=(0,), save_out=True,
                          tags=("reduction",), decomp=_vector_norm_decomp,
                          schema="linalg_vector_norm(Tensor self, Scalar ord=2, "
                                 "int[1]? dim=None, bool keepdim=False, *, "
                                 "ScalarType? dtype=None) -> Tensor")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    if isinstance(ord, Tensor):
        ord = ord.item()
    if isinstance(dim, list):
        dim = tuple(dim)
    res = dispatch(VECTOR_NORM_OP, (x, float(ord), dim, bool(keepdim), dtype))
    return _out(res, out, "linalg.vector_norm")


# ---------------------------------------------------------------- matrix norms

_MATRIX_ORDS = ("fro", "nuc", INF, -INF, 1, -1, 2, -2)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    op = "linalg.matrix_norm"
    check_matrix(tuple(A.shape), op)
    if ord not in _MATRIX_ORDS or isinstance(ord, bool):
        raise RuntimeError(f"{op}: Order {ord} not supported.")
    dims = wrap_dims(tuple(dim), A.ndim, op)
    if len(dims) != 2:
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    if dims[0] == dims[1]:
        raise RuntimeError(f"{op}: dims must be different. Got ({dim[0]}, {dim[1]})")
    check_float(dtype or A.dtype, op)
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        res = vector_norm(A, 2, dims, keepdim)
    elif ord in ("nuc", 2, -2):
        from ._decomp import svdvals
        s = svdvals(A.movedim(dims, (-2, -1)))
        res = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:
            for d in sorted(dims):
                res = res.unsqueeze(d)
    else:
        d_sum, d_max = (dims[0], dims[1]) if abs(ord) == 1 else (dims[1], dims[0])
        s = A.abs().sum(d_sum, keepdim=True)
        res = s.amax(d_max, keepdim=True) if ord > 0 else s.amin(d_max, keepdim=True)
        if not keepdim:
            res = res.squeeze(max(dims)).squeeze(min(dims))
    return _out(res, out, op)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """linalg.norm: a vector norm, or a matrix norm for a str ord, a 2-tuple dim, or
    a 2-d input with ord and no dim (NumPy's rules)."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or isinstance(ord, str):
        return matrix_norm(A, "fro" if ord is None else ord, dim or (-2, -1), keepdim,
                           dtype=dtype, out=out)
    if dim is None and ord is not None:
        if A.ndim not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.ndim}D.")
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)


def cond(A, p=None, *, out=None):
    """The condition number: a ratio of singular values for p in (None, 2, -2),
    otherwise norm(A, p) * norm(inv(A), p)."""
    op = "linalg.cond"
    check_matrix(tuple(A.shape), op)
    check_float(A.dtype, op)
    if p in (None, 2, -2):
        from ._decomp import svdvals
        s = svdvals(A)
        res = s.amax(-1) / s.amin(-1) if p != -2 else s.amin(-1) / s.amax(-1)
    else:
        from ._common import check_square
        from ._solve import inv_ex
        check_square(tuple(A.shape), op)
        Ainv, info = inv_ex(A)
        res = matrix_norm(A, p) * matrix_norm(Ainv, p)
        if info._data.any():
            from ..ops.indexing import where
            res = where(info > 0, math.inf, res)
    return _out(res, out, op)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    """The number of singular values above max(atol, rtol * largest); int64."""
    op = "linalg.matrix_rank"
    check_matrix(tuple(A.shape), op)
    check_float(A.dtype, op)
    from ..autograd.grad_mode import no_grad
    from ..ops.creation import from_numpy
    with no_grad():
        if hermitian:
            from ._decomp import eigvalsh
            s = eigvalsh(A).abs()._data
        else:
            from ._decomp import svdvals
            s = svdvals(A)._data
    if tol is not None:
        atol, rtol = tol, 0.0
    m, n = A.shape[-2:]
    eps = np.finfo(s.dtype).eps if s.size or s.dtype.kind == "f" else 0
    tolv = lambda t: None if t is None else np.asarray(t._data if isinstance(t, Tensor) else t)
    atol, rtol = tolv(atol), tolv(rtol)
    if rtol is None:
        rtol = eps * max(m, n) if atol is None else np.where(atol > 0, 0.0, eps * max(m, n))
    atol = 0.0 if atol is None else atol
    smax = s.max(-1, initial=0)
    thresh = np.maximum(atol, rtol * smax)[..., None]
    return _out(from_numpy(np.asarray((s > thresh).sum(-1), np.int64)), out, op)
