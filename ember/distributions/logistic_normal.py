"""torch.distributions.logistic_normal (implemented in .heavy_tails)."""
from .heavy_tails import LogisticNormal

__all__ = ["LogisticNormal"]
