"""torch.distributions.bernoulli: Bernoulli (implemented in .discrete)."""
from .discrete import Bernoulli

__all__ = ["Bernoulli"]
