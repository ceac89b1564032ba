"""torch.distributions.binomial: Binomial (implemented in .discrete)."""
from .discrete import Binomial

__all__ = ["Binomial"]
