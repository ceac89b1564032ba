"""The pre-torch.ao path of ember.ao.quantization.qconfig."""
from ..ao.quantization.qconfig import *  # noqa: F401,F403
