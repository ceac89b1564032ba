"""torch.distributions.mixture_same_family: MixtureSameFamily (implemented in .wrappers)."""
from .wrappers import MixtureSameFamily

__all__ = ["MixtureSameFamily"]
