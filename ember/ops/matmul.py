"""Matrix products: matmul (the batched primitive), mm, bmm, mv, dot, and `@`.

Note: every kernel is one `np.matmul`/`np.dot` call, so float32/float64/complex go
through NumPy's BLAS; float16/bfloat16 are multiplied in float32 and rounded once.
NumPy would silently promote mixed dtypes and multiply bool matrices, so the kernels
refuse those first, with PyTorch's messages. A shape error from NumPy runs the op's
meta, which names the shapes the way PyTorch's (folded) kernels report them.
Python's `a @= b` rebinds `a` to a new tensor, as in PyTorch (no `__imatmul__`).
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor
from ._elementwise import write_out, type_name
from ._registry import register

__all__ = ["matmul", "mm", "bmm", "mv", "dot"]

# c10's scalar type names, as PyTorch's "expected m1 and m2 to have the same dtype" prints
_C10 = {"float32": "float", "float64": "double", "float16": "c10::Half",
        "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
        "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
        "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _np_name(a):
    return D.from_numpy_dtype(a.dtype).name


def _kind(a):
    return type_name(D.from_numpy_dtype(a.dtype))


def _product(fn, a, b):
    """fn(a, b) with half precision computed in float32 and rounded once."""
    dt = a.dtype
    if dt.kind == "f" and dt.itemsize == 2 or dt == D.bfloat16.np:
        return np.asarray(fn(a.astype(np.float32), b.astype(np.float32))).astype(dt)
    return np.asarray(fn(a, b))


def _check_mm_dtypes(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{_C10[_np_name(a)]} != {_C10[_np_name(b)]}")
    if a.dtype == np.bool_:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")


def _check_dot_dtypes(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_kind(a)} and {_kind(b)}")
    if a.dtype == np.bool_:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")


def _check_mv_dtypes(m, v):
    if m.dtype != v.dtype:
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{_kind(v)}, {_kind(m)}, and {_kind(v)}")
    if m.dtype == np.bool_:
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")


def _mat_str(shape):
    return "x".join(str(s) for s in shape)


# ------------------------------------------------------------------------- mm

def _mm_shape_check(sa, sb):
    if len(sa) != 2:
        raise RuntimeError("self must be a matrix")
    if len(sb) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if sa[1] != sb[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_mat_str(sa)} "
                           f"and {_mat_str(sb)})")


def _mm_kernel(a, b):
    _mm_shape_check(a.shape, b.shape)
    _check_mm_dtypes(a, b)
    return _product(np.matmul, a, b)


def _mm_vjp(ctx, g):
    a, b = ctx.args
    na, nb = ctx.needs_input_grad
    return (g.mm(b.conj().t()) if na else None, a.conj().t().mm(g) if nb else None)


def _mm_meta(a, b):
    _mm_shape_check(tuple(a.shape), tuple(b.shape))
    _check_mm_dtypes(a._data, b._data)
    return (a.shape[0], b.shape[1]), a.dtype


def _via_matmul(a, b):
    """mm/bmm/mv/dot decompose to the batched matmul primitive (DESIGN §4)."""
    return dispatch(MATMUL, (a, b))


MM = register("mm", _mm_kernel, meta=_mm_meta, vjp=_mm_vjp, decomp=_via_matmul,
              tags=("linalg",), amp_policy="lower_precision")


def mm(input, mat2, *, out=None):
    res = dispatch(MM, (input, mat2))
    return res if out is None else write_out(out, res, "mm")


# ------------------------------------------------------------------------ bmm

def _bmm_shape_check(sa, sb):
    if len(sa) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(sb) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if sa[0] != sb[0] or sa[2] != sb[1]:
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{sa[0]}, {sa[2]}] but got: [{sb[0]}, {sb[1]}].")


def _check_bmm_dtypes(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_kind(a)} but found {_kind(b)}")
    if a.dtype == np.bool_:
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")


def _bmm_kernel(a, b):
    _bmm_shape_check(a.shape, b.shape)
    _check_bmm_dtypes(a, b)
    return _product(np.matmul, a, b)


def _bmm_vjp(ctx, g):
    a, b = ctx.args
    na, nb = ctx.needs_input_grad
    return (g.bmm(b.conj().transpose(1, 2)) if na else None,
            a.conj().transpose(1, 2).bmm(g) if nb else None)


def _bmm_meta(a, b):
    _bmm_shape_check(tuple(a.shape), tuple(b.shape))
    _check_bmm_dtypes(a._data, b._data)
    return (a.shape[0], a.shape[1], b.shape[2]), a.dtype


BMM = register("bmm", _bmm_kernel, meta=_bmm_meta, vjp=_bmm_vjp, decomp=_via_matmul,
               tags=("linalg",), amp_policy="lower_precision")


def bmm(input, mat2, *, out=None):
    res = dispatch(BMM, (input, mat2))
    return res if out is None else write_out(out, res, "bmm")


# ------------------------------------------------------------------- mv / dot

def _mv_shape_check(sm, sv):
    if len(sm) != 2 or len(sv) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {len(sm)}, {len(sv)}")
    if sm[1] != sv[0]:
        raise RuntimeError(f"size mismatch, got input ({sm[0]}), mat "
                           f"({_mat_str(sm)}), vec ({sv[0]})")


def _mv_kernel(m, v):
    _mv_shape_check(m.shape, v.shape)
    _check_mv_dtypes(m, v)
    return _product(np.matmul, m, v)


def _mv_vjp(ctx, g):
    m, v = ctx.args
    nm, nv = ctx.needs_input_grad
    return (g.unsqueeze(1) * v.conj() if nm else None, m.conj().t().mv(g) if nv else None)


def _mv_meta(m, v):
    _mv_shape_check(tuple(m.shape), tuple(v.shape))
    _check_mv_dtypes(m._data, v._data)
    return (m.shape[0],), m.dtype


MV = register("mv", _mv_kernel, meta=_mv_meta, vjp=_mv_vjp, decomp=_via_matmul,
              tags=("linalg",))


def mv(input, vec, *, out=None):
    res = dispatch(MV, (input, vec))
    return res if out is None else write_out(out, res, "mv")


def _dot_shape_check(sa, sb):
    if len(sa) != 1 or len(sb) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(sa)}D and {len(sb)}D tensors")
    if sa[0] != sb[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src "
                           f"[{sb[0]}] to have the same number of elements, but got "
                           f"{sa[0]} and {sb[0]} elements respectively")


def _dot_kernel(a, b):
    _dot_shape_check(a.shape, b.shape)
    _check_dot_dtypes(a, b)
    return _product(np.dot, a, b)


def _dot_vjp(ctx, g):
    a, b = ctx.args
    na, nb = ctx.needs_input_grad
    return (g * b.conj() if na else None, g * a.conj() if nb else None)


def _dot_meta(a, b):
    _dot_shape_check(tuple(a.shape), tuple(b.shape))
    _check_dot_dtypes(a._data, b._data)
    return (), a.dtype


DOT = register("dot", _dot_kernel, meta=_dot_meta, vjp=_dot_vjp, decomp=_via_matmul,
               tags=("linalg",))


def dot(input, tensor, *, out=None):
    res = dispatch(DOT, (input, tensor))
    return res if out is None else write_out(out, res, "dot")


# --------------------------------------------------------------------- matmul

def _matmul_kernel(a, b):
    _check_matmul_dtypes(a, b)
    return _product(np.matmul, a, b)


def _check_matmul_dtypes(a, b):
    """Rank and dtype checks, with the messages of the product matmul folds to."""
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    if a.ndim == 1 and b.ndim == 1:
        _check_dot_dtypes(a, b)
    elif b.ndim == 1:
        _check_mv_dtypes(a, b)
    elif b.ndim == 2:
        _check_mm_dtypes(a, b)
    else:
        _check_bmm_dtypes(a, b)


def _matmul_meta(a, b):
    """PyTorch's matmul errors, as its folded dot/mv/mm/bmm report them, and NumPy's
    matmul shape: broadcast batch dims, a 1-d operand's dim dropped."""
    sa, sb = tuple(a.shape), tuple(b.shape)
    _check_matmul_dtypes(a._data, b._data)
    if len(sa) == 1 and len(sb) == 1:
        _dot_shape_check(sa, sb)
        return (), a.dtype
    if len(sb) == 1:
        _mv_shape_check((_rows(sa), sa[-1]), sb)
        return sa[:-1], a.dtype
    if len(sb) == 2:
        _mm_shape_check((_rows(sa), sa[-1]), sb)
        return sa[:-1] + sb[-1:], a.dtype
    from ._elementwise import broadcast_shapes
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    n = int(np.prod(batch))
    _bmm_shape_check((n, 1, sa[-1]), (n,) + sb[-2:])
    rows = sa[-2:-1]                      # a 1-d left operand has no row dim
    return batch + rows + sb[-1:], a.dtype


def _rows(shape):
    """The row count of `shape` folded to a matrix (a vector is one row)."""
    return int(np.prod(shape[:-1]))


def _matmul_vjp(ctx, g):
    """Gradients for every matmul case; the engine sums broadcast batch dims back."""
    a, b = ctx.args
    na, nb = ctx.needs_input_grad
    da, db = a.ndim, b.ndim
    if da == 1 and db == 1:
        return (g * b.conj() if na else None, g * a.conj() if nb else None)
    if da == 1:                                   # (k) @ (..., k, n) -> (..., n)
        ga = matmul(b.conj(), g.unsqueeze(-1)).squeeze(-1) if na else None
        gb = a.conj().unsqueeze(-1) * g.unsqueeze(-2) if nb else None
        return ga, gb
    if db == 1:                                   # (..., m, k) @ (k) -> (..., m)
        ga = g.unsqueeze(-1) * b.conj() if na else None
        gb = _fold(a.conj()).t().mv(g.reshape(-1)) if nb else None
        return ga, gb
    if db == 2 and da > 2:                        # a batch of rows times one matrix
        ga = matmul(g, b.conj().t()) if na else None
        gb = _fold(a.conj()).t().mm(_fold(g)) if nb else None
        return ga, gb
    ga = matmul(g, b.conj().mT) if na else None
    gb = matmul(a.conj().mT, g) if nb else None
    return ga, gb


def _fold(t):
    """(..., m, k) -> (prod(...) * m, k): fold the batch into the rows."""
    return t.reshape((_rows(t.shape), t.shape[-1]))


MATMUL = register("matmul", _matmul_kernel, meta=_matmul_meta, vjp=_matmul_vjp,
                  tags=("linalg",), amp_policy="lower_precision")


def matmul(input, other, *, out=None):
    res = dispatch(MATMUL, (input, other))
    return res if out is None else write_out(out, res, "matmul")


def _rmatmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


def _matmul_op(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(self, other)


def _install():
    Tensor.matmul = matmul
    Tensor.mm = mm
    Tensor.bmm = bmm
    Tensor.mv = mv
    Tensor.dot = dot
    Tensor.__matmul__ = _matmul_op
    Tensor.__rmatmul__ = _rmatmul


_install()
