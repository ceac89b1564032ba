"""torch.distributions.poisson: Poisson (implemented in .discrete)."""
from .discrete import Poisson

__all__ = ["Poisson"]
