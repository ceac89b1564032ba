"""torch.distributions.independent: Independent (implemented in .wrappers)."""
from .wrappers import Independent

__all__ = ["Independent"]
