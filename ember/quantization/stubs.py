"""The pre-torch.ao path of ember.ao.quantization.stubs."""
from ..ao.quantization.stubs import *  # noqa: F401,F403
