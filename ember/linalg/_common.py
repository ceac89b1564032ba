"""Shared pieces of ember.linalg: argument checks with PyTorch's messages, the
LinAlgError type, the named-tuple results and small helpers written in ember ops.

Note: every check takes a shape and an ember dtype, so kernels (NumPy arrays) and
metas (Tensors) raise the same errors.
"""
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _wrap_dim
from ..ops._elementwise import type_name
from ..ops.reduction import return_type


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a factorization or solve met a singular or
    non-positive-definite input (a RuntimeError, as in PyTorch, whose class is
    torch._C._LinAlgError: the same __name__, so `type(e).__name__` agrees)."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"


def dtype_of(a):
    """The ember dtype of a Tensor or NumPy array."""
    return a._dtype if isinstance(a, Tensor) else D.from_numpy_dtype(a.dtype)


def check_float(dtype, op, what="input"):
    """Linear algebra needs float32/float64/complex64/complex128 inputs."""
    if dtype._kind < 2:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as {what}. "
                           f"Got {type_name(dtype)}")
    if dtype.itemsize == 2 or dtype is D.bfloat16:
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got {type_name(dtype)}")


def check_matrix(shape, op, name="A"):
    if len(shape) < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")


def check_square(shape, op, name="A"):
    check_matrix(shape, op, name)
    if shape[-1] != shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are "
                           f"{shape[-2]} by {shape[-1]} matrices")


def check_square_float(a, op):
    """The usual checks for a batch of square matrices (a Tensor or an array)."""
    check_square(tuple(a.shape), op)
    check_float(dtype_of(a), op)


def check_same_dtype(a, b, op, na="A", nb="B"):
    da, db = dtype_of(a), dtype_of(b)
    if da is not db:
        raise RuntimeError(f"{op}: Expected {na} and {nb} to have the same dtype, but found "
                           f"{na} of type {type_name(da)} and {nb} of type {type_name(db)} "
                           "instead")


def batch_str(info, op, message):
    """LinAlgError for the first failed matrix, prefixed like PyTorch's batched kernels."""
    flat = np.asarray(info).reshape(-1)
    bad = int(np.flatnonzero(flat)[0])
    prefix = f"(Batch element {bad}): " if np.ndim(info) > 0 else ""
    return LinAlgError(f"{op}: {prefix}{message(int(flat[bad]))}")


def wrap_dims(dims, ndim, op):
    return tuple(_wrap_dim(d, ndim, op) for d in dims)


def real_dtype(dtype):
    return dtype.to_real() if dtype.is_complex else dtype


# ---------------------------------------------------------------- ember-op helpers

def mH(x):
    """The conjugate transpose of the last two dims."""
    return x.mT.conj() if x.is_complex() else x.mT


def tri_mask(rows, cols, k, lower):
    """A bool Tensor selecting tril(k) (lower) or triu(k) of a rows x cols matrix."""
    from ..ops.creation import from_numpy
    if lower:
        m = np.tri(rows, cols, k, dtype=bool)
    else:
        m = ~np.tri(rows, cols, k - 1, dtype=bool)
    return from_numpy(m)


def tril(x, k=0):
    from ..ops.indexing import where
    return where(tri_mask(x.shape[-2], x.shape[-1], k, True), x, 0)


def triu(x, k=0):
    from ..ops.indexing import where
    return where(tri_mask(x.shape[-2], x.shape[-1], k, False), x, 0)


def eye_like(n, x):
    from ..ops.creation import eye
    return eye(n, dtype=x.dtype)


def diag_embed(v):
    """(..., n) -> (..., n, n) with v on the diagonal, in ember ops."""
    n = v.shape[-1]
    return v.unsqueeze(-1) * eye_like(n, v)


def vector_rhs(a_shape, b_shape):
    """PyTorch's rule: B is a vector (batch) when it is 1-d or has A's shape minus
    its last dim."""
    return len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1
                                 and tuple(b_shape) == tuple(a_shape[:-1]))


# ------------------------------------------------------------------ result types

SLOGDET = return_type("linalg_slogdet", ("sign", "logabsdet"))
TSLOGDET = return_type("slogdet", ("sign", "logabsdet"))
INV_EX = return_type("linalg_inv_ex", ("inverse", "info"))
SOLVE_EX = return_type("linalg_solve_ex", ("result", "info"))
CHOL_EX = return_type("linalg_cholesky_ex", ("L", "info"))
QR = return_type("linalg_qr", ("Q", "R"))
TQR = return_type("qr", ("Q", "R"))
SVD = return_type("linalg_svd", ("U", "S", "Vh"))
TSVD = return_type("svd", ("U", "S", "V"))
EIG = return_type("linalg_eig", ("eigenvalues", "eigenvectors"))
EIGH = return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
LSTSQ = return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
LU = return_type("linalg_lu", ("P", "L", "U"))
LU_FACTOR = return_type("linalg_lu_factor", ("LU", "pivots"))
LU_FACTOR_EX = return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
LU_UNPACK = return_type("lu_unpack", ("P", "L", "U"))
TRI_SOLVE = return_type("triangular_solve", ("solution", "cloned_coefficient"))
