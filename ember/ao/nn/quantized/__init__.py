"""ember.ao.nn.quantized: quantized modules (torch.ao.nn.quantized)."""
from .linear import Linear, LinearPackedParams  # noqa: F401
from .modules import Quantize, DeQuantize  # noqa: F401
from . import dynamic  # noqa: F401
from .conv import Conv2d  # noqa: F401,E402
from .functional_modules import FloatFunctional, QFunctional  # noqa: F401,E402
