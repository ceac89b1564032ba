"""Registry ops behind sparse tensors (ember/sparse/): the two kernels whose data flow is
sparse, declared once like every other op, so autograd, modes and the profiler see them.

Note: a sparse tensor is a container of two dense tensors, int64 `indices` (sparse_dim,
nnz) and `values` (nnz, *dense_dims). The ops here take those components, not the sparse
tensor, so autograd flows through `values` and the dense operand with the ordinary engine:
- `_sparse_mm(indices, values, dense, rows)`: the 2-d COO matrix times a dense matrix, one
  scipy.sparse CSR product (duplicates are summed, as a coalesce would). Backward to the
  dense operand is the transposed sparse matrix times grad (swap the index rows); to the
  values it is the product of grad's and dense's rows gathered at the nnz positions.
- `_sparse_segment_sum(values, index, n)`: out[index[k]] += values[k]; coalesce (duplicates
  summed) and to_dense (index = the linear position) are this op. Backward gathers.
Everything else on sparse tensors is composed from dense ember ops in ember/sparse/.
"""
import numpy as np

from .._dispatch import dispatch
from ._registry import register

__all__ = ["SPARSE_MM", "SEGMENT_SUM", "sparse_mm", "segment_sum"]


def _as_compute(a):
    """scipy.sparse has no float16/bfloat16 products: compute those in float32."""
    return a.astype(np.float32) if a.dtype.kind == "f" and a.dtype.itemsize == 2 or \
        a.dtype.name == "bfloat16" else a


def _sparse_mm_kernel(indices, values, dense, rows):
    import scipy.sparse as sp
    v = _as_compute(values)
    m = sp.csr_matrix((v, (indices[0], indices[1])), shape=(rows, dense.shape[0]))
    out = np.asarray(m @ _as_compute(dense))
    return out.astype(values.dtype, copy=False)


def _sparse_mm_meta(indices, values, dense, rows):
    if dense.ndim != 2:
        raise RuntimeError(f"mm: expected dense to be a 2-D tensor, got {dense.ndim}-D "
                           f"(shape {list(dense.shape)})")
    if values.dtype != dense.dtype:
        raise RuntimeError(f"mm: expected sparse and dense operands to have the same dtype, "
                           f"but got {values.dtype} and {dense.dtype}")
    return (rows, dense.shape[1]), dense.dtype


def _sparse_mm_vjp(ctx, g):
    indices, values, dense, rows = ctx.args
    _, nv, nd, _ = ctx.needs_input_grad
    gd = sparse_mm(indices.flip(0), values.conj(), g, dense.shape[0]) if nd else None
    gv = None
    if nv:
        gv = (g.index_select(0, indices[0]) * dense.index_select(0, indices[1]).conj()).sum(-1)
    return None, gv, gd, None


SPARSE_MM = register(
    "_sparse_mm", _sparse_mm_kernel, meta=_sparse_mm_meta, vjp=_sparse_mm_vjp, check=True,
    tags=("linalg", "prim"),
    schema="_sparse_mm(Tensor indices, Tensor values, Tensor dense, SymInt rows) -> Tensor")


def sparse_mm(indices, values, dense, rows):
    """(rows x dense.shape[0]) COO matrix given by indices/values, times `dense`."""
    return dispatch(SPARSE_MM, (indices, values, dense, rows))


def _segment_sum_kernel(values, index, n):
    if values.ndim == 1 and values.dtype.kind == "f" and values.dtype.itemsize >= 4:
        return np.bincount(index, values, minlength=n).astype(values.dtype, copy=False)
    out = np.zeros((n,) + values.shape[1:], _as_compute(values[:0]).dtype)
    np.add.at(out, index, values)
    return out.astype(values.dtype, copy=False)


def _segment_sum_meta(values, index, n):
    if index.ndim != 1 or index.shape[0] != values.shape[0]:
        raise RuntimeError(f"_sparse_segment_sum: index of shape {list(index.shape)} does not "
                           f"match values of shape {list(values.shape)}")
    return (n,) + tuple(values.shape[1:]), values.dtype


def _segment_sum_vjp(ctx, g):
    values, index, n = ctx.args
    return g.index_select(0, index), None, None


SEGMENT_SUM = register(
    "_sparse_segment_sum", _segment_sum_kernel, meta=_segment_sum_meta,
    vjp=_segment_sum_vjp, save=(1,), tags=("scatter", "prim"),
    schema="_sparse_segment_sum(Tensor values, Tensor index, SymInt n) -> Tensor")


def segment_sum(values, index, n):
    """out[index[k]] += values[k] over the first dim, out having n rows."""
    return dispatch(SEGMENT_SUM, (values, index, n))
