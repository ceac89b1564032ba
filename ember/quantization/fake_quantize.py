"""The pre-torch.ao path of ember.ao.quantization.fake_quantize."""
from ..ao.quantization.fake_quantize import *  # noqa: F401,F403
