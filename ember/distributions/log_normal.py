"""torch.distributions.log_normal: LogNormal (implemented in .transformed_family)."""
from .transformed_family import LogNormal

__all__ = ["LogNormal"]
