"""Factorizations: cholesky_ex, qr, svd, eigh, eig, lu_factor_ex and matrix_exp as
registry ops (NumPy's LAPACK; getrf through SciPy), with PyTorch's backward formulas
written in ember ops; lu, lu_unpack and lu_solve are compositions of them.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from ..ops._registry import register
from ..ops.matmul import matmul
from ._common import (
    CHOL_EX,
    EIG,
    EIGH,
    LU,
    LU_FACTOR,
    LU_FACTOR_EX,
    LU_UNPACK,
    QR,
    SVD,
    batch_str,
    check_float,
    check_matrix,
    check_square_float,
    diag_embed,
    dtype_of,
    mH,
    real_dtype,
    tril,
    triu,
)
from ._kernels import LinAlgErrorNP, batch_iter, cholesky_info, expm, getrf
from ._solve import _out, solve, solve_triangular


def _batch_eye(batch, m, n, dtype):
    return np.broadcast_to(np.eye(m, n, dtype=dtype), tuple(batch) + (m, n)).copy()


# -------------------------------------------------------------------- cholesky

def _cholesky_ex_kernel(a, upper, check_errors):
    check_square_float(a, "linalg.cholesky")
    info = np.zeros(a.shape[:-2], np.int32)
    if a.size == 0:
        return a.copy(), info
    try:
        L = np.linalg.cholesky(a)
    except LinAlgErrorNP:
        L = np.zeros_like(a)
        for i in batch_iter(a.shape[:-2]):
            try:
                L[i] = np.linalg.cholesky(a[i])
            except LinAlgErrorNP:
                info[i] = cholesky_info(a[i])
    if upper:
        L = np.ascontiguousarray(np.swapaxes(L, -1, -2).conj())
    return L, info


def _cholesky_ex_meta(a, upper, check_errors):
    check_square_float(a, "linalg.cholesky")
    return (tuple(a.shape), a.dtype), (tuple(a.shape[:-2]), D.int32)


def _cholesky_ex_vjp(ctx, gL, _ginfo):
    upper = ctx.args[1]
    L = ctx.out[0]
    L_, gL_ = (mH(L), mH(gL)) if upper else (L, gL)
    gA = tril(matmul(mH(L_), gL_))
    gA = (gA + mH(tril(gA, -1))) * 0.5
    gA = solve_triangular(mH(L_), gA, upper=True, left=True)
    return solve_triangular(L_, gA, upper=False, left=False), None, None


CHOL_EX_OP = register("linalg_cholesky_ex", _cholesky_ex_kernel, meta=_cholesky_ex_meta,
                      vjp=_cholesky_ex_vjp, save=(), save_out=True, tags=("prim", "linalg"),
                      amp_policy="fp32", nondiff_outputs=(1,),
                      schema="linalg_cholesky_ex(Tensor self, *, bool upper=False, "
                             "bool check_errors=False) -> (Tensor L, Tensor info)")


def _not_pd(info, op):
    return batch_str(info, op, lambda i: "The factorization could not be completed because "
                     f"the input is not positive-definite (the leading minor of order {i} "
                     "is not positive-definite).")


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    L, info = dispatch(CHOL_EX_OP, (A, bool(upper), bool(check_errors)))
    if check_errors and info._backend == "cpu" and info._data.any():
        raise _not_pd(info._data, "linalg.cholesky_ex")
    return _out(CHOL_EX(L, info), out, "linalg.cholesky_ex")


def cholesky(A, *, upper=False, out=None):
    L, info = dispatch(CHOL_EX_OP, (A, bool(upper), False))
    if info._backend == "cpu" and info._data.any():
        raise _not_pd(info._data, "linalg.cholesky")
    return _out(L, out, "linalg.cholesky")


# -------------------------------------------------------------------------- qr

def _qr_checks(a, mode):
    check_matrix(tuple(a.shape), "linalg.qr")
    check_float(dtype_of(a), "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    m, n = a.shape[-2:]
    k = m if mode == "complete" else min(m, n)
    batch = tuple(a.shape[:-2])
    q = (0,) if mode == "r" else batch + (m, k)
    return q, batch + (k, n)


def _qr_kernel(a, mode):
    qs, rs = _qr_checks(a, mode)
    if a.size == 0:
        q = np.zeros((0,), a.dtype) if mode == "r" else _batch_eye(qs[:-2], *qs[-2:], a.dtype)
        return q, np.zeros(rs, a.dtype)
    if mode == "r":
        return np.zeros((0,), a.dtype), np.linalg.qr(a, mode="r")
    q, r = np.linalg.qr(a, mode=mode)
    return q, r


def _qr_meta(a, mode):
    qs, rs = _qr_checks(a, mode)
    return (qs, a.dtype), (rs, a.dtype)


def _qr_vjp(ctx, gQ, gR):
    mode = ctx.args[1]
    Q, R = ctx.out
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    gA = matmul(gR, mH(R)) - matmul(mH(Q), gQ)
    if m >= n:
        sym = triu(gA)
        sym = sym + mH(sym)
        sym = sym - diag_embed(sym.diagonal(0, -2, -1).real * 0.5)
        gA = matmul(Q, sym) + gQ
        return solve_triangular(mH(R), gA, upper=False, left=False), None
    X = -gA
    skew = tril(X - mH(X))
    if skew.is_complex():
        skew = skew - diag_embed(skew.diagonal(0, -2, -1).imag * 0.5j)
    gA = solve_triangular(mH(R.narrow(-1, 0, m)), matmul(Q, skew), upper=False, left=False)
    from ..ops.shape import cat
    gA = cat([gA, gA.new_zeros(tuple(R.shape[:-1]) + (n - m,))], -1)
    return gA + matmul(Q, gR), None


QR_OP = register("linalg_qr", _qr_kernel, meta=_qr_meta, vjp=_qr_vjp, save=(),
                 save_out=True, tags=("prim", "linalg"), amp_policy="fp32",
                 schema='linalg_qr(Tensor A, str mode="reduced") -> (Tensor Q, Tensor R)')


def qr(A, mode="reduced", *, out=None):
    return _out(QR(*dispatch(QR_OP, (A, mode))), out, "linalg.qr")


# ------------------------------------------------------------------------- svd

def _svd_checks(a, full_matrices):
    check_matrix(tuple(a.shape), "linalg.svd")
    check_float(dtype_of(a), "linalg.svd")
    m, n = a.shape[-2:]
    k = min(m, n)
    b = tuple(a.shape[:-2])
    if full_matrices:
        return b + (m, m), b + (k,), b + (n, n)
    return b + (m, k), b + (k,), b + (k, n)


def _svd_kernel(a, full_matrices):
    us, ss, vs = _svd_checks(a, full_matrices)
    if a.size == 0:
        return (_batch_eye(us[:-2], *us[-2:], a.dtype), np.zeros(ss, a.real.dtype),
                _batch_eye(vs[:-2], *vs[-2:], a.dtype))
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vh


def _svd_meta(a, full_matrices):
    us, ss, vs = _svd_checks(a, full_matrices)
    return (us, a.dtype), (ss, real_dtype(a.dtype)), (vs, a.dtype)


def svd_backward(gU, gS, gVh, U, S, Vh):
    """PyTorch's svd_backward (reduced factors), in ember ops."""
    m, n = U.shape[-2], Vh.shape[-1]

    def skew(x):
        return x - mH(x)
    UhgU = skew(matmul(mH(U), gU))
    VhgV = skew(matmul(Vh, mH(gVh)))
    S2 = S * S
    k = S.shape[-1]
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + diag_embed(S.new_ones(k).expand(*S.shape))
    gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    gA = gA + diag_embed(gS)
    if U.is_complex():
        gA = gA + diag_embed(UhgU.diagonal(0, -2, -1) / (S * 2))
    if m > n:
        gA = matmul(U, gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - matmul(U, matmul(mH(U), gUSinv))
        return matmul(gA, Vh)
    if m < n:
        gA = matmul(gA, Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - matmul(matmul(SinvgVh, mH(Vh)), Vh)
        return matmul(U, gA)
    return matmul(U, matmul(gA, Vh))


def _svd_vjp(ctx, gU, gS, gVh):
    U, S, Vh = ctx.out
    if ctx.args[1]:
        k = S.shape[-1]
        U, Vh, gU, gVh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k), gU.narrow(-1, 0, k), \
            gVh.narrow(-2, 0, k)
    return svd_backward(gU, gS, gVh, U, S, Vh), None


SVD_OP = register("linalg_svd", _svd_kernel, meta=_svd_meta, vjp=_svd_vjp, save=(),
                  save_out=True, tags=("prim", "linalg"), amp_policy="fp32",
                  schema="linalg_svd(Tensor A, bool full_matrices=True) -> (Tensor U, Tensor S, "
                         "Tensor Vh)")


def svd(A, full_matrices=True, *, driver=None, out=None):
    return _out(SVD(*dispatch(SVD_OP, (A, bool(full_matrices)))), out, "linalg.svd")


def svdvals(A, *, driver=None, out=None):
    return _out(dispatch(SVD_OP, (A, False))[1], out, "linalg.svdvals")


# ------------------------------------------------------------------ eigh / eig

def _eigh_checks(a, uplo):
    check_square_float(a, "linalg.eigh")
    if uplo not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    return (tuple(a.shape[:-1]), real_dtype(dtype_of(a))), (tuple(a.shape), dtype_of(a))


def _eigh_kernel(a, uplo):
    _eigh_checks(a, uplo)
    if a.size == 0:
        return np.zeros(a.shape[:-1], a.real.dtype), a.copy()
    return np.linalg.eigh(a, UPLO=uplo)


def eig_backward(gL, gV, L, V, hermitian):
    """PyTorch's linalg_eig_backward, in ember ops."""
    Vh = mH(V)
    VhgV = matmul(Vh, gV)
    if hermitian:
        VhgV = (VhgV - mH(VhgV)) * 0.5
    else:
        VhgV = VhgV - matmul(Vh, V * VhgV.diagonal(0, -2, -1).real.unsqueeze(-2))
    Lc = L.conj()
    n = L.shape[-1]
    E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + diag_embed(L.new_ones(n).expand(*L.shape))
    gA = VhgV / E
    gA = gA - diag_embed(gA.diagonal(0, -2, -1)) + diag_embed(gL.to(gA.dtype))
    if hermitian:
        return matmul(V, matmul(gA, Vh))
    return solve(Vh, matmul(gA, Vh))


def _eigh_vjp(ctx, gL, gV):
    L, V = ctx.out
    return eig_backward(gL, gV, L, V, True), None


EIGH_OP = register("linalg_eigh", _eigh_kernel, meta=lambda a, u: _eigh_checks(a, u),
                   vjp=_eigh_vjp, save=(), save_out=True, tags=("prim", "linalg"),
                   amp_policy="fp32",
                   schema='linalg_eigh(Tensor self, str UPLO="L") -> (Tensor eigenvalues, '
                          "Tensor eigenvectors)")


def eigh(A, UPLO="L", *, out=None):
    return _out(EIGH(*dispatch(EIGH_OP, (A, UPLO))), out, "linalg.eigh")


def eigvalsh(A, UPLO="L", *, out=None):
    return _out(dispatch(EIGH_OP, (A, UPLO))[0], out, "linalg.eigvalsh")


def _complex_of(d):
    return D.complex128 if d in (D.float64, D.complex128) else D.complex64


def _eig_kernel(a):
    check_square_float(a, "linalg.eig")
    c = _complex_of(dtype_of(a)).np
    if a.size == 0:
        return np.zeros(a.shape[:-1], c), a.astype(c)
    if not np.isfinite(a).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    w, v = np.linalg.eig(a)
    return w.astype(c), v.astype(c)


def _eig_meta(a):
    check_square_float(a, "linalg.eig")
    c = _complex_of(a.dtype)
    return (tuple(a.shape[:-1]), c), (tuple(a.shape), c)


def _eig_vjp(ctx, gL, gV):
    L, V = ctx.out
    gA = eig_backward(gL, gV, L, V, False)
    return (gA if ctx.dtypes[0].is_complex else gA.real), None


EIG_OP = register("linalg_eig", _eig_kernel, meta=_eig_meta, vjp=_eig_vjp, save=(),
                  save_out=True, tags=("prim", "linalg"), amp_policy="fp32",
                  schema="linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)")


def eig(A, *, out=None):
    return _out(EIG(*dispatch(EIG_OP, (A,))), out, "linalg.eig")


def eigvals(A, *, out=None):
    return _out(dispatch(EIG_OP, (A,))[0], out, "linalg.eigvals")


# ------------------------------------------------------------------------- lu

def _lu_checks(a, pivot):
    check_matrix(tuple(a.shape), "linalg.lu_factor")
    check_float(dtype_of(a), "linalg.lu_factor")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    b = tuple(a.shape[:-2])
    return ((tuple(a.shape), dtype_of(a)), (b + (min(a.shape[-2:]),), D.int32),
            (b, D.int32))


def _lu_factor_ex_kernel(a, pivot, check_errors):
    _lu_checks(a, pivot)
    k = min(a.shape[-2:])
    lu = np.empty_like(a)
    piv = np.zeros(a.shape[:-2] + (k,), np.int32)
    info = np.zeros(a.shape[:-2], np.int32)
    if a.size:
        for i in batch_iter(a.shape[:-2]):
            lu[i], p = getrf(a[i])
            piv[i] = p[:k] + 1
            zero = np.flatnonzero(np.diagonal(lu[i]) == 0)
            info[i] = zero[0] + 1 if zero.size else 0
    return lu, piv, info


def _lu_factor_ex_vjp(ctx, gLU, _gp, _gi):
    LU, piv = ctx.out[:2]
    P, L, U = lu_unpack(LU, piv)
    m, n = LU.shape[-2:]
    k = min(m, n)
    return lu_backward(gLU.narrow(-1, 0, k), gLU.narrow(-2, 0, k), P, L, U), None, None


def lu_backward(gL, gU, P, L, U):
    """PyTorch's linalg_lu_backward (with pivoting), in ember ops."""
    from ..ops.shape import cat
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = tril(matmul(mH(L), gL), -1) + triu(matmul(gU, mH(U)))
        gA = solve_triangular(mH(U), gA, upper=False, left=False)
        gA = solve_triangular(mH(L), gA, upper=True, unitriangular=True)
    elif m < n:
        U1 = U.narrow(-1, 0, k)
        gA = matmul(mH(L), gL) - matmul(triu(gU), mH(U))
        gA = solve_triangular(mH(U1), tril(gA, -1), upper=False, left=False)
        gA = cat([gA + triu(gU.narrow(-1, 0, k)), gU.narrow(-1, k, n - k)], -1)
        gA = solve_triangular(mH(L), gA, upper=True, unitriangular=True)
    else:
        L1 = L.narrow(-2, 0, k)
        gA = matmul(gU, mH(U)) - matmul(mH(L), tril(gL, -1))
        gA = solve_triangular(mH(L1), triu(gA), upper=True, unitriangular=True)
        gA = cat([gA + tril(gL.narrow(-2, 0, k), -1), gL.narrow(-2, k, m - k)], -2)
        gA = solve_triangular(mH(U), gA, upper=False, left=False)
    return matmul(P, gA)


def _lu_factor_ex_meta(a, pivot, check_errors):
    return _lu_checks(a, pivot)


LU_FACTOR_EX_OP = register("linalg_lu_factor_ex", _lu_factor_ex_kernel,
                           meta=_lu_factor_ex_meta, vjp=_lu_factor_ex_vjp, save=(),
                           save_out=True, tags=("prim", "linalg"), nondiff_outputs=(1, 2),
                           schema="linalg_lu_factor_ex(Tensor A, *, bool pivot=True, "
                                  "bool check_errors=False) -> (Tensor LU, Tensor pivots, "
                                  "Tensor info)")


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    LU_, piv, info = dispatch(LU_FACTOR_EX_OP, (A, bool(pivot), bool(check_errors)))
    if check_errors and info._backend == "cpu" and info._data.any():
        raise _zero_pivot(info._data, "linalg.lu_factor_ex")
    return _out(LU_FACTOR_EX(LU_, piv, info), out, "linalg.lu_factor_ex")


def _zero_pivot(info, op):
    from ._common import LinAlgError
    i = int(np.asarray(info).reshape(-1)[np.flatnonzero(np.asarray(info).reshape(-1))[0]])
    return LinAlgError(f"torch.{op}: U[{i},{i}] is zero and using it on lu_solve would result "
                       "in a division by zero. If you still want to perform the factorization, "
                       "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A, *, pivot=True, out=None):
    LU_, piv, info = dispatch(LU_FACTOR_EX_OP, (A, bool(pivot), False))
    if info._backend == "cpu" and info._data.any():
        raise _zero_pivot(info._data, "linalg.lu_factor")
    return _out(LU_FACTOR(LU_, piv), out, "linalg.lu_factor")


def _perm_matrix(piv, m, dtype):
    """P with A = P L U, from LAPACK's 1-based row interchanges."""
    batch = piv.shape[:-1]
    perm = np.broadcast_to(np.arange(m), batch + (m,)).copy()
    for i in batch_iter(batch):
        p = perm[i]
        for j, s in enumerate(piv[i] - 1):
            p[j], p[s] = p[s], p[j]
    P = np.zeros(batch + (m, m), dtype)
    np.put_along_axis(P, perm[..., :, None], 1, axis=-1)
    return np.swapaxes(P, -1, -2).copy()


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """P, L, U from a packed factorization; L and U are masks of LU (ember ops), so
    gradients flow back to LU_data."""
    from ..ops.creation import eye, from_numpy, zeros
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    if unpack_pivots:
        P = from_numpy(_perm_matrix(LU_pivots._data, m, LU_data.dtype.np))
    else:
        P = zeros(0, dtype=LU_data.dtype)
    if unpack_data:
        L = tril(LU_data.narrow(-1, 0, k), -1) + eye(m, k, dtype=LU_data.dtype)
        U = triu(LU_data.narrow(-2, 0, k))
    else:
        L = zeros(0, dtype=LU_data.dtype)
        U = zeros(0, dtype=LU_data.dtype)
    return _out(LU_UNPACK(P, L, U), out, "lu_unpack")


def lu(A, *, pivot=True, out=None):
    LU_, piv, _ = dispatch(LU_FACTOR_EX_OP, (A, bool(pivot), False))
    return _out(LU(*lu_unpack(LU_, piv)), out, "linalg.lu")


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """A X = B (or X A = B, or with A^H) for A = P L U: a permutation and two
    triangular solves, so gradients reach LU and B through the composition."""
    check_float(LU.dtype, "linalg.lu_solve")
    if LU.dtype is not B.dtype:
        raise RuntimeError("linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {LU.dtype} and B of type {B.dtype} instead")
    P, L, U = lu_unpack(LU, pivots)
    if left and not adjoint:
        X = solve_triangular(L, matmul(P.mT, B), upper=False, unitriangular=True)
        X = solve_triangular(U, X, upper=True)
    elif left:
        X = solve_triangular(mH(U), B, upper=False)
        X = matmul(P, solve_triangular(mH(L), X, upper=True, unitriangular=True))
    elif not adjoint:
        X = solve_triangular(U, B, upper=True, left=False)
        X = matmul(solve_triangular(L, X, upper=False, left=False, unitriangular=True), P.mT)
    else:
        X = solve_triangular(mH(L), matmul(B, P), upper=True, left=False, unitriangular=True)
        X = solve_triangular(mH(U), X, upper=False, left=False)
    return _out(X, out, "linalg.lu_solve")


# ------------------------------------------------------------------ matrix_exp

def _matrix_exp_check(a):
    from ._common import check_square
    check_square(tuple(a.shape), "linalg.matrix_exp")
    d = dtype_of(a)
    if d._kind < 2:
        from ..ops._elementwise import type_name
        raise RuntimeError("linalg.matrix_exp: Expected a floating point or complex tensor "
                           f"as input. Got {type_name(d)}")


def _matrix_exp_kernel(a):
    _matrix_exp_check(a)
    if a.dtype.itemsize == 2:       # float16/bfloat16: computed in float32, rounded once
        return expm(a.astype(np.float32)).astype(a.dtype)
    return expm(a)


def _matrix_exp_meta(a):
    _matrix_exp_check(a)
    return tuple(a.shape), a.dtype


def _matrix_exp_vjp(ctx, g):
    """exp([[A^H, G], [0, A^H]]) holds the adjoint differential in its upper right block."""
    from ..ops.shape import cat
    A = ctx.args[0]
    n = A.shape[-1]
    Ah = mH(A)
    meta = cat([cat([Ah, g], -1), cat([Ah * 0, Ah], -1)], -2)
    return (matrix_exp(meta).narrow(-2, 0, n).narrow(-1, n, n),)


MATRIX_EXP_OP = register("linalg_matrix_exp", _matrix_exp_kernel, meta=_matrix_exp_meta,
                         vjp=_matrix_exp_vjp, tags=("prim", "linalg"),
                         schema="linalg_matrix_exp(Tensor self) -> Tensor")


def matrix_exp(A):
    return dispatch(MATRIX_EXP_OP, (A,))
