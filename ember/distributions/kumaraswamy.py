"""torch.distributions.kumaraswamy (implemented in .heavy_tails)."""
from .heavy_tails import Kumaraswamy

__all__ = ["Kumaraswamy"]
