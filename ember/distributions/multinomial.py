"""torch.distributions.multinomial (implemented in .counts)."""
from .counts import Multinomial

__all__ = ["Multinomial"]
