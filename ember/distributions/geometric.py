"""torch.distributions.geometric: Geometric (implemented in .discrete)."""
from .discrete import Geometric

__all__ = ["Geometric"]
