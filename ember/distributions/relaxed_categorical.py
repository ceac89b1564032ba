"""torch.distributions.relaxed_categorical (implemented in .transformed_family)."""
from .transformed_family import ExpRelaxedCategorical, RelaxedOneHotCategorical

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]
