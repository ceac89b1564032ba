"""ember.amp: automatic mixed precision (autocast + GradScaler), as torch.amp."""
from .autocast_mode import (autocast, is_autocast_available, custom_fwd, custom_bwd,
                            is_autocast_enabled, get_autocast_dtype)
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]
