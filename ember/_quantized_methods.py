"""The quantized-tensor methods on a dense tensor, with PyTorch's answers for a tensor that
is not quantized: `dequantize()` is the tensor itself, the quantizer getters have no CPU
kernel. ember.ao.quantization's QuantizedTensor overrides them all."""

_GETTERS = ("int_repr", "q_scale", "q_zero_point", "q_per_channel_scales",
            "q_per_channel_zero_points", "q_per_channel_axis", "qscheme")


def _no_cpu_kernel(name):
    def method(self):
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the 'CPU' backend: the tensor "
            "is not quantized (ember.quantize_per_tensor makes a quantized tensor)")
    method.__name__ = name
    return method


def _dequantize(self):
    """A tensor that is not quantized dequantizes to itself."""
    return self


METHODS = {"dequantize": _dequantize, **{n: _no_cpu_kernel(n) for n in _GETTERS}}
