"""Linear layers: Identity-free part of torch.nn's linear.py (Linear, Bilinear, LazyLinear).

Note: parameters have PyTorch's names and shapes and its default initialisation
(kaiming_uniform_(a=sqrt(5)) for Linear's weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for
the biases and Bilinear's weight). LazyLinear holds UninitializedParameters until its
first forward, then materialises them from the input's last dimension and becomes a
Linear (PyTorch's LazyModuleMixin behaviour, via a forward pre-hook).
"""
import math

from ...autograd.grad_mode import no_grad
from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .module import Module

__all__ = ["Linear", "Bilinear", "LazyLinear", "NonDynamicallyQuantizableLinear"]


class Linear(Module):
    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")



class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under another name (PyTorch uses it to keep out_proj from being quantized)."""


class Bilinear(Module):
    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(Linear):
    """A Linear whose in_features is inferred from the first input."""
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self._initialize_hook = self.register_forward_pre_hook(LazyLinear._infer_parameters)

    def has_uninitialized_params(self):
        return any(isinstance(p, UninitializedParameter)
                   for p in list(self._parameters.values()) + list(self._buffers.values()))

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()

    @staticmethod
    def _infer_parameters(module, args):
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        module.__class__ = module.cls_to_become
