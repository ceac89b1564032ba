"""DTensor: a global tensor held as one local piece per rank of a 1-D DeviceMesh.

Note: ember's DTensor is a container, not an ember.Tensor subclass: it carries the local
piece, the mesh, the placements and the global shape, and moves data between placements
with collectives (`full_tensor`, `redistribute`). That is what distributed checkpointing and
FSDP's sharded state dicts need. Arithmetic and other tensor ops on DTensors are not
implemented and raise NotImplementedError naming the op.
"""
import numpy as np

from .device_mesh import DeviceMesh
from .placement_types import Placement, Replicate, Shard, chunk_bounds

__all__ = ["DTensor", "distribute_tensor", "compute_local_shape_and_global_offset"]


def _dist():
    from ... import distributed
    return distributed


def _check(mesh, placements):
    if not isinstance(mesh, DeviceMesh):
        raise TypeError(f"expected a DeviceMesh, got {type(mesh).__name__}")
    placements = tuple(placements) if placements is not None else (Replicate(),)
    if len(placements) != mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! "
                         f"Found placements length: {len(placements)}, and device_mesh.ndim: "
                         f"{mesh.ndim}.")
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"expected a Placement, got {type(p).__name__}")
        if p.is_partial():
            raise NotImplementedError("DTensor: Partial placements are not implemented in ember")
    return placements


def compute_local_shape_and_global_offset(global_shape, mesh, placements):
    """This rank's local shape and its offset in the global tensor (torch's helper name)."""
    shape, offset = list(global_shape), [0] * len(global_shape)
    rank = mesh.get_local_rank()
    for p in placements:
        if isinstance(p, Shard):
            start, length = chunk_bounds(global_shape[p.dim], mesh.size(), rank)
            shape[p.dim], offset[p.dim] = length, start
    return tuple(shape), tuple(offset)


def _norm_dims(placements, ndim):
    out = []
    for p in placements:
        if isinstance(p, Shard):
            d = p.dim + ndim if p.dim < 0 else p.dim
            if not 0 <= d < max(ndim, 1):
                raise IndexError(f"Shard(dim={p.dim}) is out of range for a {ndim}-D tensor")
            p = Shard(d)
        out.append(p)
    return tuple(out)


class DTensor:
    """A distributed tensor (torch.distributed.tensor.DTensor), see the module note."""

    def __init__(self, local_tensor, device_mesh, placements, shape, *, requires_grad=False):
        self._local_tensor = local_tensor
        self._spec_mesh = device_mesh
        self._placements = tuple(placements)
        self._global_shape = tuple(int(s) for s in shape)
        self.requires_grad = requires_grad

    # -- construction -------------------------------------------------------
    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False,
                   shape=None, stride=None):
        """Wrap this rank's piece; without `shape` the global shape is all-gathered."""
        mesh = device_mesh if device_mesh is not None else _default_mesh()
        placements = _norm_dims(_check(mesh, placements), local_tensor.dim())
        if shape is None:
            shape = list(local_tensor.shape)
            for p in placements:
                if isinstance(p, Shard):
                    shape[p.dim] = sum(_gather_objects(mesh, local_tensor.shape[p.dim]))
        if run_check:
            for p in placements:
                if isinstance(p, Replicate):
                    _dist().broadcast(local_tensor, src=mesh._ranks[0], group=mesh.get_group())
        return DTensor(local_tensor, mesh, placements, shape,
                       requires_grad=local_tensor.requires_grad)

    # -- torch's attributes ---------------------------------------------------
    @property
    def placements(self):
        return self._placements

    @property
    def device_mesh(self):
        return self._spec_mesh

    @property
    def shape(self):
        import ember
        return ember.Size(self._global_shape)

    def size(self, dim=None):
        return self.shape if dim is None else self._global_shape[dim]

    def dim(self):
        return len(self._global_shape)

    ndim = property(dim)

    def numel(self):
        return int(np.prod(self._global_shape, dtype=np.int64))

    @property
    def dtype(self):
        return self._local_tensor.dtype

    @property
    def device(self):
        return self._local_tensor.device

    def to_local(self, *, grad_placements=None):
        return self._local_tensor

    def full_tensor(self, *, grad_placements=None):
        """The whole tensor on every rank (all-gather of the shards)."""
        return self.redistribute(self._spec_mesh, [Replicate()])._local_tensor

    def redistribute(self, device_mesh=None, placements=None, *, async_op=False):
        """Move to `placements` on the same mesh: gather (Shard→Replicate), slice, or both."""
        mesh = device_mesh if device_mesh is not None else self._spec_mesh
        if mesh != self._spec_mesh:
            raise NotImplementedError("DTensor.redistribute onto a different DeviceMesh")
        placements = _norm_dims(_check(mesh, placements), self.dim())
        if placements == self._placements:
            return self
        full = self._local_tensor
        if isinstance(self._placements[0], Shard):
            full = _all_gather_dim(self._local_tensor, self._placements[0].dim,
                                   self._global_shape, mesh)
        local = _local_piece(full, mesh, placements)
        return DTensor(local, mesh, placements, self._global_shape,
                       requires_grad=self.requires_grad)

    def __repr__(self):
        return (f"DTensor(local_tensor={self._local_tensor!r}, device_mesh={self._spec_mesh!r}, "
                f"placements={self._placements!r})")

    def __getattr__(self, name):
        import ember
        if name.startswith("_") or not hasattr(ember.Tensor, name):
            raise AttributeError(f"'DTensor' object has no attribute '{name}'")
        raise NotImplementedError(
            f"DTensor.{name}: ember's DTensor implements placement and data movement only "
            f"(to_local, full_tensor, redistribute); operator {name!r} is not implemented")


def _not_implemented(op):
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"DTensor: operator {op!r} is not implemented in ember (DTensor supports "
            f"to_local, full_tensor and redistribute only)")
    method.__name__ = op
    return method


for _op in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
            "__truediv__", "__rtruediv__", "__matmul__", "__rmatmul__", "__neg__", "__pow__",
            "__getitem__", "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
            "__lt__", "__le__", "__gt__", "__ge__", "__abs__", "__array__"):
    setattr(DTensor, _op, _not_implemented(_op))


def _default_mesh():
    dist = _dist()
    from .device_mesh import init_device_mesh
    return init_device_mesh("cpu", (dist.get_world_size() if dist.is_initialized() else 1,))


def _gather_objects(mesh, obj):
    dist = _dist()
    if mesh.size() == 1 or not dist.is_initialized():
        return [obj]
    out = [None] * mesh.size()
    dist.all_gather_object(out, obj, group=mesh.get_group())
    return out


def _local_piece(full, mesh, placements):
    """This rank's piece of `full` (a contiguous copy for shards, `full` when replicated)."""
    p = placements[0]
    if isinstance(p, Shard):
        start, length = chunk_bounds(full.shape[p.dim], mesh.size(), mesh.get_local_rank())
        return full.narrow(p.dim, start, length).contiguous().clone()
    return full


def _all_gather_dim(local, dim, global_shape, mesh):
    """Concatenate every rank's piece along `dim` (uneven pieces padded for the gather)."""
    import ember
    world = mesh.size()
    if world == 1:
        return local
    n = global_shape[dim]
    step = -(-n // world) if n else 0
    moved = np.moveaxis(np.ascontiguousarray(local.numpy()), dim, 0)
    padded = np.zeros((step,) + moved.shape[1:], dtype=moved.dtype)
    padded[:moved.shape[0]] = moved
    out = ember.from_numpy(np.empty((world * step,) + moved.shape[1:], dtype=moved.dtype))
    _dist().all_gather_into_tensor(out, ember.from_numpy(padded), group=mesh.get_group())
    full = np.ascontiguousarray(np.moveaxis(out.numpy()[:n], 0, dim))
    return ember.from_numpy(full)


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """Split a full tensor into a DTensor: rank `src_data_rank`'s data is broadcast first."""
    import ember
    mesh = device_mesh if device_mesh is not None else _default_mesh()
    placements = _norm_dims(_check(mesh, placements), tensor.dim())
    full = tensor.detach()
    dist = _dist()
    if src_data_rank is not None and mesh.size() > 1 and dist.is_initialized():
        full = ember.from_numpy(np.ascontiguousarray(full.numpy()).copy())
        dist.broadcast(full, src=mesh._ranks[src_data_rank], group=mesh.get_group())
    local = _local_piece(full, mesh, placements)
    if local is full and full is tensor:
        local = full.detach()
    local.requires_grad_(tensor.requires_grad)
    return DTensor(local, mesh, placements, tensor.shape, requires_grad=tensor.requires_grad)
