"""torch.distributions.fishersnedecor (implemented in .heavy_tails)."""
from .heavy_tails import FisherSnedecor

__all__ = ["FisherSnedecor"]
