"""The primitive op set (DESIGN §4), as a namespace: `ember._prims.add`, `ember._prims.cat`.

Note: the set is read from the registry by the `prim` tag (set at each op's registration,
or by the family factories for elementwise math), never from a list kept here, so a new
primitive appears by being registered with the tag. Everything else either has a
decomposition into these (`ember._decomp`) or is listed as still missing one in
tests/test_decomp.py. "Extern" prims (matmul, convolution, pools, sort/topk, fft, linalg,
random draws, ops with data-dependent shapes) stay whole in a compiler: they are calls
to a library kernel, not code it generates (ember/ops/README.md).
"""
from .ops._registry import REGISTRY

__all__ = ["prims", "is_prim", "EXTERN_TAGS", "is_extern"]

# tags whose prims a compiler calls out to instead of generating code for
EXTERN_TAGS = frozenset({"linalg", "fft", "random", "dynamic_output_shape", "inplace"})
_EXTERN_OTHER = frozenset({"sort", "topk", "searchsorted", "convolution", "im2col", "col2im",
                           "max_pool2d_with_indices", "max_pool3d_with_indices",
                           "adaptive_max_pool2d", "adaptive_max_pool3d",
                           "avg_pool2d", "avg_pool3d", "_embedding_bag", "_ctc_loss",
                           "_ctc_loss_backward", "cumsum", "cumprod", "cummax", "cummin",
                           "scatter_reduce", "_scaled_dot_product_flash_attention_for_cpu",
                           "_scaled_dot_product_flash_attention_for_cpu_backward"})


def prims():
    """{name: op} of every registry op tagged `prim`."""
    return {n: op for n, op in REGISTRY.items() if "prim" in op.tags}


def is_prim(op):
    """Whether `op` (an op or its registry name) is a primitive."""
    op = REGISTRY.get(op) if isinstance(op, str) else op
    return op is not None and "prim" in op.tags


def is_extern(op):
    """Whether the primitive `op` stays a library call in a compiler (not lowered to loops)."""
    op = REGISTRY.get(op) if isinstance(op, str) else op
    return is_prim(op) and bool(op.tags & EXTERN_TAGS or op.name in _EXTERN_OTHER)


def __getattr__(name):
    op = REGISTRY.get(name)
    if op is not None and "prim" in op.tags:
        return op
    if op is not None:
        raise AttributeError(f"ember._prims: '{name}' is not a primitive (it decomposes; "
                             "see ember._decomp.decomposition_table)")
    raise AttributeError(f"module 'ember._prims' has no attribute '{name}'")


def __dir__():
    return sorted(set(__all__) | set(prims()))
