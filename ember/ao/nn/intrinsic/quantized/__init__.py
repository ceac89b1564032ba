"""ember.ao.nn.intrinsic.quantized: quantized Linear/Conv2d with the relu fused (the int8
kernels clamp the requantized output at the zero point)."""
from ...quantized.conv import Conv2d
from ...quantized.linear import Linear
from ... import intrinsic as nni

__all__ = ["LinearReLU", "ConvReLU2d"]


class LinearReLU(Linear):
    """QuantizedLinearReLU: relu(linear(x)) on quantized tensors."""

    _FLOAT_MODULE = (nni.LinearReLU,)
    _RELU = True

    def _get_name(self):
        return "QuantizedLinearReLU"


class ConvReLU2d(Conv2d):
    """QuantizedConvReLU2d: relu(conv2d(x)) on quantized tensors."""

    _FLOAT_MODULE = (nni.ConvReLU2d,)
    _RELU = True

    def _get_name(self):
        return "QuantizedConvReLU2d"
