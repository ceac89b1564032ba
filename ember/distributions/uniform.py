"""torch.distributions.uniform: Uniform (implemented in .continuous)."""
from .continuous import Uniform

__all__ = ["Uniform"]
