"""The deprecated torch.<device>.amp spellings (torch.cpu.amp, torch.cuda.amp): one factory
per class so each device package is a one-line alias of torch.amp with the device bound."""
import warnings

from .autocast_mode import autocast as _autocast
from .grad_scaler import GradScaler as _GradScaler


def _deprecated(device, name):
    warnings.warn(f"`torch.{device}.amp.{name}(args...)` is deprecated. Please use "
                  f"`torch.amp.{name}('{device}', args...)` instead.", FutureWarning,
                  stacklevel=3)


def device_autocast(device):
    """torch.<device>.amp.autocast(...): torch.amp.autocast(device, ...)."""

    class autocast(_autocast):
        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            _deprecated(device, "autocast")
            kw = {} if dtype is None else {"dtype": dtype}
            super().__init__(device, enabled=enabled, cache_enabled=cache_enabled, **kw)

    autocast.__module__ = f"ember.{device}.amp.autocast_mode"
    autocast.__qualname__ = "autocast"
    autocast.__doc__ = f'torch.{device}.amp.autocast(...): torch.amp.autocast("{device}", ...).'
    return autocast


def device_grad_scaler(device):
    """torch.<device>.amp.GradScaler(...): torch.amp.GradScaler(device, ...)."""

    class GradScaler(_GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            _deprecated(device, "GradScaler")
            super().__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval,
                             enabled=enabled)

    GradScaler.__module__ = f"ember.{device}.amp.grad_scaler"
    GradScaler.__qualname__ = "GradScaler"
    GradScaler.__doc__ = (f'torch.{device}.amp.GradScaler(...): '
                          f'torch.amp.GradScaler("{device}", ...).')
    return GradScaler
