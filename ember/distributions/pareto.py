"""torch.distributions.pareto (implemented in .heavy_tails)."""
from .heavy_tails import Pareto

__all__ = ["Pareto"]
