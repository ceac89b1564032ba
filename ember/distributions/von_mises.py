"""torch.distributions.von_mises (implemented in .counts)."""
from .counts import VonMises

__all__ = ["VonMises"]
