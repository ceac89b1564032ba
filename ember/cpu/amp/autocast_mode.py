"""torch.cpu.amp.autocast_mode: autocast with device_type="cpu"."""
import warnings

from ...amp import autocast as _autocast

__all__ = ["autocast"]


class autocast(_autocast):
    """torch.cpu.amp.autocast(...): torch.amp.autocast("cpu", ...)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        kw = {} if dtype is None else {"dtype": dtype}
        super().__init__("cpu", enabled=enabled, cache_enabled=cache_enabled, **kw)
