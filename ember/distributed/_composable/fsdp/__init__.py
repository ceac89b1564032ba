"""torch.distributed._composable.fsdp: FSDP2's fully_shard (from ember.distributed.fsdp)."""
from ...fsdp import FSDPModule, fully_shard

__all__ = ["FSDPModule", "fully_shard"]
