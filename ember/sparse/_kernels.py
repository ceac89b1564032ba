"""The 'sparse' backend of the op registry: which registry ops run on sparse tensors.

Note: `OpDef.run_kernel` sends a call whose first tensor is sparse (`_backend == 'sparse'`)
to `op.kernels['sparse']`, else to `BACKENDS['sparse']`, which raises PyTorch's
NotImplementedError naming the op and the SparseCPU / SparseCsrCPU backend. The kernels
here receive the Tensor arguments (not arrays) and run ember ops on the values, so
autograd records the inner ops; the sparse container itself never requires grad
(`_rg` stays False), so the outer op records nothing on top of them.
"""
from .._dispatch import STATE, dispatch
from ..ops._registry import BACKENDS, REGISTRY
from ._coo import SparseCooTensor, mm_coo

# Unary ops with f(0) == 0: applied to the values they keep the sparsity pattern
# (PyTorch's SparseCPU kernels of the same names).
ZERO_PRESERVING = ("neg", "abs", "relu", "sin", "sinh", "tan", "tanh", "asin", "asinh",
                   "atan", "atanh", "sqrt", "expm1", "log1p", "trunc", "floor", "ceil",
                   "round", "sign", "sgn", "erf", "deg2rad", "rad2deg", "square", "conj",
                   "angle", "nan_to_num", "frac")


def _flat(args):
    for a in args:
        yield from (a if isinstance(a, (list, tuple)) else (a,))


def _refuse(op, args):
    first = next(a for a in _flat(args) if getattr(a, "_backend", None) == "sparse")
    raise NotImplementedError(
        f"Could not run '{op.name()}' with arguments from the '{first._data.backend}' "
        "backend. This could be because the operator doesn't exist for this backend "
        "(ember has no sparse kernel for it); call .to_dense() first.")


def _on_values(op):
    """f applied to the values; like PyTorch's sparse kernels, COO input is coalesced
    first (f of a sum of duplicates is not the sum of f), except for neg, which is linear."""
    linear = op.name == "neg"

    def kernel(x, *rest):
        if not linear and isinstance(x, SparseCooTensor):
            x = x.coalesce()
        return x._with_values(dispatch(op, (x._vals,) + rest))
    return kernel


def _as_coo(x):
    return x if isinstance(x, SparseCooTensor) else x.to_sparse()


def _mm(a, b):
    if STATE.grad_enabled and a.requires_grad and getattr(b, "_rg", False):
        raise NotImplementedError(
            "ember.mm/ember.matmul(sparse, dense) with both the sparse values and the dense "
            "operand requiring grad would record only the dense gradient; use "
            "ember.sparse.mm(sparse, dense) or sparse @ dense, which record both")
    return mm_coo(_as_coo(a), b)


def _sum(x, dims, keepdim, dtype):
    from . import sum as sparse_sum
    if keepdim:
        raise NotImplementedError("sum of a sparse tensor with keepdim=True is not supported")
    full = dims is None or len(dims) in (0, x.ndim)
    return sparse_sum(x, None if full else tuple(dims), dtype=dtype)


def install():
    BACKENDS["sparse"] = _refuse
    for name in ZERO_PRESERVING:
        op = REGISTRY.get(name)
        if op is not None:
            op.kernels["sparse"] = _on_values(op)
    REGISTRY["sum"].kernels["sparse"] = _sum
    REGISTRY["permute"].kernels["sparse"] = lambda x, dims: x.permute(dims)
    for name in ("mm", "matmul"):
        REGISTRY[name].kernels["sparse"] = _mm
