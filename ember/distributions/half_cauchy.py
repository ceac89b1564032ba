"""torch.distributions.half_cauchy: HalfCauchy (implemented in .transformed_family)."""
from .transformed_family import HalfCauchy

__all__ = ["HalfCauchy"]
