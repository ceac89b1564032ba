"""Quantize / DeQuantize: the modules convert puts where QuantStub / DeQuantStub were."""
import ember
from .... import nn
from ...quantization._qtensor import quantize_per_tensor

__all__ = ["Quantize", "DeQuantize"]


class Quantize(nn.Module):
    """Float -> quantized with fixed (observed) scale and zero point."""

    def __init__(self, scale, zero_point, dtype, factory_kwargs=None):
        super().__init__()
        self.register_buffer("scale", ember.tensor([float(scale)]))
        self.register_buffer("zero_point", ember.tensor([int(zero_point)]))
        self.dtype = dtype

    def forward(self, x):
        return quantize_per_tensor(x, float(self.scale.item()), int(self.zero_point.item()),
                                   self.dtype)

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Quantize(float(scale.reshape(-1)[0]), int(zero_point.reshape(-1)[0]),
                        mod.activation_post_process.dtype)


class DeQuantize(nn.Module):
    """Quantized -> float32."""

    def forward(self, x):
        return x.dequantize()

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return DeQuantize()
