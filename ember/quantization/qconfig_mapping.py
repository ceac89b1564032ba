"""The pre-torch.ao path of ember.ao.quantization.qconfig_mapping."""
from ..ao.quantization.qconfig_mapping import *  # noqa: F401,F403
