"""The "inductor" backend (ember.compile's default): decompose, fuse, generate C.

Why it checks for AOT autograd: the generated code has no autograd, so graphs whose inputs
require grad need the joint forward/backward graph of AOT autograd
(ember._functorch.aot_autograd, helper G's work). When that is present, forward and
backward graphs are each compiled by compile_fx_inner; until then such calls run the
captured graph on the eager kernels (correct gradients), and inference calls run C.
"""
from .registry import register_backend


def _aot():
    try:
        from ..._functorch.aot_autograd import aot_module_simplified
    except ImportError:
        return None
    return aot_module_simplified


@register_backend
def inductor(gm, example_inputs, **kwargs):
    """Compile `gm` to fused C loops around extern (NumPy/BLAS) calls."""
    from ..._inductor.compile_fx import compile_fx_inner
    aot = _aot()
    if aot is not None:
        return aot(gm, example_inputs, fw_compiler=compile_fx_inner,
                   bw_compiler=compile_fx_inner)
    return compile_fx_inner(gm, example_inputs)
