"""ember.nn: modules, parameters, functional, init and utils (torch.nn's layout)."""
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from . import functional  # noqa: F401,E402
from . import init, utils  # noqa: F401,E402
