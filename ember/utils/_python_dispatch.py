"""torch.utils._python_dispatch: PyTorch's import path for TorchDispatchMode.

Note: the machinery lives in the core (ember/_modes.py, ember/_dispatch.py); this
module re-exports it so code written against PyTorch's path works unchanged.
"""
from .._modes import (TorchDispatchMode, _disable_current_modes,  # noqa: F401
                      _get_current_dispatch_mode, _get_current_dispatch_mode_stack,
                      _len_torch_dispatch_stack, _pop_mode, _pop_mode_temporarily, _push_mode,
                      is_in_torch_dispatch_mode)

__all__ = ["TorchDispatchMode", "_get_current_dispatch_mode", "_get_current_dispatch_mode_stack",
           "is_in_torch_dispatch_mode", "_disable_current_modes", "_push_mode", "_pop_mode",
           "_pop_mode_temporarily", "_len_torch_dispatch_stack"]
