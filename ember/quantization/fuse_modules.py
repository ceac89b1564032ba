"""The pre-torch.ao path of ember.ao.quantization.fuse_modules."""
from ..ao.quantization.fuse_modules import *  # noqa: F401,F403
