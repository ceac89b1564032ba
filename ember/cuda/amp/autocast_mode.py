"""torch.cuda.amp.autocast_mode: autocast with device_type="cuda"."""
import warnings

from ...amp import autocast as _autocast

__all__ = ["autocast"]


class autocast(_autocast):
    """torch.cuda.amp.autocast(...): torch.amp.autocast("cuda", ...)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        kw = {} if dtype is None else {"dtype": dtype}
        super().__init__("cuda", enabled=enabled, cache_enabled=cache_enabled, **kw)
