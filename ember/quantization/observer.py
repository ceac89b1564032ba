"""The pre-torch.ao path of ember.ao.quantization.observer."""
from ..ao.quantization.observer import *  # noqa: F401,F403
