"""ember.ao.nn.quantized: quantized modules (torch.ao.nn.quantized)."""
from .linear import Linear, LinearPackedParams  # noqa: F401
from .modules import Quantize, DeQuantize  # noqa: F401
from . import dynamic  # noqa: F401
