"""torch.distributions.cauchy: Cauchy (implemented in .continuous)."""
from .continuous import Cauchy

__all__ = ["Cauchy"]
