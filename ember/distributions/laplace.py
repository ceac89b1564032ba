"""torch.distributions.laplace: Laplace (implemented in .continuous)."""
from .continuous import Laplace

__all__ = ["Laplace"]
