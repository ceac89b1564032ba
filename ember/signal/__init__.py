"""ember.signal: torch.signal (window functions)."""
from . import windows

__all__ = ["windows"]
