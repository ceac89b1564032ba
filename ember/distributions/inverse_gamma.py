"""torch.distributions.inverse_gamma (implemented in .heavy_tails)."""
from .heavy_tails import InverseGamma

__all__ = ["InverseGamma"]
