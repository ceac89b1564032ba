"""Activation layers of torch.nn (MultiheadAttention lives in its own module).

Note: constructor arguments, attribute names and extra_repr strings follow PyTorch's
activation.py exactly, so `repr(model)` prints the same text; forward calls the
nn.functional counterpart with the module's settings.
"""
import warnings

from .. import functional as F
from .. import init
from ..parameter import Parameter
from ...ops.creation import empty
from .module import Module

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid",
           "Tanh", "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU",
           "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "PReLU",
           "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax"]


def _inplace_repr(inplace, lead=""):
    return (lead + "inplace=True") if inplace else ""


class _Inplace(Module):
    """An activation whose only setting is `inplace`."""
    __constants__ = ["inplace"]
    _fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class _Plain(Module):
    """An activation without settings."""
    _fn = None

    def forward(self, input):
        return type(self)._fn(input)


class Threshold(Module):
    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + \
            _inplace_repr(self.inplace, ", ")


class ReLU(_Inplace):
    _fn = staticmethod(F.relu)


class RReLU(Module):
    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + _inplace_repr(self.inplace, ", ")


class Hardtanh(Module):
    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + \
            _inplace_repr(self.inplace, ", ")


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Sigmoid(_Plain):
    _fn = staticmethod(F.sigmoid)


class Tanh(_Plain):
    _fn = staticmethod(F.tanh)


class LogSigmoid(_Plain):
    _fn = staticmethod(F.logsigmoid)


class Softsign(_Plain):
    _fn = staticmethod(F.softsign)


class Tanhshrink(_Plain):
    _fn = staticmethod(F.tanhshrink)


class Hardsigmoid(_Inplace):
    _fn = staticmethod(F.hardsigmoid)

    def extra_repr(self):       # PyTorch's Hardsigmoid prints no settings
        return ""


class Hardswish(_Inplace):
    _fn = staticmethod(F.hardswish)

    def extra_repr(self):       # PyTorch's Hardswish prints no settings
        return ""


class SiLU(_Inplace):
    _fn = staticmethod(F.silu)


class Mish(_Inplace):
    _fn = staticmethod(F.mish)


class SELU(_Inplace):
    _fn = staticmethod(F.selu)


class ELU(Module):
    __constants__ = ["alpha", "inplace"]
    _fn = staticmethod(F.elu)

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return type(self)._fn(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + _inplace_repr(self.inplace, ", ")


class CELU(ELU):
    _fn = staticmethod(F.celu)


class GLU(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    __constants__ = ["lambd"]
    _fn = staticmethod(F.hardshrink)

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return type(self)._fn(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    _fn = staticmethod(F.softshrink)


class LeakyReLU(Module):
    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + _inplace_repr(self.inplace, ", ")


class Softplus(Module):
    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _SoftmaxBase(Module):
    """Softmax, Softmin, LogSoftmax: `dim` (None = PyTorch's legacy implicit choice)."""
    __constants__ = ["dim"]
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(_SoftmaxBase):
    _fn = staticmethod(F.softmin)


class Softmax(_SoftmaxBase):
    _fn = staticmethod(F.softmax)


class LogSoftmax(_SoftmaxBase):
    _fn = staticmethod(F.log_softmax)


class Softmax2d(Module):
    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)

# PyTorch defines MultiheadAttention in activation.py; programs import it from there
from .attention import MultiheadAttention  # noqa: E402,F401
