"""torch.distributions.dirichlet: Dirichlet (implemented in .gamma)."""
from .gamma import Dirichlet

__all__ = ["Dirichlet"]
