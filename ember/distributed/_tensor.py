"""torch 2.1's name for ember.distributed.tensor (torch.distributed._tensor)."""
from .tensor import *  # noqa: F401,F403
from .tensor import __all__  # noqa: F401
