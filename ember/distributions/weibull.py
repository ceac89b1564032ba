"""torch.distributions.weibull (implemented in .heavy_tails)."""
from .heavy_tails import Weibull

__all__ = ["Weibull"]
