"""torch.cpu.amp: the device-specific autocast/GradScaler spellings (deprecated in PyTorch
in favour of torch.amp.autocast("cpu") / torch.amp.GradScaler("cpu"), which they call)."""
from .autocast_mode import autocast
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler"]
