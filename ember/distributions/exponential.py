"""torch.distributions.exponential: Exponential (implemented in .continuous)."""
from .continuous import Exponential

__all__ = ["Exponential"]
