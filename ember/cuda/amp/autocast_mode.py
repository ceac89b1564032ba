"""torch.cuda.amp.autocast_mode: autocast with device_type="cuda"."""
from ...amp._device_aliases import device_autocast

__all__ = ["autocast"]

autocast = device_autocast("cuda")
