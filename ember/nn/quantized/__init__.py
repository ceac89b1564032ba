"""ember.nn.quantized: the pre-torch.ao path of the quantized modules."""
from ...ao.nn.quantized import *  # noqa: F401,F403
from ...ao.nn.quantized import dynamic  # noqa: F401
