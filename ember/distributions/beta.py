"""torch.distributions.beta: Beta (implemented in .gamma)."""
from .gamma import Beta

__all__ = ["Beta"]
