"""SparseCooTensor: PyTorch's sparse COO layout as an ember.Tensor subclass.

Note: why a subclass with its own `_backend` and not a layout field on Tensor: the dense
eager paths stay untouched. The pointwise fast path already tests `__class__ is Tensor`, and
`OpDef.run_kernel` already routes any tensor whose `_backend` is not 'cpu' to
`op.kernels[backend]`, else to the `BACKENDS` fallback; so a sparse first argument reaches
the 'sparse' kernels (ember/sparse/_kernels.py) or PyTorch's "Could not run ... 'SparseCPU'
backend" NotImplementedError at no cost to dense calls. The class defines no
`__torch_function__`, so dispatch never starts checking argument types. Python operators
(`@`, `+`, `*`, and their reflected forms, tried first for a subclass) are methods here.
Storage: `_ix` int64 (sparse_dim, nnz) and `_vals` (nnz, *dense_dims), both plain
ember Tensors; gradients flow through `_vals` (a sparse leaf's `.grad` is the sparse
tensor of its values' grad). `_data` is a stand-in that knows the shape and refuses NumPy.
"""
import math

import numpy as np

from .. import _dtype as D
from .._dispatch import _disabled_torch_function_impl
from .._memory import _Storage
from .._tensor import Tensor, wrap
from ..ops.sparse import segment_sum, sparse_mm

sparse_coo = "torch.sparse_coo"
sparse_csr = "torch.sparse_csr"


class _SparseData:
    """`_data` of a sparse tensor: shape/ndim/size/dtype for Tensor's metadata methods;
    any NumPy use raises PyTorch's unsupported-backend error."""
    __slots__ = ("shape", "dtype", "backend")

    def __init__(self, shape, dtype, backend):
        self.shape, self.dtype, self.backend = tuple(shape), dtype, backend

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    nbytes = 0

    def _refuse(self, what):
        return NotImplementedError(f"Could not run '{what}' with arguments from the "
                                   f"'{self.backend}' backend: this op has no sparse kernel; "
                                   "call .to_dense() first")

    def __array__(self, *a, **k):
        raise self._refuse("a dense kernel")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise self._refuse(f"aten::{ufunc.__name__}")

    def __array_function__(self, func, types, args, kwargs):
        raise self._refuse(f"aten::{func.__name__}")


def as_index(arr):
    """An int64 ember tensor of a NumPy index array (no grad, owns its array)."""
    return wrap(np.ascontiguousarray(arr, dtype=np.int64))


def make_coo(indices, values, size, coalesced=False):
    """The SparseCooTensor of ember tensors `indices`, `values` (no checks)."""
    t = object.__new__(SparseCooTensor)
    t._ix, t._vals, t._coalesced = indices, values, bool(coalesced)
    t._data = _SparseData(size, values._data.dtype, "SparseCPU")
    t._dtype, t._device, t._storage = values._dtype, values._device, _Storage(0)
    return t


def _lin(idx, sizes):
    """Row-major linear position of each column of the (sparse_dim, nnz) array `idx`."""
    if idx.shape[1] == 0:
        return np.zeros(0, np.int64)
    return np.ravel_multi_index(tuple(idx), tuple(sizes)).astype(np.int64, copy=False)


class SparseTensorBase(Tensor):
    """What COO and CSR share: the values' dtype/device/grad, and refusing dense access."""
    _backend = "sparse"
    # opted out of the __torch_function__ protocol: defining this class must not turn on
    # dispatch's argument-type check (TF.active) for every dense call
    __torch_function__ = _disabled_torch_function_impl

    @property
    def requires_grad(self):
        return self._vals.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self._vals.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        self._vals.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self._vals.is_leaf

    @property
    def grad_fn(self):
        return self._vals._grad_fn

    _grad_fn = grad_fn      # internal readers see the values' node too

    def numpy(self, *a, **k):
        raise RuntimeError("Can't call numpy() on a sparse tensor: call .to_dense() first")

    def item(self):
        return self.to_dense().item()

    def is_contiguous(self, memory_format=None):
        raise RuntimeError(f"is_contiguous(): tensors with layout {self.layout} do not have "
                           "is_contiguous")

    def stride(self, dim=None):
        raise RuntimeError(f"Tensors of type {type(self).__name__}Impl do not have strides")

    def dense_dim(self):
        return self._vals.ndim - 1

    def _nnz(self):
        return self._vals.shape[0]

    def to(self, *args, **kwargs):
        dtype = kwargs.get("dtype")
        for a in args:
            if isinstance(a, D.dtype):
                dtype = a
        return self._with_values(self._vals if dtype is None else self._vals.to(dtype))

    def float(self):
        return self.to(D.float32)

    def double(self):
        return self.to(D.float64)

    def half(self):
        return self.to(D.float16)

    def detach(self):
        return self._with_values(self._vals.detach())

    def clone(self, *, memory_format=None):
        return self._with_values(self._vals.clone())

    def __neg__(self):
        return self._with_values(-self._vals)

    def __truediv__(self, other):
        if isinstance(other, Tensor) and other.ndim != 0:
            raise NotImplementedError("div: a sparse tensor can only be divided by a scalar "
                                      "or a 0-d tensor")
        return self._with_values(self._vals / other)

    div = __truediv__

    def __rtruediv__(self, other):
        raise NotImplementedError("Could not run 'aten::div.Tensor' with a sparse divisor")

    def __matmul__(self, other):
        from . import mm
        return mm(self, other)

    mm = matmul = __matmul__

    def __rmatmul__(self, other):        # dense @ sparse = (sparse^T @ dense^T)^T
        from . import mm
        return mm(self.t(), other.t()).t()

    def __repr__(self):
        return (f"{self._repr_head()}size={tuple(self.shape)}, nnz={self._nnz()}, "
                + ("" if self._dtype == D.get_default_dtype() else f"dtype={self._dtype}, ")
                + f"layout={self.layout}"
                + (", requires_grad=True" if self.requires_grad else "") + ")")

    __str__ = __repr__


class SparseCooTensor(SparseTensorBase):
    """torch.sparse_coo: indices (sparse_dim, nnz) int64 + values (nnz, *dense_dims)."""
    is_sparse = True
    is_sparse_csr = False
    layout = sparse_coo

    def _repr_head(self):
        return f"tensor(indices={self._ix!r},\n       values={self._vals!r},\n       "

    def _with_values(self, values):
        return make_coo(self._ix, values, self.shape, self._coalesced)

    @property
    def grad(self):
        """The gradient w.r.t. the tensor as PyTorch defines it: one entry per distinct
        index (duplicates of an uncoalesced leaf share one position, so their values'
        gradients are that position's gradient, taken once, not summed)."""
        g = self._vals.grad
        if g is None:
            return None
        if self._coalesced:
            return make_coo(self._ix, g, self.shape, True)
        sizes = self.shape[:self.sparse_dim()]
        uniq, first = np.unique(_lin(self._ix._data, sizes), return_index=True)
        idx = np.array(np.unravel_index(uniq, sizes), dtype=np.int64).reshape(len(sizes), -1)
        return make_coo(as_index(idx), g.index_select(0, as_index(first)), self.shape, True)

    @grad.setter
    def grad(self, value):
        self._vals.grad = None if value is None else value._vals

    def sparse_dim(self):
        return self._ix.shape[0]

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return self._ix

    def _values(self):
        return self._vals

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._ix

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._vals

    def coalesce(self):
        """Sorted unique indices, duplicate entries' values summed (a registry op)."""
        if self._coalesced:
            return self
        sizes = self.shape[:self.sparse_dim()]
        uniq, inv = np.unique(_lin(self._ix._data, sizes), return_inverse=True)
        idx = np.array(np.unravel_index(uniq, sizes), dtype=np.int64).reshape(len(sizes), -1)
        vals = segment_sum(self._vals, as_index(inv.reshape(-1)), len(uniq))
        return make_coo(as_index(idx), vals, self.shape, True)

    def to_dense(self, dtype=None, *, masked_grad=None):
        sd = self.sparse_dim()
        sizes = self.shape[:sd]
        lin = as_index(_lin(self._ix._data, sizes))
        flat = segment_sum(self._vals, lin, math.prod(sizes))
        out = flat.reshape(tuple(self.shape))
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout == sparse_csr:
            return self.to_sparse_csr()
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(f"to_sparse: conversion from Sparse to Sparse with sparse_dim "
                               f"argument != self.sparse_dim() is not supported "
                               f"({sparse_dim} != {self.sparse_dim()})")
        return self

    def to_sparse_coo(self):
        return self

    def to_sparse_csr(self, dense_dim=None):
        from ._csr import coo_to_csr
        return coo_to_csr(self)

    # ------------------------------------------------------------------ shape
    def transpose(self, dim0, dim1):
        sd = self.sparse_dim()
        d0, d1 = dim0 % self.ndim, dim1 % self.ndim
        if d0 >= sd or d1 >= sd:
            raise NotImplementedError("transpose of a sparse tensor: only sparse dims can be "
                                      f"swapped (got {dim0}, {dim1} with sparse_dim {sd})")
        perm = list(range(sd))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        shape = list(self.shape)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        idx = as_index(self._ix._data[perm])
        return make_coo(idx, self._vals, shape, self._coalesced and d0 == d1)

    def t(self):
        if self.sparse_dim() > 2 or self.dense_dim() > 0:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                               f"but got {self.sparse_dim()} sparse and {self.dense_dim()} "
                               "dense dimensions")
        return self if self.ndim < 2 else self.transpose(0, 1)

    @property
    def T(self):
        return self.t()

    @property
    def mT(self):
        return self.transpose(-2, -1)

    def permute(self, *dims):
        """Sparse dims permute the index rows, dense dims the values' trailing axes."""
        dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (list, tuple)) \
            else dims
        dims = tuple(d % self.ndim for d in dims)
        sd = self.sparse_dim()
        if sorted(dims) != list(range(self.ndim)) or sorted(dims[:sd]) != list(range(sd)):
            raise RuntimeError(f"permute(sparse_coo): transpositions between sparse and dense "
                               f"dimensions are not allowed (dims {list(dims)}, sparse_dim "
                               f"{sd})")
        vals = self._vals.permute((0,) + tuple(d - sd + 1 for d in dims[sd:]))
        shape = [self.shape[d] for d in dims]
        return make_coo(as_index(self._ix._data[list(dims[:sd])]), vals, shape,
                        self._coalesced and dims[:sd] == tuple(range(sd)))

    def conj(self):
        return self if not self._dtype.is_complex else self._with_values(self._vals.conj())

    # ------------------------------------------------------------ arithmetic
    def add(self, other, *, alpha=1):
        if isinstance(other, SparseCooTensor):
            if tuple(other.shape) != tuple(self.shape):
                raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but "
                                   f"self has size {list(self.shape)} while other has size "
                                   f"{list(other.shape)} (FYI: dense-sparse addition does not "
                                   "currently support broadcasting)")
            from ..ops.join import cat
            ov = other._vals if alpha == 1 else other._vals * alpha
            idx = as_index(np.concatenate([self._ix._data, other._ix._data], 1))
            out = make_coo(idx, cat([self._vals, ov.to(self._vals.dtype)]), self.shape)
            return out.coalesce() if self._coalesced and other._coalesced else out
        if isinstance(other, Tensor):       # PyTorch adds dense + sparse only
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        raise NotImplementedError("add(sparse, number): adding a scalar to a sparse tensor "
                                  "would make it dense; call .to_dense() first")

    __add__ = add

    def __radd__(self, other):
        if isinstance(other, Tensor):
            return other + self.to_dense()
        return self.add(other)

    def sub(self, other, *, alpha=1):
        return self.add(other, alpha=-alpha)

    __sub__ = sub

    def __rsub__(self, other):
        return (-self).__radd__(other)

    def mul(self, other):
        if isinstance(other, SparseCooTensor):
            return _mul_sparse(self, other)
        if isinstance(other, Tensor) and other.ndim != 0:
            if tuple(other.shape) != tuple(self.shape):
                raise NotImplementedError("mul(sparse, dense) with broadcasting is not "
                                          "supported; shapes must match")
            s = self.coalesce()
            sizes = self.shape[:self.sparse_dim()]
            lin = as_index(_lin(s._ix._data, sizes))
            flat = other.reshape((math.prod(sizes),) + tuple(self.shape[len(sizes):]))
            return make_coo(s._ix, s._vals * flat.index_select(0, lin), self.shape, True)
        return self._with_values(self._vals * other)

    __mul__ = __rmul__ = mul

    def sum(self, dim=None, keepdim=False, dtype=None):
        from . import sum as sparse_sum
        if keepdim:
            raise NotImplementedError("sum of a sparse tensor with keepdim=True is not "
                                      "supported")
        return sparse_sum(self, dim, dtype=dtype)


def _mul_sparse(a, b):
    """Elementwise product of two COO tensors: nonzero only where both have entries."""
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(f"mul: expected 'self' and 'other' to have same sizes, but "
                           f"{list(a.shape)} != {list(b.shape)}")
    a, b = a.coalesce(), b.coalesce()
    sizes = a.shape[:a.sparse_dim()]
    _, ia, ib = np.intersect1d(_lin(a._ix._data, sizes), _lin(b._ix._data, sizes),
                               assume_unique=True, return_indices=True)
    vals = a._vals.index_select(0, as_index(ia)) * b._vals.index_select(0, as_index(ib))
    return make_coo(as_index(a._ix._data[:, ia]), vals, a.shape, True)


def mm_coo(a, dense):
    """2-d COO @ dense 2-d, through the `_sparse_mm` registry op."""
    if a.sparse_dim() != 2 or a.dense_dim() != 0:
        raise NotImplementedError(f"mm: sparse @ dense needs a 2-d COO matrix with 0 dense "
                                  f"dims, got sparse_dim={a.sparse_dim()}, "
                                  f"dense_dim={a.dense_dim()}")
    if isinstance(dense, SparseTensorBase):
        return _mm_sparse_sparse(a, dense if isinstance(dense, SparseCooTensor)
                                 else dense.to_sparse())
    if dense.ndim != 2:
        if dense.ndim == 1:      # torch.mv-like: (m, k) @ (k,) -> (m,)
            return mm_coo(a, dense.unsqueeze(1)).squeeze(1)
        raise RuntimeError(f"mm: expected 2-D dense operand, got {dense.ndim}-D")
    if a.shape[1] != dense.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
                           f"{a.shape[1]} and {dense.shape[0]}x{dense.shape[1]})")
    return sparse_mm(a._ix, a._vals, dense, a.shape[0])


def _mm_sparse_sparse(a, b):
    """2-d COO @ 2-d COO -> coalesced COO. Every pair (a[i, k], b[k, j]) is one product
    term: the pairs are found in NumPy (a join on k), their values multiplied with
    index_select and summed per (i, j) by coalesce, so gradients reach both values."""
    if b.sparse_dim() != 2 or b.dense_dim() != 0:
        raise NotImplementedError("mm: sparse @ sparse needs 2-d COO operands with 0 dense "
                                  "dims")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
                           f"{a.shape[1]} and {b.shape[0]}x{b.shape[1]})")
    if a._dtype != b._dtype:
        raise RuntimeError(f"mm: expected both sparse operands to have the same dtype, but "
                           f"got {a._dtype} and {b._dtype}")
    ai, bi = a._ix._data, b._ix._data
    order = np.argsort(bi[0], kind="stable")
    counts = np.bincount(bi[0], minlength=b.shape[0])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    per_a = counts[ai[1]]
    pa = np.repeat(np.arange(ai.shape[1]), per_a)
    offsets = np.arange(pa.shape[0]) - np.repeat(np.cumsum(per_a) - per_a, per_a)
    pb = order[np.repeat(starts[ai[1]], per_a) + offsets]
    vals = a._vals.index_select(0, as_index(pa)) * b._vals.index_select(0, as_index(pb))
    idx = as_index(np.stack([ai[0][pa], bi[1][pb]]).reshape(2, -1))
    return make_coo(idx, vals, (a.shape[0], b.shape[1])).coalesce()
