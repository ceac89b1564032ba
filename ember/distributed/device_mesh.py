"""torch.distributed.device_mesh: DeviceMesh and init_device_mesh (from ember's DTensor)."""
from .tensor.device_mesh import DeviceMesh, init_device_mesh

__all__ = ["DeviceMesh", "init_device_mesh"]
