"""torch.distributions.continuous_bernoulli (implemented in .counts)."""
from .counts import ContinuousBernoulli

__all__ = ["ContinuousBernoulli"]
