"""DeviceMesh / init_device_mesh (torch.distributed.device_mesh), 1-D meshes only.

Note: a 1-D mesh is a list of global ranks plus the process group over them: the whole
world uses the default group, a subset gets `new_group` (a collective, as in PyTorch).
Meshes of more dimensions raise NotImplementedError.
"""
import numpy as np

__all__ = ["DeviceMesh", "init_device_mesh"]


def _dist():
    from ... import distributed
    return distributed


class DeviceMesh:
    def __init__(self, device_type, mesh, *, mesh_dim_names=None, _init_backend=True):
        import ember
        arr = np.asarray(mesh.numpy() if isinstance(mesh, ember.Tensor) else mesh, dtype=np.int64)
        if arr.ndim != 1:
            raise NotImplementedError(
                f"DeviceMesh: only 1-D meshes are implemented in ember, got a mesh of shape "
                f"{tuple(arr.shape)}")
        if str(device_type) not in ("cpu",):
            raise NotImplementedError(f"DeviceMesh: device_type {device_type!r} (only 'cpu')")
        self.device_type = str(device_type)
        self.mesh = ember.from_numpy(arr.copy())
        self._ranks = [int(r) for r in arr]
        self.mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names else None
        dist = _dist()
        world = dist.get_world_size() if dist.is_initialized() else 1
        if self._ranks == list(range(world)):
            self._group = dist.group.WORLD if dist.is_initialized() else None
        elif _init_backend:
            self._group = dist.new_group(self._ranks)
        else:
            self._group = None          # the caller attaches an existing group
        rank = dist.get_rank() if dist.is_initialized() else 0
        self._coordinate = [self._ranks.index(rank)] if rank in self._ranks else None

    @property
    def ndim(self):
        return 1

    @property
    def shape(self):
        return (len(self._ranks),)

    def size(self, mesh_dim=None):
        return len(self._ranks)

    def get_group(self, mesh_dim=None):
        return self._group

    def get_rank(self):
        return _dist().get_rank() if _dist().is_initialized() else 0

    def get_local_rank(self, mesh_dim=None):
        return self._coordinate[0] if self._coordinate is not None else -1

    def get_coordinate(self):
        return self._coordinate

    def __getitem__(self, name):
        if self.mesh_dim_names and name in self.mesh_dim_names:
            return self
        raise KeyError(f"Invalid mesh_dim_name {name!r}; the mesh has {self.mesh_dim_names}")

    def __eq__(self, other):
        return isinstance(other, DeviceMesh) and other._ranks == self._ranks

    def __hash__(self):
        return hash(tuple(self._ranks))

    def __repr__(self):
        return f"DeviceMesh('{self.device_type}', {self._ranks})"


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None):
    """A mesh over ranks 0..prod(mesh_shape)-1 (the default process group must exist)."""
    shape = tuple(mesh_shape)
    if len(shape) != 1:
        raise NotImplementedError(
            f"init_device_mesh: only 1-D meshes are implemented in ember, got {shape}")
    dist = _dist()
    world = dist.get_world_size() if dist.is_initialized() else 1
    if shape[0] != world:
        raise RuntimeError(f"init_device_mesh: mesh_shape {shape} does not match the world "
                           f"size {world}")
    return DeviceMesh(device_type, list(range(shape[0])), mesh_dim_names=mesh_dim_names)
