"""The "aot_eager" backend (torch._dynamo.backends.debugging.aot_eager): AOT autograd with
graphs run on the eager kernels.

Why: it proves functionalization, the joint forward+backward trace and the partitioner
correct on their own, before any code generation: a difference from eager here is an AOT
bug. The forward and backward graphs run op by op (`make_boxed_func(gm.forward)`); the
min-cut partitioner picks the saved tensors, so activation memory is what a compiling
backend would keep.
"""
from ..._functorch.aot_autograd import (aot_module_simplified, make_boxed_func,
                                        min_cut_rematerialization_partition)
from .registry import register_debug_backend

__all__ = ["aot_eager", "boxed_nop"]


def boxed_nop(gm, example_inputs):
    """A compiler that runs the graph as it is (PyTorch's boxed_nop)."""
    return make_boxed_func(gm.forward)


@register_debug_backend
def aot_eager(gm, fake_tensor_inputs, **kwargs):
    """AOT autograd (functionalize, joint trace, min-cut partition) with eager kernels."""
    return aot_module_simplified(gm, fake_tensor_inputs, fw_compiler=boxed_nop,
                                 bw_compiler=boxed_nop,
                                 partition_fn=kwargs.pop("partition_fn",
                                                         min_cut_rematerialization_partition),
                                 decompositions=kwargs.pop("decompositions", None))
