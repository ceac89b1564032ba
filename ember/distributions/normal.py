"""torch.distributions.normal: Normal (implemented in .continuous)."""
from .continuous import Normal

__all__ = ["Normal"]
