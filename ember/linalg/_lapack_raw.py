"""LAPACK's factorizations in their raw form: geqrf/ormqr (Householder QR) and
linalg.ldl_factor(_ex)/ldl_solve (Bunch-Kaufman LDL^T), as PyTorch returns them.

Why raw LAPACK (SciPy's ?geqrf, ?sytrf/?hetrf, ?sytrs/?hetrs): these outputs are defined
by LAPACK's storage conventions (reflectors below R, 1-based pivots with negative 2x2
blocks), which only the same routines reproduce. ormqr is composed of ember ops
(householder_product + matmul) so it is differentiable, as PyTorch's is; geqrf and the LDL
functions have no derivative in PyTorch either.
"""
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ..ops.creation import from_numpy
from ._common import check_float

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = ["geqrf", "ormqr", "ldl_factor_ex", "ldl_factor", "ldl_solve"]


def _lapack(name, arr):
    from scipy.linalg import lapack
    prefix = {np.float32: "s", np.float64: "d", np.complex64: "c",
              np.complex128: "z"}[arr.dtype.type]
    return getattr(lapack, prefix + name)


def _batches(a):
    """(a as a C array of shape (B, m, n), the batch shape)."""
    a = np.ascontiguousarray(a)
    return a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:]), a.shape[:-2]


def _no_grad(name, *ts):
    from .._dispatch import STATE
    if STATE.grad_enabled and any(isinstance(t, Tensor) and t.requires_grad for t in ts):
        raise RuntimeError(f"the derivative for '{name}' is not implemented.")


def _check_matrix(A, name):
    if A.dim() < 2:
        raise RuntimeError(f"torch.{name}: The input tensor A must have at least 2 "
                           f"dimensions.")
    check_float(A.dtype, name)


def geqrf(input, *, out=None):
    """(a, tau): R on and above the diagonal of a, the Householder vectors below it."""
    _check_matrix(input, "geqrf")
    _no_grad("geqrf", input)
    a, batch = _batches(input.detach().numpy())
    m, n = a.shape[-2:]
    k = min(m, n)
    qr = np.empty_like(a)
    tau = np.zeros((a.shape[0], k), a.dtype)
    for i in range(a.shape[0]):
        if a[i].size:
            res = _lapack("geqrf", a[i])(a[i])
            qr[i], tau[i] = res[0], res[1][:k]
    res = (from_numpy(qr.reshape(batch + (m, n))), from_numpy(tau.reshape(batch + (k,))))
    if out is not None:
        for o, r in zip(out, res):
            o.resize_(r.shape).copy_(r)
        return tuple(out)
    return res


def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """Q @ C (or Q^H @ C, C @ Q, C @ Q^H) for the Q whose reflectors geqrf left in
    (input, tau), without forming a product the caller did not ask for."""
    from ..ops.matmul import matmul
    from ..ops.pool import constant_pad_nd
    from ._composite import householder_product
    A, tau, C = input, input2, input3
    _check_matrix(A, "ormqr")
    if A.dtype is not C.dtype or A.dtype is not tau.dtype:
        raise RuntimeError(f"torch.ormqr: Expected input and other to have the same dtype, "
                           f"but input has dtype {A.dtype} and other has dtype {C.dtype}")
    nq = C.shape[-2] if left else C.shape[-1]
    if A.shape[-2] != nq:
        raise RuntimeError(f"torch.ormqr: input.shape[-2] must be equal to other.shape"
                           f"[{-2 if left else -1}], but got {A.shape[-2]} != {nq}")
    if tau.shape[-1] > A.shape[-1]:
        raise RuntimeError("torch.ormqr: tau.shape[-1] must be less than or equal to "
                           "input.shape[-1]")
    k = tau.shape[-1]
    refl = A[..., :, :k]
    if nq > k:                                   # the full nq x nq Q from k reflectors
        refl = constant_pad_nd(refl, [0, nq - k])
    Q = householder_product(refl, constant_pad_nd(tau, [0, nq - k]) if nq > k else tau)
    if transpose:
        Q = Q.mH
    res = matmul(Q, C) if left else matmul(C, Q)
    if out is not None:
        out.resize_(res.shape).copy_(res)
        return out
    return res


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info): Bunch-Kaufman L and block-diagonal D in one lower-triangular
    matrix, LAPACK's 1-based int32 pivots (negative pairs mark 2x2 blocks)."""
    _check_matrix(A, "linalg.ldl_factor_ex")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: A must be batches of square "
                           f"matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    _no_grad("linalg_ldl_factor_ex", A)
    a, batch = _batches(A.detach().numpy())
    n = a.shape[-1]
    ld = np.zeros_like(a)
    piv = np.zeros((a.shape[0], n), np.int32)
    info = np.zeros(a.shape[0], np.int32)
    name = "hetrf" if hermitian and a.dtype.kind == "c" else "sytrf"
    for i in range(a.shape[0]):
        if n:
            f, p, inf = _lapack(name, a[i])(a[i], lower=1)
            ld[i], piv[i], info[i] = np.tril(f), p, inf
    if check_errors and (info != 0).any():
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: The factorization could not be "
                           f"completed because the input is not invertible. "
                           f"info = {int(info[info != 0][0])}")
    res = (from_numpy(ld.reshape(batch + (n, n))), from_numpy(piv.reshape(batch + (n,))),
           from_numpy(info.reshape(batch)))
    return _out(res, out)


def ldl_factor(A, *, hermitian=False, out=None):
    """(LD, pivots) of ldl_factor_ex, raising if the factorization failed."""
    LD, piv, info = ldl_factor_ex(A, hermitian=hermitian)
    if (info.numpy() != 0).any():
        bad = int(info.numpy()[info.numpy() != 0].reshape(-1)[0])
        raise RuntimeError(f"torch.linalg.ldl_factor: The factorization could not be "
                           f"completed because the input is not invertible. "
                           f"The diagonal element {bad} is zero")
    return _out((LD, piv), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B for the A whose ldl_factor gave (LD, pivots)."""
    _check_matrix(LD, "linalg.ldl_solve")
    if pivots.dtype is not D.int32:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected pivots to be integers. Got "
                           f"{pivots.dtype}")
    if LD.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected LD and B to have the same "
                           f"dtype, but got LD with dtype {LD.dtype} and B with dtype "
                           f"{B.dtype} instead")
    _no_grad("linalg_ldl_solve", LD, B)
    from ..ops.rearrange import broadcast_shapes
    batch = broadcast_shapes(tuple(LD.shape[:-2]), tuple(B.shape[:-2]))
    n, k = LD.shape[-1], B.shape[-1]
    nb = int(np.prod(batch))
    ld = np.broadcast_to(LD.detach().numpy(), batch + (n, n)).reshape(nb, n, n)
    pv = np.broadcast_to(pivots.numpy(), batch + (n,)).reshape(nb, n)
    b = np.broadcast_to(B.detach().numpy(), batch + (n, k)).reshape(nb, n, k)
    x = np.empty_like(b)
    name = "hetrs" if hermitian and ld.dtype.kind == "c" else "sytrs"
    for i in range(ld.shape[0]):
        if n and k:
            x[i] = _lapack(name, ld[i])(ld[i], pv[i], b[i], lower=1)[0]
        else:
            x[i] = b[i]
    return _out(from_numpy(x.reshape(batch + (n, k))), out)


def _out(res, out):
    if out is None:
        return res
    if isinstance(res, tuple):
        for o, r in zip(out, res):
            o.resize_(r.shape).copy_(r)
        return tuple(out)
    out.resize_(res.shape).copy_(res)
    return out


def _make_methods():
    METHODS["geqrf"] = lambda self: geqrf(self)
    METHODS["ormqr"] = lambda self, input2, input3, left=True, transpose=False: ormqr(
        self, input2, input3, left, transpose)


_make_methods()
