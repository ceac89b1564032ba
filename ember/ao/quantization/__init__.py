"""ember.ao.quantization: PyTorch's torch.ao.quantization (a flat list of re-exports)."""
from ._qtensor import (QuantizedTensor, quantize_per_tensor, quantize_per_channel,  # noqa: F401
                       quantize_per_tensor_dynamic, dequantize)
from .observer import *  # noqa: F401,F403
from .fake_quantize import *  # noqa: F401,F403
