"""torch.distributions.categorical: Categorical (implemented in .discrete)."""
from .discrete import Categorical

__all__ = ["Categorical"]
