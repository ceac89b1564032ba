"""ember.nn.attention: choosing the scaled_dot_product_attention backend (torch.nn.attention).

Note: the enabled-backend flags are PyTorch's global SDP flags, the ones
`ember.backends.cuda.enable_flash_sdp(...)`/`sdp_kernel(...)` also set (PyTorch's CPU
selection reads those same flags), so `sdpa_kernel` only writes them and restores them.
On CPU the order tried is fixed, as PyTorch's: FLASH_ATTENTION, then MATH; the other
backends are CUDA ones, and the priority list (`set_priority=True`) is kept and reported
but does not change the CPU choice (as in PyTorch).
"""
import contextlib
import enum

from ...backends import cuda as _cuda

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The scaled_dot_product_attention implementations, with PyTorch's values."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value


_FLAG = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
         SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
         SDPBackend.CUDNN_ATTENTION: "cudnn", SDPBackend.OVERRIDEABLE: "overrideable"}
_state = {"overrideable": True,
          "priority": [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION,
                       SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH,
                       SDPBackend.OVERRIDEABLE]}


def _enabled(backend):
    flag = _FLAG[backend]
    return _state[flag] if flag == "overrideable" else _cuda._sdp[flag]


def _cur_sdpa_kernel_backends(with_priority=False):
    """The enabled backends (in priority order when `with_priority`)."""
    order = _state["priority"] if with_priority else list(_FLAG)
    return [b for b in order if _enabled(b)]


def _sdpa_kernel(backends, set_priority=False):
    """Enable exactly `backends`; with `set_priority`, also make their order the priority."""
    for b, flag in _FLAG.items():
        if flag == "overrideable":
            _state[flag] = b in backends
        else:
            _cuda._sdp[flag] = b in backends
    if set_priority:
        rest = [b for b in _state["priority"] if b not in backends]
        _state["priority"] = [b for b in backends if b in _FLAG] + rest


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention may use only `backends` (one
    SDPBackend or a list); the previous flags (and priority) come back on exit."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)
