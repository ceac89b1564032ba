"""ember.nn: modules, parameters, functional, init and utils (torch.nn's layout)."""
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from . import functional  # noqa: F401,E402
from . import init  # noqa: F401,E402
import importlib as _importlib  # noqa: E402

# `from .modules import *` binds nn.modules.utils (the _pair helpers) as `utils`, which
# `from . import utils` would then return: load nn.utils (clip_grad_norm_, rnn, ...) by name.
utils = _importlib.import_module(__name__ + ".utils")
# the same for nn.attention (sdpa_kernel, SDPBackend) over nn.modules.attention
attention = _importlib.import_module(__name__ + ".attention")


def __getattr__(name):
    """nn.parallel / nn.DataParallel load on first use (they pull in ember.distributed)."""
    if name in ("parallel", "DataParallel"):
        parallel = _importlib.import_module(__name__ + ".parallel")
        return parallel if name == "parallel" else parallel.DataParallel
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
