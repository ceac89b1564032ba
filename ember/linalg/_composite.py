"""linalg functions that PyTorch itself implements as compositions: matrix_power,
cross, multi_dot, vecdot, householder_product, tensorinv, tensorsolve, diagonal and
vander. They are written in ember ops, so autograd (and double backward) comes from
the ops they use.
"""
import math

import numpy as np

from .. import _dtype as D
from ..ops._elementwise import broadcast_shapes, type_name
from ..ops.matmul import matmul
from ._common import check_float, check_square, dtype_of
from ._solve import _out, inv, solve


def matrix_power(A, n, *, out=None):
    """A^n by repeated squaring (n < 0 inverts first, n = 0 gives the identity)."""
    check_square(tuple(A.shape), "linalg.matrix_power")
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg_matrix_power(): argument 'n' must be int, not "
                        f"{type(n).__name__}")
    if n == 0:
        from ..ops.creation import eye, ones
        from ..ops.indexing import where
        keep = ones(A.shape[-2:], dtype=D.bool)      # the identity, still linked to A
        res = where(keep, eye(A.shape[-1], dtype=A.dtype), A)
        return _out(res, out, "linalg.matrix_power")
    if n < 0:
        A, n = inv(A), -n
    res, base = None, A
    while n:
        if n & 1:
            res = base if res is None else matmul(res, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return _out(res, out, "linalg.matrix_power")


def cross(input, other, *, dim=-1, out=None):
    """a x b along `dim` (of length 3) after broadcasting, in ember ops."""
    from ..ops.creation import tensor
    from ..ops.indexing import index_select
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found "
                           f"{type_name(other.dtype)}")
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = tuple(broadcast_shapes(tuple(input.shape), tuple(other.shape)))
    from .._tensor import _wrap_dim
    d = _wrap_dim(dim, len(shape), "linalg.cross")
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    a, b = input.expand(*shape), other.expand(*shape)
    i1, i2 = tensor([1, 2, 0]), tensor([2, 0, 1])
    res = index_select(a, d, i1) * index_select(b, d, i2) - \
        index_select(a, d, i2) * index_select(b, d, i1)
    return _out(res, out, "linalg.cross")


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices; the first may be a row vector and the last
    a column vector (left to right; PyTorch's order optimisation changes only rounding)."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        edge = i == 0 or i == n - 1
        if t.ndim != 2 and not (edge and t.ndim == 1):
            what = ("first" if i == 0 else "last") if edge else "tensor"
            if edge:
                raise RuntimeError(f"multi_dot(): the {what} tensor must be 1D or 2D but got "
                                   f"{t.ndim}D")
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {tensors[0].dtype} and tensor {i} {t.dtype}")
    first, last = tensors[0], tensors[-1]
    mats = [first.unsqueeze(0) if first.ndim == 1 else first] + list(tensors[1:-1]) + \
        [last.unsqueeze(-1) if last.ndim == 1 else last]
    for i in range(n - 1):
        if mats[i].shape[-1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               "cannot be multiplied")
    res = mats[0]
    for m in mats[1:]:
        res = matmul(res, m)
    if last.ndim == 1:
        res = res.squeeze(-1)
    if first.ndim == 1:
        res = res.squeeze(0)
    return _out(res, out, "linalg.multi_dot")


def vecdot(x, y, *, dim=-1, out=None):
    """sum(conj(x) * y) over `dim`."""
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but "
                           f"found x of type {type_name(x.dtype)} and y of type "
                           f"{type_name(y.dtype)} instead")
    return _out((x.conj() * y).sum(dim), out, "linalg.vecdot")


def householder_product(A, tau, *, out=None):
    """Q = H_1 ... H_k with H_i = I - tau_i v_i v_i^H (v_i: column i of A below the
    diagonal, 1 on it): the first n columns, accumulated with matmuls."""
    op = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(f"{op}: input.dim() must be greater than or equal to tau.dim() + 1")
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if n < k:
        raise RuntimeError(f"{op}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tuple(A.shape[:-2]) != tuple(tau.shape[:-1]):
        raise RuntimeError(f"{op}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if A.dtype is not tau.dtype:
        raise RuntimeError(f"{op}: tau dtype {tau.dtype} does not match input dtype {A.dtype}")
    check_float(A.dtype, "linalg.householder_product")
    from ..ops.creation import eye, from_numpy
    Q = eye(m, dtype=A.dtype).expand(*A.shape[:-2], m, m)
    rows = np.arange(m)
    for i in range(k):
        below = from_numpy((rows > i).astype(A.dtype.np))
        unit = from_numpy((rows == i).astype(A.dtype.np))
        v = A[..., :, i] * below + unit
        t = tau[..., i].unsqueeze(-1).unsqueeze(-1)
        Q = Q - t * matmul(Q, v.unsqueeze(-1)) * v.conj().unsqueeze(-2)
    return _out(Q[..., :, :n], out, "linalg.householder_product")


def tensorinv(A, ind=2, *, out=None):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A.shape)
    p, q = math.prod(shape[:ind]), math.prod(shape[ind:])
    if p != q:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {q} != {p}")
    res = inv(A.reshape(p, q)).reshape(shape[ind:] + shape[:ind])
    return _out(res, out, "linalg.tensorinv")


def tensorsolve(A, B, dims=None, *, out=None):
    if dims is not None:
        nd = A.ndim
        dims = [d % nd for d in dims]
        A = A.movedim(dims, list(range(nd - len(dims), nd)))
    rest = tuple(A.shape[B.ndim:])
    p, q = B.numel(), math.prod(rest)
    if p != q or math.prod(A.shape[:B.ndim]) != p:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
                           f"== prod(self.shape[:other.ndim]), but got {q} != "
                           f"{math.prod(A.shape[:B.ndim])}")
    res = solve(A.reshape(p, q), B.reshape(p)).reshape(rest)
    return _out(res, out, "linalg.tensorsolve")


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


def vander(x, *, N=None):
    """Columns x^0, x^1, ..., x^(N-1) (increasing powers), by repeated products."""
    if x.ndim < 1:                                    # PyTorch 2.x: a 0-d x is one point
        x = x.reshape(1)
    if dtype_of(x) is D.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           "tensors, but got Bool")
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    from ..ops.shape import stack
    cols = [x * 0 + 1, x]
    for _ in range(N - 2):
        cols.append(cols[-1] * x)
    return stack(cols, -1).to(_vander_dtype(x.dtype))


def _vander_dtype(d):
    return D.int64 if d._kind == 1 else d
