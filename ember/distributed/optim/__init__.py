"""ember.distributed.optim: DistributedOptimizer over functional optimizers."""
from .optimizer import DistributedOptimizer

__all__ = ["DistributedOptimizer"]
