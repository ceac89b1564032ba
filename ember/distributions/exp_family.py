"""torch.distributions.exp_family: ExponentialFamily (implemented in .distribution)."""
from .distribution import ExponentialFamily

__all__ = ["ExponentialFamily"]
