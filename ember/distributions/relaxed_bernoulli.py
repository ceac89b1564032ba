"""torch.distributions.relaxed_bernoulli (implemented in .transformed_family)."""
from .transformed_family import LogitRelaxedBernoulli, RelaxedBernoulli

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]
