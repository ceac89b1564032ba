"""ember.sparse (torch.sparse): COO and CSR tensors, their constructors and products, and
2:4 semi-structured matrices (semi_structured.py: to_sparse_semi_structured, C kernels).

Note: sparse tensors are ember.Tensor subclasses (SparseCooTensor, SparseCsrTensor) that
hold dense index and value tensors; the sparse @ dense product and the duplicate-summing
scatter are registry ops (ember/ops/sparse.py, scipy.sparse kernels) and everything else
is composed from dense ember ops, so autograd reaches the values and the dense operands.
See _coo.py for why a subclass keeps the dense fast path free of layout checks.
"""
import math

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ..ops.sparse import segment_sum
from ._coo import (SparseCooTensor, SparseTensorBase, as_index, make_coo, mm_coo, sparse_coo,
                   sparse_csr, _lin)
from ._csr import SparseCsrTensor, make_csr
from . import _kernels
from ._reduce_mm import sampled_addmm
from . import _semi_structured, semi_structured  # noqa: F401
from .semi_structured import (SparseSemiStructuredTensor,  # noqa: F401
                              SparseSemiStructuredTensorCUSPARSELT,
                              SparseSemiStructuredTensorCUTLASS, to_sparse_semi_structured)

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = ["mm", "addmm", "sampled_addmm", "sum", "softmax", "log_softmax", "spmm",
           "sparse_coo_tensor", "sparse_csr_tensor", "SparseCooTensor", "SparseCsrTensor",
           "sparse_coo", "sparse_csr", "to_sparse", "SparseSemiStructuredTensor",
           "SparseSemiStructuredTensorCUTLASS", "SparseSemiStructuredTensorCUSPARSELT",
           "to_sparse_semi_structured"]


def _tensor_of(x, dtype=None):
    from ..ops.creation import as_tensor
    return x if isinstance(x, Tensor) and dtype is None else as_tensor(x, dtype=dtype)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None,
                      is_coalesced=None):
    """torch.sparse_coo_tensor: indices (sparse_dim, nnz), values (nnz, *dense_dims)."""
    ix = _tensor_of(indices, D.int64 if not isinstance(indices, Tensor) else None)
    if ix.dtype != D.int64:
        ix = ix.to(D.int64)
    vals = _tensor_of(values)
    if dtype is not None and vals.dtype != dtype:
        vals = vals.to(dtype)
    if ix.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(ix.shape)}")
    if vals.ndim == 0:
        raise RuntimeError("values must be at least 1-dimensional (nnz x dense dims)")
    sd, nnz = ix.shape
    if nnz != vals.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {vals.shape[0]}")
    idx = ix._data
    if nnz and idx.min() < 0:
        raise RuntimeError(f"found negative index {int(idx.min())} for dim "
                           f"{int(np.argmin(idx.min(1)))}")
    if size is None:
        size = tuple(int(m) + 1 for m in idx.max(1)) if nnz else (0,) * sd
        size = size + tuple(vals.shape[1:])
    size = tuple(int(s) for s in size)
    if len(size) != sd + vals.ndim - 1:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sd}) + dense_dim "
                           f"({vals.ndim - 1}), but got {len(size)}")
    if tuple(vals.shape[1:]) != size[sd:]:
        raise RuntimeError(f"values has incorrect size, expected {[nnz] + list(size[sd:])}, "
                           f"got {list(vals.shape)}")
    if nnz:
        for d, m in enumerate(idx.max(1)):
            if m >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                                   f"{size[d]} but found index {int(m)}")
    if requires_grad:
        vals = vals.detach().requires_grad_(True)
    return make_coo(ix, vals, size, bool(is_coalesced))


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None,
                      device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """torch.sparse_csr_tensor: a 2-d CSR matrix (no batch or dense dims in ember)."""
    crow = _tensor_of(crow_indices, D.int64 if not isinstance(crow_indices, Tensor) else None)
    col = _tensor_of(col_indices, D.int64 if not isinstance(col_indices, Tensor) else None)
    vals = _tensor_of(values)
    if dtype is not None and vals.dtype != dtype:
        vals = vals.to(dtype)
    if crow.ndim != 1 or col.ndim != 1 or vals.ndim != 1:
        raise NotImplementedError("sparse_csr_tensor: ember supports 2-d CSR tensors only "
                                  "(1-d crow_indices, col_indices and values)")
    c, k = crow._data, col._data
    if c.shape[0] < 1 or c[0] != 0 or np.any(np.diff(c) < 0) or c[-1] != k.shape[0]:
        raise RuntimeError("`crow_indices[..., 0] == 0` and `crow_indices[..., -1] == nnz` and "
                           "crow_indices must be non-decreasing")
    if k.shape[0] != vals.shape[0]:
        raise RuntimeError(f"col_indices and values must have the same number of elements, "
                           f"but got col_indices.numel(): {k.shape[0]}, values.numel(): "
                           f"{vals.shape[0]}")
    if size is None:
        size = (c.shape[0] - 1, int(k.max()) + 1 if k.shape[0] else 0)
    size = tuple(int(s) for s in size)
    if len(size) != 2 or size[0] != c.shape[0] - 1:
        raise RuntimeError(f"crow_indices.size(-1) must be equal to size[-2] + 1 (that is "
                           f"{size[0] + 1 if size else '?'}), but got: {c.shape[0]}")
    if k.shape[0] and (k.min() < 0 or k.max() >= size[1]):
        raise RuntimeError(f"col_indices must be in the range [0, {size[1]})")
    if requires_grad:
        vals = vals.detach().requires_grad_(True)
    return make_csr(crow.to(D.int64), col.to(D.int64), vals, size)


def _coo_of(x):
    return x if isinstance(x, SparseCooTensor) else x.to_sparse()


def mm(mat1, mat2, reduce="sum"):
    """torch.sparse.mm: sparse (COO or CSR) @ dense; gradients to values and dense."""
    if reduce != "sum":
        from ._reduce_mm import mm_reduce
        return mm_reduce(mat1, mat2, reduce)
    if not isinstance(mat1, SparseTensorBase):
        if isinstance(mat2, SparseTensorBase):
            return mat2.__rmatmul__(mat1)
        from ..ops.matmul import mm as dense_mm
        return dense_mm(mat1, mat2)
    return mm_coo(_coo_of(mat1), mat2)


def spmm(input, mat2):
    """torch.spmm: sparse @ dense (the same op as sparse.mm)."""
    return mm(input, mat2)


def addmm(mat, mat1, mat2, *, beta=1., alpha=1.):
    """torch.sparse.addmm: beta * mat + alpha * (sparse mat1 @ dense mat2)."""
    prod = mm(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    return prod + (mat if beta == 1 else mat * beta)


def _dims(dim, ndim):
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return sorted({d % ndim for d in dims})


def sum(input, dim=None, dtype=None):
    """torch.sparse.sum: all entries (a 0-d dense tensor), or over `dim`: sparse while any
    sparse dim is left, else dense."""
    if not isinstance(input, SparseTensorBase):
        raise TypeError(f"sparse.sum: expected a sparse tensor, got layout {input.layout}")
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        return input._vals.sum()
    coo = _coo_of(input)
    dims = _dims(dim, coo.ndim)
    dense = coo.to_dense().sum(tuple(dims))
    left = coo.sparse_dim() - len([d for d in dims if d < coo.sparse_dim()])
    return dense if left == 0 else dense.to_sparse(left)


def _grouped(input, dim):
    """Coalesced COO, and each entry's group: its index in every sparse dim but `dim`."""
    coo = _coo_of(input).coalesce()
    if coo.dense_dim():
        raise NotImplementedError("sparse.softmax with dense dims is not supported in ember")
    d = dim % coo.ndim
    idx = coo._ix._data
    keep = [i for i in range(coo.sparse_dim()) if i != d]
    key = _lin(idx[keep], [coo.shape[i] for i in keep]) if keep else np.zeros(idx.shape[1],
                                                                              np.int64)
    groups, gid = np.unique(key, return_inverse=True)
    return coo, gid.reshape(-1), len(groups)


def _shifted(coo, gid, n):
    v = coo._vals
    m = np.full(n, -np.inf, v._data.dtype)
    np.maximum.at(m, gid, v._data)        # the shift cancels in softmax: a constant
    g = as_index(gid)
    return v - _tensor_of(m).index_select(0, g), g


def softmax(input, dim, *, dtype=None):
    """torch.sparse.softmax: softmax over the specified entries of each slice along `dim`
    (unspecified entries count as -inf)."""
    if dtype is not None:
        input = input.to(dtype)
    coo, gid, n = _grouped(input, dim)
    z, g = _shifted(coo, gid, n)
    e = z.exp()
    return make_coo(coo._ix, e / segment_sum(e, g, n).index_select(0, g), coo.shape, True)


def log_softmax(input, dim, *, dtype=None):
    """torch.sparse.log_softmax, over the specified entries as softmax."""
    if dtype is not None:
        input = input.to(dtype)
    coo, gid, n = _grouped(input, dim)
    z, g = _shifted(coo, gid, n)
    return make_coo(coo._ix, z - segment_sum(z.exp(), g, n).log().index_select(0, g),
                    coo.shape, True)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """Tensor.to_sparse: the nonzero entries of a dense tensor as coalesced COO; values
    are gathered with index_select, so gradients flow back to the dense tensor."""
    if layout == sparse_csr:
        return to_sparse_csr(self)
    if layout is not None and layout != sparse_coo:
        raise NotImplementedError(f"to_sparse: layout {layout} is not supported in ember")
    sd = self.ndim if sparse_dim is None else int(sparse_dim)
    if not 0 < sd <= self.ndim:
        raise RuntimeError(f"sparse_dim must be in [1, {self.ndim}] for a {self.ndim}-d "
                           f"tensor, got {sparse_dim}")
    sizes = tuple(self.shape[:sd])
    arr = self._data
    mask = arr != 0 if sd == self.ndim else np.any(arr != 0, axis=tuple(range(sd, self.ndim)))
    idx = np.array(np.nonzero(mask), dtype=np.int64).reshape(sd, -1)
    flat = self.reshape((math.prod(sizes),) + tuple(self.shape[sd:]))
    vals = flat.index_select(0, as_index(_lin(idx, sizes)))
    return make_coo(as_index(idx), vals, self.shape, True)


def to_sparse_csr(self, dense_dim=None):
    """Tensor.to_sparse_csr of a dense 2-d tensor."""
    if self.ndim != 2:
        raise NotImplementedError(f"to_sparse_csr: ember supports 2-d tensors only, got "
                                  f"{self.ndim}-d")
    return to_sparse(self).to_sparse_csr()


def _dense_to_dense(self, dtype=None, *, masked_grad=None):
    return self if dtype is None else self.to(dtype)


METHODS["to_sparse"] = to_sparse
METHODS["to_sparse_coo"] = to_sparse
METHODS["to_sparse_csr"] = to_sparse_csr
METHODS["to_dense"] = _dense_to_dense
METHODS["sparse_dim"] = lambda self: 0
METHODS["dense_dim"] = lambda self: self.ndim
_kernels.install()
_semi_structured.install()
