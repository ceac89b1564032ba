"""Parameter and Buffer: tensors a Module registers by assignment."""
from .._dispatch import _disabled_torch_function_impl
from .._tensor import Tensor
from ..ops.creation import empty

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


class Parameter(Tensor):
    """A leaf tensor that requires grad and that Modules list in `parameters()`.

    Ops on Parameters return plain Tensors, as in PyTorch (its __torch_function__ is
    disabled, which also keeps dispatch on the plain-tensor path).
    """
    __torch_function__ = _disabled_torch_function_impl
    _is_param = True            # repr prints "tensor(", as PyTorch's does

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        as_parameter = getattr(type(data), "_as_parameter", None)
        if as_parameter is not None:    # a subclass that keeps its type (2:4 sparse weights)
            return as_parameter(data, requires_grad)
        t = object.__new__(cls)
        t._data, t._dtype, t._storage = data._data, data._dtype, data._storage
        if data._backend != "cpu":
            t._backend, t._device, t._fake = data._backend, data._device, data._fake
        t._rg = False
        t.requires_grad_(requires_grad)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach(), self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = Parameter(self.detach().clone(), self.requires_grad)
        if self.grad is not None:
            out.grad = self.grad.detach().clone()
        memo[id(self)] = out
        return out


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Buffer(Tensor):
    """Marks a tensor to be registered as a buffer when assigned to a Module."""
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = object.__new__(cls)
        t._data, t._dtype, t._storage = data._data, data._dtype, data._storage
        t._rg = data._rg
        t.persistent = persistent
        return t

    def __init__(self, data=None, *, persistent=True):
        pass


class UninitializedParameter(Parameter):
    """A parameter whose shape a Lazy module fills in on its first forward."""

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return super().__new__(cls, empty(0, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def materialize(self, shape, device=None, dtype=None):
        data = empty(*shape, dtype=dtype or self.dtype)
        self._data, self._dtype, self._storage = data._data, data._dtype, data._storage
        self.__class__ = Parameter

    def __repr__(self):
        return "<UninitializedParameter>"


class UninitializedBuffer(Buffer):
    pass
