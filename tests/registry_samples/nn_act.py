"""Samples for the fused activation ops and linear (ember/nn/functional/_activation.py,
_linear.py). Inputs avoid the kinks (0, +-3, +-lambda) so gradcheck's finite
differences stay on one side."""
import ember.nn.functional as F

from ._util import t

NON_DIFFERENTIABLE = set()
NO_GRADCHECK = {}



def _act(fn, scale=1.0):
    return lambda: (fn, [t(2, 3) * scale + 0.05])


SAMPLES = {
    "gelu": _act(lambda x: F.gelu(x) + F.gelu(x, approximate="tanh")),
    "silu": _act(F.silu),
    "mish": _act(F.mish),
    "hardswish": _act(F.hardswish, 2.0),
    "hardsigmoid": _act(F.hardsigmoid, 2.0),
    "log_sigmoid": _act(F.logsigmoid),
    "elu": _act(lambda x: F.elu(x, 0.7) + F.selu(x) + F.celu(x, 1.5)),
    "leaky_relu": _act(lambda x: F.leaky_relu(x, 0.2)),
    "threshold": _act(lambda x: F.threshold(x, 0.3, -1.0)),
    "hardtanh": _act(lambda x: F.hardtanh(x, -0.5, 0.5) + F.relu6(x * 4)),
    "softplus": _act(lambda x: F.softplus(x, 2.0, 1.0)),
    "hardshrink": _act(lambda x: F.hardshrink(x, 0.2)),
    "softshrink": _act(lambda x: F.softshrink(x, 0.2)),
    "glu": lambda: (lambda x: F.glu(x, 0), [t(4, 3)]),
    "prelu": lambda: (F.prelu, [t(2, 3, 4), t(3, seed=1)]),
    "linear": lambda: (F.linear, [t(2, 4, 3), t(5, 3, seed=1), t(5, seed=2)]),
}
