"""nn.functional dropout: dropout, dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout.

Note: the masks come from ember's Philox generator (`bernoulli` with probability
1 - p), so the values differ from PyTorch's; the rules are PyTorch's _dropout_impl:
p == 0, eval mode or an empty input return the input itself; p == 1 multiplies by
zero; kept elements scale by 1/(1-p); alpha dropout maps dropped elements to SELU's
negative saturation with an affine correction (a, b) that keeps mean and variance;
"feature" variants draw one value per (sample, channel). The torch-level functions
(torch.dropout, torch.feature_dropout, ...) are here too (`_VF` in PyTorch).
"""
import math
import warnings

from ...ops.creation import empty, zeros
from ...ops.random import bernoulli
from ..._dtype import float32

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout"]

_SELU_ALPHA = 1.7580993408473766     # -SELU's negative saturation value (alpha * scale)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input, p, feature):
    """Bernoulli(1 - p) keep-mask in the input's dtype: per element, or per (N, C)."""
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    else:
        shape = tuple(input.shape)
    dtype = input.dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_type(dtype)}")
    return bernoulli(empty(shape, dtype=dtype), 1 - p)


def _type(dtype):
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(dtype.name, dtype.name)


def _dropout_impl(input, p, train, feature, alpha, inplace):
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        z = zeros((), dtype=input.dtype if input.is_floating_point() else float32)
        return input.mul_(z) if inplace else input * z
    noise = _noise(input, p, feature)
    if alpha:
        a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
        b = (noise - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
        noise = noise * a
        return input.mul_(noise).add_(b) if inplace else input * noise + b
    noise = noise / (1 - p)
    return input.mul_(noise) if inplace else input * noise


# ------------------------------------------------ torch-level (torch.dropout, ...)

def dropout_(input, p, train):
    return _dropout_impl(input, p, train, False, False, True)


def feature_dropout(input, p, train):
    return _dropout_impl(input, p, train, True, False, False)


def feature_dropout_(input, p, train):
    return _dropout_impl(input, p, train, True, False, True)


def alpha_dropout_(input, p, train):
    return _dropout_impl(input, p, train, False, True, True)


def feature_alpha_dropout_(input, p, train):
    return _dropout_impl(input, p, train, True, True, True)


# ------------------------------------------------------------ nn.functional

def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p)."""
    _check_p(p)
    return _dropout_impl(input, p, training, False, False, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's self-normalizing mean and variance."""
    _check_p(p)
    return _dropout_impl(input, p, training, False, True, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _dropout_impl(input, p, training, True, True, inplace)


def _feature_unbatched(input, p, training, inplace, batched):
    """Feature dropout of (C, *) input as a batch of one (in place: through the view)."""
    if batched:
        return _dropout_impl(input, p, training, True, False, inplace)
    result = _dropout_impl(input.unsqueeze(0), p, training, True, False, inplace)
    return input if inplace else result.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) or (C, L) input."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout on "
                           "inputs with 1 spatial dimension, a channel dimension, and an optional "
                           "batch dimension (i.e. 2D or 3D inputs).")
    return _feature_unbatched(input, p, training, inplace, inp_dim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, H, W) or (C, H, W) input (3-D input is read as
    (N, C, L), PyTorch's legacy behaviour, with its warning)."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain the "
                      "behavior and silence this warning, please use dropout instead. Note that "
                      "dropout2d exists to provide channel-wise dropout on inputs with 2 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 3D "
                      "or 4D inputs).", stacklevel=2)
    if inp_dim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape (C, H, "
                      "W). To maintain the 1D channel-wise dropout behavior, please switch to "
                      "using dropout1d instead.", stacklevel=2)
    return _dropout_impl(input, p, training, True, False, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is "
                      "deprecated and will result in an error in a future release. To retain the "
                      "behavior and silence this warning, please use dropout instead. Note that "
                      "dropout3d exists to provide channel-wise dropout on inputs with 3 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 4D "
                      "or 5D inputs).", stacklevel=2)
    return _feature_unbatched(input, p, training, inplace, inp_dim == 5)
