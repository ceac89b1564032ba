"""ember.distributed.tensor: DTensor basics (torch.distributed.tensor) on a 1-D DeviceMesh.

Note: enough of DTensor for distributed checkpointing and FSDP: placements, from_local,
distribute_tensor, to_local, full_tensor, redistribute. See `_api` for what is not there.
"""
from ._api import DTensor, compute_local_shape_and_global_offset, distribute_tensor
from .device_mesh import DeviceMesh, init_device_mesh
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "DeviceMesh", "Partial", "Placement", "Replicate", "Shard",
           "compute_local_shape_and_global_offset", "distribute_tensor", "init_device_mesh"]
