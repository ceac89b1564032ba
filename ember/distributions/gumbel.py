"""torch.distributions.gumbel: Gumbel (implemented in .transformed_family)."""
from .transformed_family import Gumbel

__all__ = ["Gumbel"]
