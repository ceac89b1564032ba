"""ember.nn.quantized.dynamic: the pre-torch.ao path of the dynamic quantized modules."""
from ....ao.nn.quantized.dynamic import *  # noqa: F401,F403
