"""Matrix products: matmul (the batched primitive), mm, bmm, mv, dot, and `@`; the fused
`beta * input + alpha * product` family (addmm, addmv, addr, addbmm, baddbmm); and the
composites vdot, inner, outer/ger, tensordot, chain_matmul (einsum lives in einsum.py).

Note: every kernel is one `np.matmul`/`np.dot` call, so float32/float64/complex go
through NumPy's BLAS; float16/bfloat16 are multiplied in float32 and rounded once.
NumPy would silently promote mixed dtypes and multiply bool matrices, so the kernels
refuse those first, with PyTorch's messages. A shape error from NumPy runs the op's
meta, which names the shapes the way PyTorch's (folded) kernels report them.
Python's `a @= b` rebinds `a` to a new tensor, as in PyTorch (no `__imatmul__`).
"""
import numpy as np

from .._memory import CACHE, cached_out

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor, _wrap_dim
from . import _bf16_gemm
from ._elementwise import write_out, type_name, inplace
from ._lowp import cast
from ._registry import register
from .shape import PERMUTE

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "addmm", "addmv", "addr", "addbmm", "baddbmm",
           "vdot", "inner", "outer", "ger", "tensordot", "chain_matmul", "einsum"]

_BF16 = D.bfloat16.np

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
    if dt.itemsize == 2 and (dt.kind == "f" or dt == _BF16):     # float16 / bfloat16
        return cast(_product_f32(fn, a, b), dt)
    if CACHE[0] is not None and fn is np.matmul and a.ndim == 2 and b.ndim == 2 \
            and dt == b.dtype and dt.kind in "fc":
        out = cached_out((a.shape[0], b.shape[1]), dt)   # ember.cpu caching allocator
        return np.matmul(a, b, out=out)
    return np.asarray(fn(a, b))


def _product_f32(fn, a, b):
    """fn(a, b) of half-precision arrays as float32, not yet rounded: bfloat16 products with
    a matrix on the right run on the bf16 dot-product kernel (ops/_bf16_gemm.py)."""
    if fn is np.matmul and a.dtype == _BF16 and b.dtype == _BF16 and b.ndim == 2 \
            and a.ndim >= 2:
        r = _bf16_gemm.mm(a.reshape(-1, a.shape[-1]), b)
        if r is not None:
            return r.reshape(a.shape[:-1] + (b.shape[1],))
    return np.asarray(fn(cast(a, np.float32), cast(b, np.float32)))


def _check_mm_dtypes(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{_C10[_np_name(a)]} != {_C10[_np_name(b)]}")
    if a.dtype.kind == "b":
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")


def _check_dot_dtypes(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_kind(a)} and {_kind(b)}")
    if a.dtype.kind == "b":
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")


def _check_mv_dtypes(m, v):
    if m.dtype != v.dtype:
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{_kind(v)}, {_kind(m)}, and {_kind(v)}")
    if m.dtype.kind == "b":
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


def _via_matmul(a, b):
    """mm/bmm/mv/dot decompose to the batched matmul primitive (DESIGN §4)."""
    return dispatch(MATMUL, (a, b))


def _product_op(name, check_shapes, check_dtypes, out_shape, vjp, schema, fn=np.matmul,
                amp_policy="none"):
    """mm, bmm, mv and dot: one registry op each, with PyTorch's shape and dtype checks
    (messages differ per op), NumPy's product as the kernel and matmul as the decomposition."""
    def kernel(a, b):
        check_shapes(a.shape, b.shape)
        check_dtypes(a, b)
        return _product(fn, a, b)

    def meta(a, b):
        sa, sb = tuple(a.shape), tuple(b.shape)
        check_shapes(sa, sb)
        check_dtypes(a._data, b._data)
        return out_shape(sa, sb), a.dtype

    kernel.__name__, meta.__name__ = f"_{name}_kernel", f"_{name}_meta"
    return register(name, kernel, meta=meta, vjp=vjp, decomp=_via_matmul, tags=("linalg",),
                    amp_policy=amp_policy, schema=schema)


def _mm_vjp(ctx, g):
    a, b = ctx.args
    na, nb = ctx.needs_input_grad
    return (g.mm(b.conj().t()) if na else None, a.conj().t().mm(g) if nb else None)


MM = _product_op("mm", _mm_shape_check, _check_mm_dtypes, lambda sa, sb: (sa[0], sb[1]),
                 _mm_vjp, "mm(Tensor self, Tensor mat2) -> Tensor", amp_policy="lower_precision")


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
    if a.dtype.kind == "b":
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")


def _bmm_vjp(ctx, g):
    a, b = ctx.args
    na, nb = ctx.needs_input_grad
    return (g.bmm(b.conj().transpose(1, 2)) if na else None,
            a.conj().transpose(1, 2).bmm(g) if nb else None)


BMM = _product_op("bmm", _bmm_shape_check, _check_bmm_dtypes,
                  lambda sa, sb: (sa[0], sa[1], sb[2]), _bmm_vjp,
                  "bmm(Tensor self, Tensor mat2) -> Tensor", amp_policy="lower_precision")


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


def _mv_vjp(ctx, g):
    m, v = ctx.args
    nm, nv = ctx.needs_input_grad
    return (g.unsqueeze(1) * v.conj() if nm else None, m.conj().t().mv(g) if nv else None)


MV = _product_op("mv", _mv_shape_check, _check_mv_dtypes, lambda sm, sv: (sm[0],), _mv_vjp,
                 "mv(Tensor self, Tensor vec) -> Tensor")


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


def _dot_vjp(ctx, g):
    a, b = ctx.args
    na, nb = ctx.needs_input_grad
    return (g * b.conj() if na else None, g * a.conj() if nb else None)


DOT = _product_op("dot", _dot_shape_check, _check_dot_dtypes, lambda sa, sb: (), _dot_vjp,
                  "dot(Tensor self, Tensor tensor) -> Tensor", fn=np.dot)


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
    if da == 2 and db == 2 and not a._dtype.is_complex:   # a linear layer's: the ops direct
        ga = dispatch(MATMUL, (g, dispatch(PERMUTE, (b, (1, 0))))) if na else None
        gb = dispatch(MATMUL, (dispatch(PERMUTE, (a, (1, 0))), g)) if nb else None
        return ga, gb
    ga = matmul(g, b.conj().mT) if na else None
    gb = matmul(a.conj().mT, g) if nb else None
    return ga, gb


def _fold(t):
    """(..., m, k) -> (prod(...) * m, k): fold the batch into the rows."""
    return t.reshape((_rows(t.shape), t.shape[-1]))


MATMUL = register("matmul", _matmul_kernel, meta=_matmul_meta, vjp=_matmul_vjp,
                  tags=("prim", "linalg"), amp_policy="lower_precision",
                  schema="matmul(Tensor self, Tensor other) -> Tensor")


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


def _make_methods():
    METHODS["matmul"] = matmul
    METHODS["mm"] = mm
    METHODS["bmm"] = bmm
    METHODS["mv"] = mv
    METHODS["dot"] = dot
    METHODS["__matmul__"] = _matmul_op
    METHODS["__rmatmul__"] = _rmatmul


_make_methods()



# ------------------------------------------- addmm / addmv / addr / addbmm / baddbmm
# Each is one fused kernel `beta * input + alpha * product` (PyTorch's native ops) with
# a decomposition into ember ops. beta == 0 ignores `input` (NaN included), as BLAS's
# beta does; alpha == 0 skips the product in addmm/addmv/addbmm (BLAS) but not in
# baddbmm/addr, whose CPU kernels multiply (so a NaN there propagates), as in PyTorch.

def _tensor_type(dt):
    return f"torch.{type_name(D.from_numpy_dtype(dt))}Tensor"


def _expand_check(si, target, dt):
    """PyTorch's expand_size errors for an `input` that must broadcast to `target`."""
    if len(si) > len(target):
        raise RuntimeError(f"expand({_tensor_type(dt)}{{{list(si)}}}, size={list(target)}): the "
                           f"number of sizes provided ({len(target)}) must be greater or equal "
                           f"to the number of dimensions in the tensor ({len(si)})")
    lead = len(target) - len(si)
    for i, n in enumerate(si):
        if n != 1 and n != target[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({target[lead + i]}) must match "
                               f"the existing size ({n}) at non-singleton dimension {lead + i}.  "
                               f"Target sizes: {list(target)}.  Tensor sizes: {list(si)}")


def _dk(dt):
    return type_name(D.from_numpy_dtype(dt))


def _not_bool(dt, name):
    if dt == np.bool_:
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


def _addmm_check(si, sa, sb, di, da, db):
    for n, s in (("mat1", sa), ("mat2", sb)):
        if len(s) != 2:
            raise RuntimeError(f"{n} must be a matrix, got {len(s)}-D tensor")
    if sa[1] != sb[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_mat_str(sa)} and "
                           f"{_mat_str(sb)})")
    _expand_check(si, (sa[0], sb[1]), di)
    if di != db:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_dk(di)} and "
                           f"{_dk(db)}")
    if da != db:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_dk(da)} and "
                           f"{_dk(db)}")
    _not_bool(da, "addmm_impl_cpu_")
    return sa[0], sb[1]


def _addmv_check(si, sm, sv, di, dm, dv):
    if len(sm) != 2 or len(sv) != 1 or len(si) > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {len(si)}, {len(sm)}, "
                           f"{len(sv)}")
    ni = int(np.prod(si))
    if sm[1] != sv[0] or (ni != sm[0] and ni != 1):
        raise RuntimeError(f"size mismatch, got input ({si[0] if si else ni}), mat "
                           f"({_mat_str(sm)}), vec ({sv[0]})")
    if not di == dm == dv:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_dk(di)}, "
                           f"{_dk(dm)}, and {_dk(dv)}")
    _not_bool(dm, "addmv_impl_cpu")
    return (sm[0],)


def _size(s, d):
    if d >= len(s):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-len(s)}, "
                         f"{len(s) - 1}], but got {d})")
    return s[d]


def _addbmm_check(si, s1, s2, di, d1, d2, batched):
    if not batched:               # PyTorch sizes the result before checking the ranks
        _expand_check(si, (_size(s1, 1), _size(s2, 2)), di)
    for n, s in (("batch1", s1), ("batch2", s2)):
        if len(s) != 3:
            raise RuntimeError(f"{n} must be a 3D tensor")
    if batched:
        _bmm_shape_check(s1, s2)
        shape = (s1[0], s1[1], s2[2])
    else:
        if s1[0] != s2[0]:
            raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                               f"{s1[0]} and {s2[0]}")
        if s1[2] != s2[1]:
            raise RuntimeError(f"Incompatible matrix sizes for bmm ({s1[1]}x{s1[2]} and "
                               f"{s2[1]}x{s2[2]})")
        shape = (s1[1], s2[2])
    _expand_check(si, shape, di)
    if batched:
        if d1 != d2:
            raise RuntimeError(f"expected scalar type {_dk(d1)} but found {_dk(d2)}")
        if di != d1:
            raise RuntimeError(f"Input dtypes must be the same, got: input {_dk(di).lower()}, "
                               f"batch1: {_dk(d1).lower()}, batch2: {_dk(d2).lower()}")
        _not_bool(d1, "baddbmm")
    else:
        _addmm_check(si, s1[1:], s2[1:], di, d1, d2)
    return shape


def _addr_check(si, s1, s2, di, beta, alpha, dres):
    for n, s in (("vec1", s1), ("vec2", s2)):
        if len(s) != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {n}, but got {len(s)}-D")
    _expand_check(si, (s1[0], s2[0]), di)
    if dres._kind < 2:
        for n, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, (float, complex)):
                raise RuntimeError(f"For integral input tensors, argument {n} must not be a "
                                   "floating point number.")
    return s1[0], s2[0]


def _scalar_for(v, dt):
    """beta/alpha as the kernel's dtype sees them: integer tensors truncate them."""
    return int(v.real if isinstance(v, complex) else v) if dt.kind in "iub" else v


def _fused(inp, prod, beta, alpha, shape, dt, skip_alpha0):
    """beta * inp + alpha * prod(), computed in float32 for half precision, rounded once."""
    beta, alpha = _scalar_for(beta, dt), _scalar_for(alpha, dt)
    half = dt == np.float16 or dt == D.bfloat16.np
    if alpha == 0 and skip_alpha0:
        res = np.zeros(shape, np.float32 if half else dt)
    else:
        res = prod(np.float32 if half else None)
        if alpha != 1:
            res = res * alpha
    if beta != 0:
        i = cast(inp, np.float32) if half else inp
        res = res + (i if beta == 1 else i * beta)
    if res.shape == tuple(shape) and res.flags.c_contiguous:
        return cast(res, dt)
    return np.array(np.broadcast_to(res, shape), dtype=dt)


def _cast_all(dt, *arrs):
    return arrs if dt is None else tuple(cast(a, dt) for a in arrs)


def _addmm_kernel(inp, a, b, beta=1, alpha=1):
    shape = _addmm_check(inp.shape, a.shape, b.shape, inp.dtype, a.dtype, b.dtype)
    return _fused(inp, lambda c: np.matmul(a, b) if c is None else _product_f32(np.matmul, a, b),
                  beta, alpha, shape, a.dtype, True)


def _addmv_kernel(inp, m, v, beta=1, alpha=1):
    shape = _addmv_check(inp.shape, m.shape, v.shape, inp.dtype, m.dtype, v.dtype)
    return _fused(inp, lambda c: np.matmul(*_cast_all(c, m, v)), beta, alpha, shape,
                  m.dtype, True)


def _batch_sum(c, b1, b2):
    """sum_b b1[b] @ b2[b] as one product: (n, B*k) @ (B*k, p)."""
    b1, b2 = _cast_all(c, b1, b2)
    nb, n, k = b1.shape
    return np.matmul(b1.transpose(1, 0, 2).reshape(n, nb * k), b2.reshape(nb * k, b2.shape[2]))


def _addbmm_kernel(inp, b1, b2, beta=1, alpha=1):
    shape = _addbmm_check(inp.shape, b1.shape, b2.shape, inp.dtype, b1.dtype, b2.dtype, False)
    return _fused(inp, lambda c: _batch_sum(c, b1, b2), beta, alpha, shape, b1.dtype, True)


def _baddbmm_kernel(inp, b1, b2, beta=1, alpha=1):
    shape = _addbmm_check(inp.shape, b1.shape, b2.shape, inp.dtype, b1.dtype, b2.dtype, True)
    return _fused(inp, lambda c: np.matmul(*_cast_all(c, b1, b2)), beta, alpha, shape,
                  b1.dtype, False)


class _Arr:
    """An array as `result_dtype` reads a tensor (its dtype and rank)."""
    __slots__ = ("_data", "_dtype")

    def __init__(self, a):
        self._data, self._dtype = a, D.from_numpy_dtype(a.dtype)


def _addr_kernel(inp, v1, v2, beta=1, alpha=1):
    dres = D.result_dtype([_Arr(x) for x in (inp, v1, v2)])
    shape = _addr_check(inp.shape, v1.shape, v2.shape, inp.dtype, beta, alpha, dres)
    if dres is D.bool:
        res = np.outer(v1, v2) if alpha else np.zeros(shape, bool)
        return np.array(np.broadcast_to(res | inp if beta else res, shape))
    comp = D.compute_dtype(dres).np
    res = _fused(inp.astype(comp), lambda c: np.outer(v1.astype(comp), v2.astype(comp)),
                 beta, alpha, shape, comp, False)
    return res.astype(dres.np, copy=False)


def _scale(g, s):
    """g * conj(s): PyTorch's maybe_multiply (s == 1 keeps g itself)."""
    if isinstance(s, bool) or s == 1:
        return g
    return g * (s.conjugate() if isinstance(s, complex) else s)


def _addmm_vjp(ctx, g):
    _, a, b, beta, alpha = ctx.args
    ni, na, nb = ctx.needs_input_grad[:3]
    return (_scale(g, beta) if ni else None,
            _scale(g.mm(b.conj().t()), alpha) if na else None,
            _scale(a.conj().t().mm(g), alpha) if nb else None, None, None)


def _addmv_vjp(ctx, g):
    _, m, v, beta, alpha = ctx.args
    ni, nm, nv = ctx.needs_input_grad[:3]
    return (_scale(g, beta) if ni else None,
            _scale(g.unsqueeze(1) * v.conj(), alpha) if nm else None,
            _scale(m.conj().t().mv(g), alpha) if nv else None, None, None)


def _addbmm_vjp(ctx, g):
    _, b1, b2, beta, alpha = ctx.args
    ni, n1, n2 = ctx.needs_input_grad[:3]
    ge = g.expand(ctx.shapes[1][0], *g.shape) if n1 or n2 else None
    return (_scale(g, beta) if ni else None,
            _scale(ge.bmm(b2.conj().transpose(1, 2)), alpha) if n1 else None,
            _scale(b1.conj().transpose(1, 2).bmm(ge), alpha) if n2 else None, None, None)


def _baddbmm_vjp(ctx, g):
    _, b1, b2, beta, alpha = ctx.args
    ni, n1, n2 = ctx.needs_input_grad[:3]
    return (_scale(g, beta) if ni else None,
            _scale(g.bmm(b2.conj().transpose(1, 2)), alpha) if n1 else None,
            _scale(b1.conj().transpose(1, 2).bmm(g), alpha) if n2 else None, None, None)


def _addr_vjp(ctx, g):
    _, v1, v2, beta, alpha = ctx.args
    ni, n1, n2 = ctx.needs_input_grad[:3]
    return (_scale(g, beta) if ni else None,
            _scale(g.mv(v2.conj().to(g.dtype)), alpha) if n1 else None,
            _scale(g.t().mv(v1.conj().to(g.dtype)), alpha) if n2 else None, None, None)


def _meta_of(check, nargs=3):
    """A meta from a shape/dtype check over the first three (tensor) arguments."""
    def meta(inp, a, b, beta=1, alpha=1, *extra):
        shape = check(tuple(inp.shape), tuple(a.shape), tuple(b.shape),
                      inp.dtype.np, a.dtype.np, b.dtype.np, *extra)
        return tuple(shape), a.dtype
    return meta


def _addr_meta(inp, v1, v2, beta=1, alpha=1):
    dres = D.result_dtype((inp, v1, v2))
    return _addr_check(tuple(inp.shape), tuple(v1.shape), tuple(v2.shape), inp.dtype.np,
                       beta, alpha, dres), dres


def _combine(inp, prod, beta, alpha, shape, skip_alpha0):
    """The decompositions' `beta * inp + alpha * prod` in ember ops, same edge cases."""
    if alpha == 0 and skip_alpha0:
        prod = prod * 0
    elif alpha != 1:
        prod = prod * alpha
    res = prod if beta == 0 else prod + (inp if beta == 1 else inp * beta)
    return res.expand(shape).clone() if tuple(res.shape) != tuple(shape) else res


def _addmm_decomp(inp, a, b, beta=1, alpha=1):
    return _combine(inp, mm(a, b), beta, alpha, (a.shape[0], b.shape[1]), True)


def _addmv_decomp(inp, m, v, beta=1, alpha=1):
    return _combine(inp, mv(m, v), beta, alpha, (m.shape[0],), True)


def _addbmm_decomp(inp, b1, b2, beta=1, alpha=1):
    return _combine(inp, bmm(b1, b2).sum(0), beta, alpha, (b1.shape[1], b2.shape[2]), True)


def _baddbmm_decomp(inp, b1, b2, beta=1, alpha=1):
    return _combine(inp, bmm(b1, b2), beta, alpha, (b1.shape[0], b1.shape[1], b2.shape[2]),
                    False)


def _addr_decomp(inp, v1, v2, beta=1, alpha=1):
    return _combine(inp, outer(v1, v2), beta, alpha, (v1.shape[0], v2.shape[0]), False)


_LP = "lower_precision"       # PyTorch's AutocastCPU list has addmm, addbmm, baddbmm
ADDMM = register("addmm", _addmm_kernel, meta=_meta_of(_addmm_check), vjp=_addmm_vjp,
                 save=(1, 2), decomp=_addmm_decomp, tags=("linalg",), amp_policy=_LP,
                 schema="addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, "
                        "Scalar alpha=1) -> Tensor")
ADDMV = register("addmv", _addmv_kernel, meta=_meta_of(_addmv_check), vjp=_addmv_vjp,
                 save=(1, 2), decomp=_addmv_decomp, tags=("linalg",),
                 schema="addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, "
                        "Scalar alpha=1) -> Tensor")
ADDBMM = register("addbmm", _addbmm_kernel,
                  meta=lambda i, a, b, beta=1, alpha=1: _meta_of(_addbmm_check)(
                      i, a, b, beta, alpha, False),
                  vjp=_addbmm_vjp, save=(1, 2), decomp=_addbmm_decomp, tags=("linalg",),
                  amp_policy=_LP,
                  schema="addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
                         "Scalar alpha=1) -> Tensor")
BADDBMM = register("baddbmm", _baddbmm_kernel,
                   meta=lambda i, a, b, beta=1, alpha=1: _meta_of(_addbmm_check)(
                       i, a, b, beta, alpha, True),
                   vjp=_baddbmm_vjp, save=(1, 2), decomp=_baddbmm_decomp, tags=("linalg",),
                   amp_policy=_LP,
                   schema="baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
                          "Scalar alpha=1) -> Tensor")
ADDR = register("addr", _addr_kernel, meta=_addr_meta, vjp=_addr_vjp, save=(1, 2),
                decomp=_addr_decomp, tags=("linalg",),
                schema="addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, "
                       "Scalar alpha=1) -> Tensor")


def _fused_public(op):
    name = op.name

    def fn(input, a, b, *, beta=1, alpha=1, out=None):
        res = dispatch(op, (input, a, b, beta, alpha))
        return res if out is None else write_out(out, res, name)

    def method_(self, a, b, *, beta=1, alpha=1):
        return inplace(op, self, (self, a, b, beta, alpha))
    fn.__name__, method_.__name__ = name, name + "_"
    METHODS[name] = fn
    METHODS[name + "_"] = method_
    return fn


addmm = _fused_public(ADDMM)
addmv = _fused_public(ADDMV)
addbmm = _fused_public(ADDBMM)
baddbmm = _fused_public(BADDBMM)
addr = _fused_public(ADDR)


# ---------------------------------------- vdot, inner, outer, tensordot, chain_matmul
# Composites of registry ops, as in PyTorch (its vdot is dot of the conjugate).

def vdot(input, other, *, out=None):
    """sum(conj(input) * other) over two 1-D tensors."""
    a, b = input._data, other._data
    _dot_shape_check(a.shape, b.shape)
    _check_dot_dtypes(a, b)
    res = dot(input.conj(), other)
    return res if out is None else write_out(out, res, "vdot")


def outer(input, vec2, *, out=None):
    """input[:, None] * vec2 (type promotion as mul)."""
    for n, v in (("self", input), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {n}, but got {v.dim()}-D")
    res = input.unsqueeze(1) * vec2
    return res if out is None else write_out(out, res, "outer")


ger = outer


def _same_dtype(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")


def inner(input, other, *, out=None):
    """Contract the last dims; a 0-d operand multiplies."""
    if input.dim() == 0 or other.dim() == 0:
        res = input * other
    else:
        if input.shape[-1] != other.shape[-1]:
            raise RuntimeError("inner() the last dimension must match on both input tensors "
                               f"but got shapes {list(input.shape)} and {list(other.shape)}")
        res = tensordot(input, other, ([-1], [-1]))
    return res if out is None else write_out(out, res, "inner")


def _tensordot_dims(a, b, dims):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(a.dim() - dims, a.dim())), list(range(dims))
    da, db = dims
    da = [da] if isinstance(da, int) else list(da)
    db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    return ([_wrap_dim(d, a.dim(), "tensordot") for d in da],
            [_wrap_dim(d, b.dim(), "tensordot") for d in db])


def tensordot(a, b, dims=2, out=None):
    """Sum over dims_a of a and dims_b of b: permute, fold to matrices, one mm."""
    da, db = _tensordot_dims(a, b, dims)
    for i, j in zip(da, db):
        # a size-1 dimension broadcasts: sum the other side over it first (as aten does)
        if a.shape[i] != b.shape[j] and b.shape[j] == 1:
            a = a.sum(i, keepdim=True)
        elif a.shape[i] != b.shape[j] and a.shape[i] == 1:
            b = b.sum(j, keepdim=True)
        elif a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} in "
                               f"dim {j}")
    for ds in (da, db):
        dup = next((d for k, d in enumerate(ds) if d in ds[:k]), None)
        if dup is not None:
            raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    _same_dtype(a, b)
    fa = [d for d in range(a.dim()) if d not in da]
    fb = [d for d in range(b.dim()) if d not in db]
    k = int(np.prod([a.shape[d] for d in da]))
    sa, sb = [a.shape[d] for d in fa], [b.shape[d] for d in fb]
    ma = a.permute(fa + da).reshape(int(np.prod(sa)), k)
    mb = b.permute(db + fb).reshape(k, int(np.prod(sb)))
    res = ma.mm(mb).reshape(sa + sb)
    return res if out is None else write_out(out, res, "tensordot")


def _chain_order(dims):
    """The cheapest parenthesization of a matrix chain (classic O(n^3) DP)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for ln in range(1, n):
        for i in range(n - ln):
            j = i + ln
            cost[i][j] = float("inf")
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(ms, split, i, j):
    if i == j:
        return ms[i]
    k = split[i][j]
    return _chain(ms, split, i, k).mm(_chain(ms, split, k + 1, j))


def chain_matmul(*matrices, out=None):
    """Deprecated in PyTorch (use linalg.multi_dot); same result and checks."""
    import warnings
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two "
                  "or more tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        res = matrices[0].clone()
        return res if out is None else write_out(out, res, "chain_matmul")
    for i in range(len(matrices) - 1):
        a, b = matrices[i], matrices[i + 1]
        if a.dtype is not b.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {_C10[matrices[0].dtype.name]} and tensor {i + 1} "
                               f"{_C10[b.dtype.name]}")
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(a.shape)} and {list(b.shape)} cannot be multiplied")
    dims = [matrices[0].shape[0]] + [m.shape[1] for m in matrices]
    res = _chain(matrices, _chain_order(dims), 0, len(matrices) - 1)
    return res if out is None else write_out(out, res, "chain_matmul")


METHODS.update(vdot=vdot, inner=inner, outer=outer, ger=ger)

from .einsum import einsum  # noqa: E402  (einsum composes the ops above)
