"""torch.distributed.algorithms: Join for uneven inputs, DDP communication hooks."""
from .join import Join, JoinHook, Joinable

__all__ = ["Join", "JoinHook", "Joinable"]
