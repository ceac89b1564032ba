"""The torch.* linear-algebra functions outside torch.linalg (det, inverse, svd with
V, qr with some=, cross with the old dim rule, ...) and their Tensor methods.

`exports()` gives the names ember/__init__.py adds to the top-level namespace.
"""
import warnings

from . import _composite as C
from . import _decomp as F
from . import _solve as S
from ._common import TQR, TRI_SOLVE, TSLOGDET, TSVD, mH

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

TOP_LEVEL = ["det", "logdet", "slogdet", "inverse", "cholesky", "qr", "svd", "pinverse",
             "matrix_power", "matrix_exp", "cross", "lu", "lu_solve", "lu_unpack",
             "cholesky_solve", "cholesky_inverse", "triangular_solve", "orgqr", "vander"]


def det(input):
    return S.det(input)


def slogdet(input):
    return TSLOGDET(*S.slogdet(input))


def logdet(input):
    """log(det): NaN for a negative real determinant, log(sign) + log|det| for complex."""
    from ..ops.indexing import where
    sign, logabs = S.slogdet(input)
    if input.is_complex():
        return sign.log() + logabs
    return where(sign < 0, float("nan"), logabs)


def inverse(input, *, out=None):
    return S.inv(input, out=out)


def cholesky(input, upper=False, *, out=None):
    return F.cholesky(input, upper=upper, out=out)


def qr(input, some=True, *, out=None):
    return TQR(*F.qr(input, "reduced" if some else "complete", out=out))


def svd(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: V (not Vh); without compute_uv, U and V are zero-filled."""
    if not compute_uv:
        from ..ops.creation import zeros
        s = F.svdvals(input)
        m, n = input.shape[-2:]
        b = tuple(input.shape[:-2])
        return TSVD(zeros(b + (m, m), dtype=input.dtype), s,
                    zeros(b + (n, n), dtype=input.dtype))
    U, s, Vh = F.svd(input, full_matrices=not some)
    return S._out(TSVD(U, s, mH(Vh)), out, "svd")


def pinverse(input, rcond=1e-15):
    return S.pinv(input, rtol=rcond)


def matrix_power(input, n):
    return C.matrix_power(input, n)


def matrix_exp(input):
    return F.matrix_exp(input)


def cross(input, other, dim=None, *, out=None):
    """torch.cross: without dim, the first dim of size 3 (deprecated, with PyTorch's warning)."""
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use torch.linalg.cross."
                      "\nThe default value of dim will change to agree with that of "
                      "linalg.cross in a future release.", UserWarning, stacklevel=2)
        dim = next((i for i, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return C.cross(input, other, dim=dim, out=out)


def lu(A, pivot=True, get_infos=False, out=None):
    res = F.lu_factor_ex(A, pivot=pivot)
    return tuple(res) if get_infos else (res[0], res[1])


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    return F.lu_solve(LU_data, LU_pivots, b, out=out)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    return F.lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots, out=out)


def cholesky_solve(input, input2, upper=False, *, out=None):
    """A X = B with A = L L^H given L (or U = L^H): two triangular solves."""
    L = mH(input2) if upper else input2
    y = S.solve_triangular(L, input, upper=False)
    return S._out(S.solve_triangular(mH(L), y, upper=True), out, "cholesky_solve")


def cholesky_inverse(input, upper=False, *, out=None):
    from ..ops.creation import eye
    n = input.shape[-1]
    res = cholesky_solve(eye(n, dtype=input.dtype).expand(*input.shape), input, upper)
    return S._out(res, out, "cholesky_inverse")


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """The deprecated torch.triangular_solve: (solution, a copy of A)."""
    M = A.mT if transpose else A
    x = S.solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    return S._out(TRI_SOLVE(x, A.clone()), out, "triangular_solve")


def orgqr(input, tau):
    return C.householder_product(input, tau)


def vander(x, N=None, increasing=False):
    """torch.vander: powers of a 1-d x, decreasing unless `increasing`."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    res = C.vander(x, N=N)
    if not increasing and N > 1:
        from ..ops.creation import arange
        from ..ops.indexing import index_select
        res = index_select(res, -1, arange(N - 1, -1, -1))
    return res


def exports():
    return {name: globals()[name] for name in TOP_LEVEL}


def _tensor_lu(self, pivot=True, get_infos=False):
    return lu(self, pivot, get_infos)


def _make_methods():
    for name in ("det", "logdet", "slogdet", "inverse", "cholesky", "qr", "svd", "pinverse",
                 "matrix_power", "matrix_exp", "cholesky_solve", "cholesky_inverse",
                 "triangular_solve", "orgqr"):
        METHODS[name] = globals()[name]
    METHODS["cross"] = lambda self, other, dim=None: cross(self, other, dim)
    METHODS["lu"] = _tensor_lu
    METHODS["lu_solve"] = lambda self, LU_data, LU_pivots: lu_solve(self, LU_data, LU_pivots)


_make_methods()
