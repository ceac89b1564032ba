"""torch.distributions.half_normal: HalfNormal (implemented in .transformed_family)."""
from .transformed_family import HalfNormal

__all__ = ["HalfNormal"]
