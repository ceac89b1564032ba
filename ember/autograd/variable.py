"""torch.autograd.variable: `Variable`, the pre-0.4 wrapper kept for old programs.

Variable(t) is t.detach() (same data, a leaf) with requires_grad as given, and every
Tensor is an instance of Variable, as in PyTorch."""
from .._tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            from .. import tensor
            data = tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
