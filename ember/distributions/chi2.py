"""torch.distributions.chi2: Chi2 (implemented in .gamma)."""
from .gamma import Chi2

__all__ = ["Chi2"]
