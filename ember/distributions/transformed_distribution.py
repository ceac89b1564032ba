"""torch.distributions.transformed_distribution (implemented in .wrappers)."""
from .wrappers import TransformedDistribution

__all__ = ["TransformedDistribution"]
