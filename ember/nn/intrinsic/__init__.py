"""ember.nn.intrinsic: the pre-torch.ao path of ember.ao.nn.intrinsic."""
from ...ao.nn.intrinsic import *  # noqa: F401,F403
from . import quantized  # noqa: F401,E402
