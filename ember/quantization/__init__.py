"""ember.quantization: the pre-torch.ao path (`torch.quantization`), as PyTorch keeps it."""
from ..ao.quantization import *  # noqa: F401,F403
