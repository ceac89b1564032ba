"""sparse.mm with reduce='mean'/'amax'/'amin' and sparse.sampled_addmm.

Why composites: both are a gather of dense rows per stored element followed by a
per-row reduction (scatter_reduce) or a per-element dot product, all ember ops, so
gradients reach the sparse values and the dense operands without kernels of their own.
"""
from ._coo import SparseTensorBase, as_index
from ._csr import SparseCsrTensor, make_csr

__all__ = ["mm_reduce", "sampled_addmm"]

_REDUCES = ("sum", "mean", "amax", "amin")


def _rows_cols(sp):
    """(row index, column index) tensors of a 2-d sparse tensor's stored elements."""
    if isinstance(sp, SparseCsrTensor):                # CSR order, rows from crow steps
        import numpy as np
        crow = sp.crow_indices()._data
        rows = np.repeat(np.arange(len(crow) - 1), np.diff(crow))
        return as_index(rows), sp.col_indices(), sp.values()
    coo = sp.coalesce()
    return coo._ix[0], coo._ix[1], coo._vals


def mm_reduce(mat1, mat2, reduce):
    """out[i, j] = reduce over the stored (i, k) of mat1[i, k] * mat2[k, j]; rows with
    nothing stored give 0 (PyTorch's sparse_mm_reduce)."""
    from ..ops.creation import zeros
    if reduce not in _REDUCES:
        raise RuntimeError(f"sparse_mm_reduce: reduce type of {reduce} has not been enabled.")
    if not isinstance(mat1, SparseTensorBase) or mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError("sparse.mm with reduce expects a 2-d sparse mat1 and a 2-d dense "
                           "mat2")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    rows, cols, vals = _rows_cols(mat1)
    prod = vals.unsqueeze(1) * mat2[cols]                      # (nnz, n)
    out = zeros((mat1.shape[0], mat2.shape[1]), dtype=prod.dtype)
    index = rows.unsqueeze(1).expand(tuple(prod.shape))
    return out.scatter_reduce(0, index, prod, reduce, include_self=False)


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """beta * input + alpha * (mat1 @ mat2) at input's stored positions only (CSR)."""
    if not isinstance(input, SparseCsrTensor):
        raise RuntimeError("sampled_addmm: Expected input to be a sparse CSR tensor")
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError("sampled_addmm: Expected mat1 and mat2 to be matrices")
    if mat1.shape[1] != mat2.shape[0] or (mat1.shape[0], mat2.shape[1]) != tuple(input.shape):
        raise RuntimeError(f"sampled_addmm: mat1 {list(mat1.shape)} @ mat2 "
                           f"{list(mat2.shape)} does not give input's shape "
                           f"{list(input.shape)}")
    rows, cols, vals = _rows_cols(input)
    dots = (mat1[rows] * mat2.t()[cols]).sum(-1)
    new = dots * alpha if alpha != 1 else dots
    if beta != 0:
        new = new + (vals * beta if beta != 1 else vals)
    res = make_csr(input.crow_indices(), input.col_indices(), new, tuple(input.shape))
    if out is not None:
        raise NotImplementedError("sparse.sampled_addmm: out= is not supported in ember")
    return res
