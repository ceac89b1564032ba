"""The pre-torch.ao path of ember.ao.quantization.quantize."""
from ..ao.quantization.quantize import *  # noqa: F401,F403
