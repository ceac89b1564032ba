"""torch.distributions.one_hot_categorical (implemented in .discrete)."""
from .discrete import OneHotCategorical, OneHotCategoricalStraightThrough

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]
