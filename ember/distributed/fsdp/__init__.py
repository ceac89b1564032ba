"""ember.distributed.fsdp: fully sharded data parallel (torch.distributed.fsdp).

Note: both APIs share one engine (`_unit`): FSDP2's `fully_shard` and FSDP1's
`FullyShardedDataParallel` wrapper with ShardingStrategy FULL_SHARD / SHARD_GRAD_OP /
NO_SHARD. Parameters are sharded per parameter along dim 0.
"""
from ._fully_shard import FSDPModule, fully_shard
from ._unit import ShardingStrategy
from .fully_sharded_data_parallel import (BackwardPrefetch, CPUOffload, FullStateDictConfig,
                                          FullyShardedDataParallel, MixedPrecision,
                                          ShardedStateDictConfig, StateDictType)
from .wrap import ModuleWrapPolicy

__all__ = ["BackwardPrefetch", "CPUOffload", "FSDPModule", "FullStateDictConfig",
           "FullyShardedDataParallel", "MixedPrecision", "ModuleWrapPolicy",
           "ShardedStateDictConfig", "ShardingStrategy", "StateDictType", "fully_shard"]
