"""torch.distributions.negative_binomial (implemented in .counts)."""
from .counts import NegativeBinomial

__all__ = ["NegativeBinomial"]
