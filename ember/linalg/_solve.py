"""Inverses, solves and determinants: inv_ex, solve_ex, solve_triangular, det,
slogdet, pinv and lstsq as registry ops (NumPy's LAPACK kernels), with their
backward formulas in ember ops (PyTorch's FunctionsManual), so double backward works.

Note: kernels never raise for a singular input; they return LAPACK's `info`, and
the public functions (inv, solve, ...) turn a nonzero info into LinAlgError with
PyTorch's message. That keeps the metas (fake tensors) data-free.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor
from ..ops._elementwise import broadcast_shapes, type_name
from ..ops._registry import register
from ..ops.matmul import matmul
from ._common import (
    INV_EX,
    SLOGDET,
    SOLVE_EX,
    LinAlgError,
    batch_str,
    check_float,
    check_matrix,
    check_same_dtype,
    check_square,
    check_square_float,
    diag_embed,
    dtype_of,
    eye_like,
    mH,
    real_dtype,
    tril,
    triu,
    vector_rhs,
)
from ._kernels import LinAlgErrorNP, batch_iter, per_matrix

_INT32 = np.int32


def _info_meta(batch):
    return tuple(batch), D.int32


# ------------------------------------------------------------------------- inv

def _inv_ex_kernel(a, check_errors):
    check_square_float(a, "linalg.inv_ex")
    info = np.zeros(a.shape[:-2], _INT32)
    if a.size == 0:
        return a.copy(), info
    try:
        return np.linalg.inv(a), info
    except LinAlgErrorNP:
        out = np.empty_like(a)
        per_matrix(lambda m, _: np.linalg.inv(m), a, out, info)
        return out, info


def _inv_ex_meta(a, check_errors):
    check_square_float(a, "linalg.inv_ex")
    return (tuple(a.shape), a.dtype), _info_meta(a.shape[:-2])


def _inv_ex_vjp(ctx, g, _ginfo):
    inv_h = mH(ctx.out[0])
    return -matmul(inv_h, matmul(g, inv_h)), None


INV_EX_OP = register("linalg_inv_ex", _inv_ex_kernel, meta=_inv_ex_meta, vjp=_inv_ex_vjp,
                     save=(), save_out=True, tags=("prim", "linalg"), amp_policy="fp32",
                     nondiff_outputs=(1,),
                     schema="linalg_inv_ex(Tensor A, *, "
                            "bool check_errors=False) -> (Tensor inverse, Tensor info)")
INV_EX_OP.meta_layout = "contiguous"     # fake strides: NumPy's inv returns C order


def _singular_inv(info, op):
    return batch_str(info, op, lambda i: f"The diagonal element {i} is zero, the inversion "
                     "could not be completed because the input matrix is singular.")


def inv_ex(A, *, check_errors=False, out=None):
    inv, info = dispatch(INV_EX_OP, (A, bool(check_errors)))
    if check_errors and info._backend == "cpu" and info._data.any():
        raise _singular_inv(info._data, "linalg.inv_ex")
    return _out(INV_EX(inv, info), out, "linalg.inv_ex")


def inv(A, *, out=None):
    _check_2d(A, "linalg.inv")
    inv_, info = dispatch(INV_EX_OP, (A, False))
    if info._backend == "cpu" and info._data.any():
        raise _singular_inv(info._data, "linalg.inv")
    return _out(inv_, out, "linalg.inv")


def _check_2d(A, op):
    """The first check PyTorch makes, so the message names the public function."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}(): argument 'A' (position 1) must be Tensor, not "
                        f"{type(A).__name__}")
    check_matrix(tuple(A.shape), op)
    check_square(tuple(A.shape), op)
    if A.dtype._kind < 2:            # low precision is left to autocast / the kernel
        check_float(A.dtype, op)


def _out(res, out, op):
    """out= for one tensor or a tuple of them."""
    if out is None:
        return res
    from ..ops._elementwise import write_out
    if isinstance(res, tuple):
        for r, o in zip(res, out):
            write_out(o, r, op)
        return type(res)(*out) if hasattr(res, "_fields") else tuple(out)
    return write_out(out, res, op)


# ----------------------------------------------------------------------- solve

def _solve_shapes(a_shape, b_shape, left, op):
    """(vector case, batch shape, output shape), with PyTorch's shape errors."""
    if len(b_shape) < 1:
        raise RuntimeError(f"{op}: The input tensor B must have at least 1 dimensions.")
    vec = vector_rhs(a_shape, b_shape)
    n = a_shape[-1]
    bm = (b_shape[-1], 1) if vec else tuple(b_shape[-2:])
    if (bm[0] if left else bm[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        shown = bm if left or not vec else bm[::-1]
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {eq} "
                           f"({a_shape[-2]}x{n} and {shown[0]}x{shown[1]})")
    b_batch = tuple(b_shape[:-1] if vec else b_shape[:-2])
    batch = tuple(broadcast_shapes(tuple(a_shape[:-2]), b_batch))
    return vec, batch, batch + ((n,) if vec else tuple(b_shape[-2:]))


def _solve_checks(a, b, left, op):
    check_float(dtype_of(a), op)
    check_same_dtype(a, b, op)
    check_square(tuple(a.shape), op)
    return _solve_shapes(tuple(a.shape), tuple(b.shape), left, op)


def _solve_ex_kernel(a, b, left, check_errors):
    vec, batch, shape = _solve_checks(a, b, left, "linalg.solve")
    bm = b[..., None] if vec else b
    if not left:
        a, bm = np.swapaxes(a, -1, -2), np.swapaxes(bm, -1, -2)
    info = np.zeros(batch, _INT32)
    a = np.broadcast_to(a, batch + a.shape[-2:])
    bm = np.broadcast_to(bm, batch + bm.shape[-2:])
    if a.size == 0 or bm.size == 0:
        x = np.zeros(bm.shape, a.dtype)
    else:
        try:
            x = np.linalg.solve(a, bm)
        except LinAlgErrorNP:
            x = np.empty(bm.shape, a.dtype)
            per_matrix(lambda m, i: np.linalg.solve(m, bm[i]), a, x, info)
    if not left:
        x = np.swapaxes(x, -1, -2)
    return np.ascontiguousarray(x.reshape(shape)), info


def _solve_ex_meta(a, b, left, check_errors):
    _, batch, shape = _solve_checks(a, b, left, "linalg.solve")
    return (shape, a.dtype), _info_meta(batch)


def _solve_ex_vjp(ctx, g, _ginfo):
    A, _, left, _ = ctx.args
    X = ctx.out[0]
    na, nb = ctx.needs_input_grad[:2]
    vec = vector_rhs(tuple(A.shape), ctx.shapes[1])
    if vec:
        g, X = g.unsqueeze(-1), X.unsqueeze(-1)
    gB = solve(mH(A), g, left=left)
    gA = None
    if na:
        gA = -matmul(gB, mH(X)) if left else -matmul(mH(X), gB)
    return gA, (gB.squeeze(-1) if vec else gB) if nb else None, None, None


SOLVE_EX_OP = register("linalg_solve_ex", _solve_ex_kernel, meta=_solve_ex_meta,
                       vjp=_solve_ex_vjp, save=(0,), save_out=True, tags=("prim", "linalg"),
                       amp_policy="fp32", nondiff_outputs=(1,),
                       schema="linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, "
                              "bool check_errors=False) -> (Tensor result, Tensor info)")


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    x, info = dispatch(SOLVE_EX_OP, (A, B, bool(left), bool(check_errors)))
    if check_errors and info._backend == "cpu" and info._data.any():
        raise _singular_solve(info._data, "linalg.solve_ex")
    return _out(SOLVE_EX(x, info), out, "linalg.solve_ex")


def _singular_solve(info, op):
    return batch_str(info, op, lambda i: "The solver failed because the input matrix is "
                     "singular.")


def solve(A, B, *, left=True, out=None):
    x, info = dispatch(SOLVE_EX_OP, (A, B, bool(left), False))
    if info._backend == "cpu" and info._data.any():
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix "
                          "is singular.")
    return _out(x, out, "linalg.solve")


# ------------------------------------------------------------ solve_triangular

def _tri_checks(a, b, left, op="linalg.solve_triangular"):
    check_float(dtype_of(a), op)
    check_same_dtype(a, b, op)
    check_square(tuple(a.shape), op)
    check_matrix(tuple(b.shape), op, "B")
    return _solve_shapes(tuple(a.shape), tuple(b.shape), left, op)


def _triangle(a, upper, unitriangular):
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        n = a.shape[-1]
        t = t.copy()
        t[..., np.arange(n), np.arange(n)] = 1
    return t


def _solve_triangular_kernel(a, b, upper, left, unitriangular):
    _, batch, shape = _tri_checks(a, b, left)
    t = _triangle(a, upper, unitriangular)
    if not left:
        t, b = np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)
    t = np.broadcast_to(t, batch + t.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    if t.size == 0 or b.size == 0:
        x = np.zeros(b.shape, a.dtype)
    else:
        try:
            x = np.linalg.solve(t, b)
        except LinAlgErrorNP:          # a zero on the diagonal: inf/nan, as trsm gives
            x = np.empty(b.shape, a.dtype)
            per_matrix(lambda m, i: np.linalg.solve(m, b[i]), t, x,
                       np.zeros(batch, _INT32))
    if not left:
        x = np.swapaxes(x, -1, -2)
    return np.ascontiguousarray(x.reshape(shape))


def _solve_triangular_meta(a, b, upper, left, unitriangular):
    _, _, shape = _tri_checks(a, b, left)
    return shape, a.dtype


def _solve_triangular_vjp(ctx, g):
    A, _, upper, left, unit = ctx.args
    gB = solve_triangular(mH(A), g, upper=not upper, left=left, unitriangular=unit)
    gA = None
    if ctx.needs_input_grad[0]:
        xh = mH(ctx.out)
        gA = -matmul(gB, xh) if left else -matmul(xh, gB)
        gA = triu(gA, 1 if unit else 0) if upper else tril(gA, -1 if unit else 0)
    return gA, gB if ctx.needs_input_grad[1] else None, None, None, None


SOLVE_TRI_OP = register("linalg_solve_triangular", _solve_triangular_kernel,
                        meta=_solve_triangular_meta, vjp=_solve_triangular_vjp, save=(0,),
                        save_out=True, tags=("prim", "linalg"),
                        schema="linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, "
                               "bool left=True, bool unitriangular=False) -> Tensor")


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    res = dispatch(SOLVE_TRI_OP, (A, B, bool(upper), bool(left), bool(unitriangular)))
    return _out(res, out, "linalg.solve_triangular")


# --------------------------------------------------------------- det, slogdet

def _det_kernel(a):
    check_square_float(a, "linalg.det")
    if a.size == 0:
        return np.ones(a.shape[:-2], a.dtype)
    return np.asarray(np.linalg.det(a), a.dtype)


def _det_meta(a):
    check_square_float(a, "linalg.det")
    return tuple(a.shape[:-2]), a.dtype


def _det_vjp(ctx, g):
    A, det = ctx.args[0], ctx.out
    n = A.shape[-1]
    if A.numel() == 0:
        return (A * 0,)
    eps = np.finfo(real_dtype(A.dtype).np).eps
    if bool((det.abs() < 100 * eps).any()):
        return (_det_singular_grad(A, g),)
    d = (g * det.conj()).unsqueeze(-1).unsqueeze(-1) * eye_like(n, A)
    return (solve(mH(A), d),)


def _det_singular_grad(A, g):
    """det A = det(U) det(Vh) prod(S): the product rule needs no inverse, so the
    gradient exists at singular matrices too (PyTorch's SVD path)."""
    from ._decomp import svd
    U, S, Vh = svd(A)
    alpha = (det(U) * det(Vh)).conj() * g
    n = S.shape[-1]
    off = ~np.eye(n, dtype=bool)
    from ..ops.creation import from_numpy
    from ..ops.indexing import where
    others = where(from_numpy(off), S.unsqueeze(-2).expand(*S.shape[:-1], n, n), 1)
    d = alpha.unsqueeze(-1) * others.prod(-1)
    return matmul(U * d.unsqueeze(-2).to(U.dtype), Vh)


DET_OP = register("linalg_det", _det_kernel, meta=_det_meta, vjp=_det_vjp, save_out=True,
                  tags=("prim", "linalg"),
                  schema="linalg_det(Tensor A) -> Tensor")


def det(A, *, out=None):
    return _out(dispatch(DET_OP, (A,)), out, "linalg.det")


def _slogdet_kernel(a):
    check_square_float(a, "linalg.slogdet")
    if a.size == 0:
        return np.ones(a.shape[:-2], a.dtype), np.zeros(a.shape[:-2], a.real.dtype)
    s, l = np.linalg.slogdet(a)
    return np.asarray(s, a.dtype), np.asarray(l, a.real.dtype)


def _slogdet_meta(a):
    check_square_float(a, "linalg.slogdet")
    b = tuple(a.shape[:-2])
    return (b, a.dtype), (b, real_dtype(a.dtype))


def _slogdet_vjp(ctx, gsign, glog):
    A = ctx.args[0]
    n = A.shape[-1]
    if A.is_complex():
        sign = ctx.out[0]
        g = glog.to(A.dtype) + 1j * (gsign * sign.conj()).imag
        return (solve(mH(A), diag_embed(g.unsqueeze(-1).expand(*g.shape, n))),)
    return (solve(mH(A), glog.unsqueeze(-1).unsqueeze(-1) * eye_like(n, A)),)


SLOGDET_OP = register("linalg_slogdet", _slogdet_kernel, meta=_slogdet_meta,
                      vjp=_slogdet_vjp, save_out=True, tags=("prim", "linalg"),
                      schema="linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)")


def slogdet(A, *, out=None):
    return _out(SLOGDET(*dispatch(SLOGDET_OP, (A,))), out, "linalg.slogdet")


# ------------------------------------------------------------------------ pinv

def _tol_array(t):
    return None if t is None else np.asarray(t, np.float64)


def _pinv_kernel(a, atol, rtol, hermitian):
    _pinv_check(a)
    m, n = a.shape[-2:]
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (n, m), a.dtype)
    if hermitian:
        s, u = np.linalg.eigh(a)
        vh = np.swapaxes(u, -1, -2).conj()
        abs_s = np.abs(s)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        abs_s = s
    atol, rtol = _tol_array(atol), _tol_array(rtol)
    eps = np.finfo(a.real.dtype).eps
    if rtol is None:
        rtol = np.where(atol > 0, 0.0, eps * max(m, n)) if atol is not None else \
            eps * max(m, n)
    atol = 0.0 if atol is None else atol
    smax = abs_s.max(-1, initial=0)
    tol = np.maximum(atol, rtol * smax)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_s = np.where(abs_s > tol, 1 / s, 0).astype(s.dtype)
    res = np.swapaxes(vh, -1, -2).conj() @ (inv_s[..., None] * np.swapaxes(u, -1, -2).conj())
    return res.astype(a.dtype)


def _pinv_check(a):
    d = dtype_of(a)
    if len(a.shape) < 2 or d._kind < 2 or d.itemsize == 2 or d is D.bfloat16:
        raise RuntimeError(f"linalg.pinv({type_name(d)}{list(a.shape)}): expected a tensor "
                           "with 2 or more dimensions of float, double, cfloat or cdouble "
                           "types")


def _pinv_meta(a, atol, rtol, hermitian):
    _pinv_check(a)
    if hermitian:
        check_square(tuple(a.shape), "linalg.pinv")
    return tuple(a.shape[:-2]) + (a.shape[-1], a.shape[-2]), a.dtype


def pinv_backward(g, pinvA, A):
    """PyTorch's pinv_backward, in ember ops."""
    m, n = A.shape[-2:]
    pinvAh, gh = mH(pinvA), mH(g)
    if m <= n:
        K = matmul(gh, pinvA)
        KpinvAh = matmul(K, pinvAh)
        return (-mH(matmul(pinvA, K)) + KpinvAh - matmul(matmul(A, pinvA), KpinvAh)
                + matmul(matmul(pinvAh, pinvA), gh - matmul(K, A)))
    K = matmul(pinvA, gh)
    pinvAhK = matmul(pinvAh, K)
    return (-mH(matmul(K, pinvA)) + matmul(matmul(gh - matmul(A, K), pinvA), pinvAh)
            + pinvAhK - matmul(matmul(pinvAhK, pinvA), A))


def _pinv_vjp(ctx, g):
    return pinv_backward(g, ctx.out, ctx.args[0]), None, None, None


PINV_OP = register("linalg_pinv", _pinv_kernel, meta=_pinv_meta, vjp=_pinv_vjp, save=(0,),
                   save_out=True, tags=("prim", "linalg"),
                   schema="linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, "
                          "Tensor? rtol=None, bool hermitian=False) -> Tensor")


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None, rcond=None):
    if rcond is not None:
        rtol = rcond
    return _out(dispatch(PINV_OP, (A, atol, rtol, bool(hermitian))), out, "linalg.pinv")


# ----------------------------------------------------------------------- lstsq

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_checks(a, b, driver):
    op = "torch.linalg.lstsq"
    if len(a.shape) < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    if len(b.shape) < 1:
        raise RuntimeError(f"{op}: other must have at least 1 dimension.")
    da, db = dtype_of(a), dtype_of(b)
    check_float(da, "linalg.lstsq")
    if da is not db:
        raise RuntimeError(f"{op}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {type_name(da)} and other's dtype {type_name(db)}")
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError(f"{op}: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    vec = len(b.shape) == len(a.shape) - 1
    if (b.shape[-1] if vec else b.shape[-2]) != a.shape[-2]:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size(-{1 if vec else 2})")
    b_batch = tuple(b.shape[:-1] if vec else b.shape[:-2])
    batch = tuple(broadcast_shapes(tuple(a.shape[:-2]), b_batch))
    k = () if vec else (b.shape[-1],)
    return vec, batch, batch + (a.shape[-1],) + k


def _lstsq_kernel(a, b, rcond, driver):
    vec, batch, shape = _lstsq_checks(a, b, driver)
    driver = driver or "gelsy"
    m, n = a.shape[-2:]
    bm = b[..., None] if vec else b
    a = np.broadcast_to(a, batch + (m, n))
    bm = np.broadcast_to(bm, batch + bm.shape[-2:])
    x = np.zeros(batch + (n, bm.shape[-1]), a.dtype)
    rank = np.zeros(batch, np.int64)
    sv = np.zeros(batch + (min(m, n),), a.real.dtype)
    if rcond is None:
        rcond = np.finfo(a.real.dtype).eps * max(m, n)
    for i in batch_iter(batch):
        if a[i].size and bm[i].size:
            x[i], _, rank[i], sv[i] = np.linalg.lstsq(a[i], bm[i], rcond=rcond)
        elif a[i].size:
            rank[i] = np.linalg.matrix_rank(a[i])
            sv[i] = np.linalg.svd(a[i], compute_uv=False)
    if driver not in ("gelsd", "gelss"):
        sv = np.zeros((0,), a.real.dtype)
    if driver == "gels":
        rank = np.zeros((0,), np.int64)
    return np.ascontiguousarray(x.reshape(shape)), rank, sv


def _lstsq_meta(a, b, rcond, driver):
    _, batch, shape = _lstsq_checks(a, b, driver)
    driver = driver or "gelsy"
    rank = (0,) if driver == "gels" else batch
    sv = batch + (min(a.shape[-2:]),) if driver in ("gelsd", "gelss") else (0,)
    return (shape, a.dtype), (rank, D.int64), (sv, real_dtype(a.dtype))


def _lstsq_vjp(ctx, gX, _grank, _gsv):
    A, B = ctx.args[:2]
    vec = len(B.shape) == len(A.shape) - 1
    if vec:
        gX, B = gX.unsqueeze(-1), B.unsqueeze(-1)
    pinvA = pinv(A)
    gA = pinv_backward(matmul(gX, mH(B)), pinvA, A) if ctx.needs_input_grad[0] else None
    gB = None
    if ctx.needs_input_grad[1]:
        gB = matmul(mH(pinvA), gX)
        gB = gB.squeeze(-1) if vec else gB
    return gA, gB, None, None


LSTSQ_OP = register("linalg_lstsq", _lstsq_kernel, meta=_lstsq_meta, vjp=_lstsq_vjp,
                    save=(0, 1), tags=("prim", "linalg"), amp_policy="fp32", nondiff_outputs=(1, 2),
                    schema="linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, "
                           "str? driver=None) -> (Tensor solution, Tensor rank, "
                           "Tensor singular_values)")


def lstsq(A, B, rcond=None, *, driver=None):
    """Solution, rank and singular values from LAPACK; the residuals |AX - B|^2 are
    computed from them in ember ops (so they are differentiable, as in PyTorch)."""
    from ._common import LSTSQ
    x, rank, sv = dispatch(LSTSQ_OP, (A, B, rcond, driver))
    m, n = A.shape[-2:]
    driver = driver or "gelsy"
    full = driver == "gels" or (A._backend == "cpu" and bool((rank == n).all()))
    if driver != "gelsy" and m > n and full:
        vec = len(B.shape) == len(A.shape) - 1
        xm, bm = (x.unsqueeze(-1), B.unsqueeze(-1)) if vec else (x, B)
        r = matmul(A, xm) - bm
        res = (r.abs() ** 2 if r.is_complex() else r * r).sum(-2)
    else:
        from ..ops.creation import zeros
        res = zeros(0, dtype=real_dtype(A.dtype))
    return LSTSQ(x, res, rank, sv)
