"""torch.distributions.studentT: StudentT (implemented in .gamma)."""
from .gamma import StudentT

__all__ = ["StudentT"]
