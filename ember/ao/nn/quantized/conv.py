"""QuantizedConv2d: quantized (quint8) input, qint8 weight (per channel on the output
channels), requantized output (PyTorch's quantized::conv2d, x86 numerics)."""
import numpy as np

import ember
from .... import nn
from ...quantization._kernels import qconv2d
from ...quantization._qtensor import _make, quantize_per_tensor
from ._functional import weight_qparams
from .linear import _observed

__all__ = ["Conv2d"]


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


class Conv2d(nn.Module):
    """conv2d on quantized tensors; zero padding only."""

    _FLOAT_MODULE = (nn.Conv2d,)
    _RELU = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros"):
        super().__init__()
        if padding_mode != "zeros":
            raise NotImplementedError(f"quantized Conv2d: padding_mode '{padding_mode}' "
                                      "(ember has zero padding only)")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        self.groups, self.padding_mode = groups, padding_mode
        self.output_padding = (0, 0)
        w = ember.zeros(out_channels, in_channels // groups, *self.kernel_size)
        self.set_weight_bias(quantize_per_tensor(w, 1.0, 0, ember.qint8),
                             ember.zeros(out_channels) if bias else None)
        self.scale, self.zero_point = 1.0, 0

    def _get_name(self):
        return "QuantizedConv2d"

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}, scale={self.scale}, zero_point={self.zero_point}")
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias() is None:
            s += ", bias=False"
        return s

    def set_weight_bias(self, w, b):
        self._packed = (w, b)

    def weight(self):
        return self._packed[0]

    def bias(self):
        return self._packed[1]

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "weight"], destination[prefix + "bias"] = self._packed
        destination[prefix + "scale"] = ember.tensor(self.scale)
        destination[prefix + "zero_point"] = ember.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        self.set_weight_bias(state_dict.pop(prefix + "weight"), state_dict.pop(prefix + "bias"))
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, x):
        if not getattr(x, "is_quantized", False):
            raise NotImplementedError(
                "Could not run 'quantized::conv2d' with arguments from the 'CPU' backend: "
                "QuantizedConv2d takes a quantized input (put a QuantStub before it)")
        if x.ndim != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        w, w_scale, w_zp = weight_qparams(self.weight())
        b = self.bias()
        out = qconv2d(x._data, x.q_scale(), x.q_zero_point(), w, w_scale, w_zp,
                      None if b is None else b.detach().numpy(), self.stride, self.padding,
                      self.dilation, self.groups, self.scale, self.zero_point, np.uint8,
                      (0.0, np.inf) if self._RELU else (-np.inf, np.inf))
        return _make(out, ember.quint8, (ember.per_tensor_affine, self.scale, self.zero_point))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """From a prepared float Conv2d (or fused ConvReLU2d): its observed output qparams
        and its weight quantized by the qconfig's weight observer."""
        from ...quantization.quantize import _quantize_weight
        mod, act, wobs, (scale, zp) = _observed(cls, mod)
        q = cls(mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride, mod.padding,
                mod.dilation, mod.groups, mod.bias is not None, mod.padding_mode)
        q.set_weight_bias(_quantize_weight(mod.weight.detach().float(), wobs),
                          None if mod.bias is None else mod.bias.detach())
        q.scale, q.zero_point = float(scale.reshape(-1)[0]), int(zp.reshape(-1)[0])
        return q
