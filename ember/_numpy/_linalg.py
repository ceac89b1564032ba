"""NumPy linear algebra on Tensors: dot, matmul, einsum, outer, inner, tensordot, kron,
trace, vdot, and numpy.linalg (norm, inv, det, slogdet, solve, cholesky, eigvalsh,
matrix_power, multi_dot, pinv).

Note: NumPy's rules where PyTorch's differ: `dot` of N-d arrays contracts a's last axis
with b's second-to-last (not matmul's batching), matmul of bool is a logical product,
integer inputs to numpy.linalg compute in float64, float16 is refused by numpy.linalg,
and `linalg.solve` treats `b` as a vector only when it is 1-d (NumPy 2).
"""
import numpy as np

import ember
from .. import _dtype as D
from ._util import (Unsupported, asarray, cast, check_out, float_dtype_for, norm_axis,
                    result_type,
                    sum_dtype, to_ember_dtype)


def _common(*xs):
    """Operands as arrays (Python scalars become strong 0-d arrays, as np.asarray makes
    them in dot/inner/outer/tensordot) in their common dtype."""
    ts = [asarray(x) for x in xs]
    d = result_type(*ts)
    return [cast(t, d) for t in ts], d


def _mm(a, b):
    """matmul in a's dtype; bool is 'any(a and b)' as NumPy computes it."""
    if a.dtype is D.bool:
        return ember.matmul(a.to(D.int64), b.to(D.int64)) != 0
    return ember.matmul(a, b)


def matmul(x1, x2, /, out=None, *, casting="same_kind", order="K", dtype=None, subok=True,
           axes=None, axis=None):
    check_out("matmul", out)
    if axes is not None or axis is not None:
        raise Unsupported("numpy.matmul(axes=...) is not supported when tracing")
    from ._ufuncs import _fit_weak_int
    for x, other in ((x1, x2), (x2, x1)):
        if isinstance(other, ember.Tensor):
            _fit_weak_int("matmul", x, other.dtype.np)     # NumPy converts first
    a, b = asarray(x1), asarray(x2)
    for i, t in enumerate((a, b)):
        if t.ndim == 0:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions "
                             "(has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) "
                             "requires 1)")
    k1 = a.shape[-1]
    k2 = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k1 != k2:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {k2} is "
                         f"different from {k1})")
    kw = {"casting": casting}
    if dtype is not None:
        kw["signature"] = (None, None, np.dtype(dtype))
    loop = np.matmul.resolve_dtypes((a.dtype.np, b.dtype.np, None), **kw)
    d = to_ember_dtype(loop[0], "matmul")
    return cast(_mm(cast(a, d), cast(b, d)), to_ember_dtype(loop[2], "matmul"))


def dot(a, b, out=None):
    check_out("dot", out)
    (x, y), _ = _common(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if y.ndim == 1 or x.ndim <= 2 and y.ndim == 2:
        if x.shape[-1] != y.shape[0 if y.ndim == 1 else -2]:
            raise ValueError(f"shapes {tuple(x.shape)} and {tuple(y.shape)} not aligned")
        return _mm(x, y)
    return tensordot(x, y, axes=([x.ndim - 1], [y.ndim - 2]))


def vdot(a, b, /):
    (x, y), _ = _common(a, b)
    x, y = x.reshape(-1), y.reshape(-1)
    if x.shape[0] != y.shape[0]:
        raise ValueError("cannot reshape array: vectors have different lengths")
    if x.dtype.is_complex:
        x = ember.conj_physical(x)
    return _mm(x, y)


def inner(a, b, /):
    (x, y), _ = _common(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"shapes {tuple(x.shape)} and {tuple(y.shape)} not aligned")
    return tensordot(x, y, axes=([x.ndim - 1], [y.ndim - 1]))


def outer(a, b, out=None):
    check_out("outer", out)
    (x, y), _ = _common(a, b)
    return x.reshape(-1, 1) * y.reshape(1, -1)


def tensordot(a, b, axes=2):
    (x, y), d = _common(a, b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        ax_a = list(range(x.ndim - n, x.ndim))
        ax_b = list(range(n))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    if len(ax_a) != len(ax_b):
        raise ValueError("shape-mismatch for sum")
    ax_a = [norm_axis(i, x.ndim) for i in ax_a]
    ax_b = [norm_axis(i, y.ndim) for i in ax_b]
    for i, j in zip(ax_a, ax_b):
        if x.shape[i] != y.shape[j]:
            raise ValueError("shape-mismatch for sum")
    if d is D.bool:
        return ember.tensordot(x.to(D.int64), y.to(D.int64), dims=(ax_a, ax_b)) != 0
    return ember.tensordot(x, y, dims=(ax_a, ax_b))


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    check_out("einsum", out)
    if not operands or not isinstance(operands[0], str):
        raise Unsupported("numpy.einsum in the interleaved (operand, sublist) form")
    eq, ops = operands[0], operands[1:]
    ts, d = _common(*ops)
    _check_subscripts(eq, ts)
    if dtype is not None:
        d = to_ember_dtype(dtype, "einsum")
        ts = [cast(t, d) for t in ts]
    if d is D.bool:
        return ember.einsum(eq, *[t.to(D.int64) for t in ts]) != 0
    return ember.einsum(eq, *ts)


def _check_subscripts(eq, ts):
    """NumPy's ValueErrors for subscripts that do not fit the operands."""
    terms = eq.replace(" ", "").split("->")[0].split(",")
    if len(terms) != len(ts):
        raise ValueError("more operands provided to einstein sum function than specified "
                         "in the subscripts string" if len(ts) > len(terms) else
                         "fewer operands provided to einstein sum function than specified "
                         "in the subscripts string")
    for i, (term, t) in enumerate(zip(terms, ts)):
        n = len(term.replace("...", ""))
        if "..." not in term and n > t.ndim:
            raise ValueError(f"einstein sum subscripts string contains too many subscripts "
                             f"for operand {i}")
        if "..." not in term and n < t.ndim:
            raise ValueError("operand has more dimensions than subscripts given in einstein "
                             "sum, but no '...' ellipsis provided to broadcast the extra "
                             "dimensions.")
        if "..." in term and n > t.ndim:
            raise ValueError(f"einstein sum subscripts string contains too many subscripts "
                             f"for operand {i}")


def kron(a, b):
    (x, y), d = _common(a, b)
    if d is D.bool:
        return ember.kron(x.to(D.int64), y.to(D.int64)) != 0
    return ember.kron(x, y)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    check_out("trace", out)
    x = asarray(a)
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    d = to_ember_dtype(dtype, "trace") or sum_dtype(x.dtype)
    diag = ember.diagonal(x, offset, norm_axis(axis1, x.ndim), norm_axis(axis2, x.ndim))
    return ember.sum(cast(diag, d), dim=-1, dtype=d)


# --- numpy.linalg -----------------------------------------------------------------------

def _lin(x, name, min_nd=2, square=True):
    t = asarray(x)
    if t.ndim < min_nd:
        raise np.linalg.LinAlgError(f"{t.ndim}-dimensional array given. Array must be at "
                                    f"least two-dimensional")
    if square and t.shape[-1] != t.shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    if t.dtype in (D.float16, D.bfloat16):
        raise TypeError(f"array type {t.dtype.np} is unsupported in linalg")
    return cast(t, float_dtype_for(t.dtype))


def inv(a):
    return ember.linalg.inv(_lin(a, "inv"))


def det(a):
    return ember.linalg.det(_lin(a, "det"))


def slogdet(a):
    sign, logabs = ember.linalg.slogdet(_lin(a, "slogdet"))
    return sign, logabs


def cholesky(a, /, *, upper=False):
    return ember.linalg.cholesky(_lin(a, "cholesky"), upper=upper)


def eigvalsh(a, UPLO="L"):
    return ember.linalg.eigvalsh(_lin(a, "eigvalsh"), UPLO=UPLO)


def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    x = _lin(a, "pinv", square=False)
    if rcond is not None and rtol is not None:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    if rcond is None and rtol is None:
        eps = np.finfo(x.dtype.np).eps
        rtol = max(x.shape[-2], x.shape[-1]) * eps
    elif rcond is not None:
        rtol = rcond
    return ember.linalg.pinv(x, rtol=rtol, hermitian=hermitian)


def eigh(a, UPLO="L"):
    w, v = ember.linalg.eigh(_lin(a, "eigh"), UPLO=UPLO)
    return w, v


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    x = _lin(a, "svd", square=False)
    if not compute_uv:
        return ember.linalg.svdvals(x)
    u, s, vh = ember.linalg.svd(x, full_matrices=full_matrices)
    return u, s, vh


def svdvals(x, /):
    return ember.linalg.svdvals(_lin(x, "svdvals", square=False))


def qr(a, mode="reduced"):
    x = _lin(a, "qr", square=False)
    if mode not in ("reduced", "complete", "r"):
        raise Unsupported(f"numpy.linalg.qr(mode={mode!r}) is not traced")
    q, r = ember.linalg.qr(x, mode="complete" if mode == "complete" else "reduced")
    return r if mode == "r" else (q, r)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    x = asarray(A)
    if x.ndim < 2:
        raise Unsupported("numpy.linalg.matrix_rank of a vector returns a Python int "
                          "computed from the data (host read)")
    s = svdvals(x)
    if tol is None:
        if rtol is None:
            rtol = max(x.shape[-2:]) * np.finfo(s.dtype.np).eps
        tol = ember.amax(s, dim=-1, keepdim=True) * rtol
    elif isinstance(tol, ember.Tensor):
        tol = tol.unsqueeze(-1)
    return ember.sum(s > tol, dim=-1)


def solve(a, b):
    x = _lin(a, "solve")
    y = asarray(b)
    d = result_type(x, float_dtype_for(y.dtype))
    x, y = cast(x, d), cast(y, d)
    if y.ndim == 1:
        if y.shape[0] != x.shape[-1]:
            raise ValueError("solve: Input operand 1 has a mismatch in its core dimension 0")
        return ember.linalg.solve(x, y.reshape(-1, 1).expand(*x.shape[:-1], 1)
                                  if x.ndim > 2 else y.reshape(-1, 1)).squeeze(-1)
    if y.shape[-2] != x.shape[-1]:
        raise ValueError("solve: Input operand 1 has a mismatch in its core dimension 0")
    return ember.linalg.solve(x, y)


def matrix_power(a, n):
    x = asarray(a)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    if n < 0:
        x = inv(x)
        n = -n
    if n == 0:
        eye = ember.eye(x.shape[-1], dtype=x.dtype)
        return ember.broadcast_to(eye, tuple(x.shape)).clone()
    result = None
    base = x
    while n:
        if n & 1:
            result = base if result is None else _mm(result, base)
        n >>= 1
        if n:
            base = _mm(base, base)
    return result


def multi_dot(arrays, *, out=None):
    check_out("multi_dot", out)
    xs = [asarray(a) for a in arrays]
    if len(xs) < 2:
        raise ValueError("Expecting at least two arrays.")
    first_1d, last_1d = xs[0].ndim == 1, xs[-1].ndim == 1
    if first_1d:
        xs[0] = xs[0].reshape(1, -1)
    if last_1d:
        xs[-1] = xs[-1].reshape(-1, 1)
    res = xs[0]
    for x in xs[1:]:
        res = dot(res, x)
    if first_1d:
        res = res.squeeze(0)
    if last_1d:
        res = res.squeeze(-1)
    return res


def norm(x, ord=None, axis=None, keepdims=False):
    t = asarray(x)
    if t.dtype in (D.float16, D.bfloat16):
        d = t.dtype
    else:
        d = float_dtype_for(t.dtype)
    t = cast(t, d)
    if axis is None and ord is None:
        r = ember.linalg.vector_norm(t.reshape(-1), 2)
        return r.reshape((1,) * t.ndim) if keepdims else r
    if axis is None and t.ndim > 2:
        raise ValueError("Improper number of dimensions to norm.")
    if isinstance(axis, (tuple, list)) and len(axis) == 1:
        axis = axis[0]
    dim = axis if axis is None or isinstance(axis, int) else tuple(axis)
    if d in (D.float16, D.bfloat16):        # NumPy keeps half; ember computes it in float32
        return cast(ember.linalg.norm(t.to(D.float32), ord, dim=dim, keepdim=keepdims), d)
    return ember.linalg.norm(t, ord, dim=dim, keepdim=keepdims)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    t = asarray(x)
    t = cast(t, float_dtype_for(t.dtype))
    return ember.linalg.vector_norm(t, ord, dim=axis, keepdim=keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    t = asarray(x)
    d = float_dtype_for(t.dtype)
    t = cast(t, D.float32 if d in (D.float16, D.bfloat16) else d)
    return cast(ember.linalg.matrix_norm(t, ord, keepdim=keepdims), d.to_real())
