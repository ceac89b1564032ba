"""Padding layers (torch.nn's padding.py): Constant/Zero/Reflection/Replication/Circular
Pad1d/2d/3d. The padding is stored as a 2n-tuple and extra_repr prints as PyTorch does."""
from .. import functional as F
from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d",
           "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
           "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
           "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]


def _tuple(n, x):
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,) * n


class _PadNd(Module):
    __constants__ = ["padding"]
    _n = 1
    _mode = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _tuple(2 * type(self)._n, padding)

    def forward(self, input):
        return F.pad(input, self.padding, type(self)._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input):
        n = type(self)._n
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    _n = 1


class CircularPad2d(_CircularPadNd):
    _n = 2


class CircularPad3d(_CircularPadNd):
    _n = 3


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    _n = 1


class ReflectionPad2d(_ReflectionPadNd):
    _n = 2


class ReflectionPad3d(_ReflectionPadNd):
    _n = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    _n = 1


class ReplicationPad2d(_ReplicationPadNd):
    _n = 2


class ReplicationPad3d(_ReplicationPadNd):
    _n = 3


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]
    _n = 1

    def __init__(self, padding, value):
        super().__init__()
        self.value = value
        self.padding = _tuple(2 * type(self)._n, padding)

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    _n = 3


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"
