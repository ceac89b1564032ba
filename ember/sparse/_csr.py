"""SparseCsrTensor: PyTorch's sparse CSR layout (2-d, no dense dims).

Note: CSR shares the COO machinery: its products and to_dense go through the COO form
(row indices = each row number repeated by its crow_indices step), which keeps one
kernel per registry op; the values tensor is the same object, so autograd flows.
"""
import numpy as np

from ._coo import SparseTensorBase, _SparseData, as_index, make_coo, sparse_csr
from .._memory import _Storage


def make_csr(crow, col, values, size):
    t = object.__new__(SparseCsrTensor)
    t._crow, t._col, t._vals = crow, col, values
    t._data = _SparseData(size, values._data.dtype, "SparseCsrCPU")
    t._dtype, t._device, t._storage = values._dtype, values._device, _Storage(0)
    return t


def coo_to_csr(coo):
    if coo.sparse_dim() != 2 or coo.dense_dim() != 0:
        raise RuntimeError(f"to_sparse_csr: expected a 2-d sparse COO tensor with 0 dense dims, "
                           f"got sparse_dim={coo.sparse_dim()}, dense_dim={coo.dense_dim()}")
    c = coo.coalesce()
    rows = c._ix._data[0]
    crow = np.zeros(coo.shape[0] + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=coo.shape[0]), out=crow[1:])
    return make_csr(as_index(crow), as_index(c._ix._data[1]), c._vals, coo.shape)


class SparseCsrTensor(SparseTensorBase):
    """torch.sparse_csr: crow_indices (rows+1,), col_indices (nnz,), values (nnz,)."""
    is_sparse = False
    is_sparse_csr = True
    layout = sparse_csr

    def _repr_head(self):
        return (f"tensor(crow_indices={self._crow!r},\n       col_indices={self._col!r},\n"
                f"       values={self._vals!r},\n       ")

    def _with_values(self, values):
        return make_csr(self._crow, self._col, values, self.shape)

    @property
    def grad(self):
        g = self._vals.grad
        return None if g is None else self._with_values(g)

    def crow_indices(self):
        return self._crow

    def col_indices(self):
        return self._col

    def values(self):
        return self._vals

    def sparse_dim(self):
        return 2

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout == sparse_csr:
            return self
        crow = self._crow._data
        rows = np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(crow))
        idx = as_index(np.stack([rows, self._col._data]))
        return make_coo(idx, self._vals, self.shape, True)

    to_sparse_coo = to_sparse

    def to_sparse_csr(self, dense_dim=None):
        return self

    def to_dense(self, dtype=None, *, masked_grad=None):
        return self.to_sparse().to_dense(dtype)

    def t(self):
        return self.to_sparse().t().to_sparse_csr()

    def transpose(self, dim0, dim1):
        return self.to_sparse().transpose(dim0, dim1).to_sparse_csr()

    def add(self, other, *, alpha=1):
        if isinstance(other, SparseCsrTensor):
            other = other.to_sparse()
        r = self.to_sparse().add(other, alpha=alpha)
        return r.to_sparse_csr() if isinstance(r, SparseTensorBase) else r

    __add__ = add

    def mul(self, other):
        if isinstance(other, SparseTensorBase):
            raise NotImplementedError("mul of two sparse CSR tensors is not supported in ember; "
                                      "convert with .to_sparse()")
        return self.to_sparse().mul(other).to_sparse_csr()

    __mul__ = __rmul__ = mul

    def sum(self, dim=None, keepdim=False, dtype=None):
        if dim is not None:
            raise NotImplementedError("sum(dim) of a sparse CSR tensor: use .to_sparse() first")
        return self._vals.sum() if dtype is None else self._vals.sum(dtype=dtype)
