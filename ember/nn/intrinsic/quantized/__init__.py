"""ember.nn.intrinsic.quantized: the pre-torch.ao path of ember.ao.nn.intrinsic.quantized."""
from ....ao.nn.intrinsic.quantized import *  # noqa: F401,F403
