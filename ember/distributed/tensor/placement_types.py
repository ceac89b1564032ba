"""Placements of a DTensor on a 1-D DeviceMesh (torch.distributed.tensor.placement_types).

Note: `Shard(dim)` splits a dimension the way `torch.chunk` does (chunk = ceil(n / world);
trailing ranks may hold fewer rows or none), so uneven shards agree with PyTorch's DTensor.
"""

__all__ = ["Placement", "Shard", "Replicate", "Partial", "chunk_bounds"]


def chunk_bounds(size, world, rank):
    """(start, length) of `rank`'s piece when `size` rows are torch.chunk-ed over `world`."""
    step = -(-size // world) if size else 0
    start = min(rank * step, size)
    return start, max(0, min(start + step, size) - start)


class Placement:
    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False

    def is_partial(self):
        return False


class Shard(Placement):
    def __init__(self, dim):
        self.dim = dim

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    def __eq__(self, other):
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self):
        return hash(("Shard", self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"


class Replicate(Placement):
    def is_replicate(self):
        return True

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return hash("Replicate")

    def __repr__(self):
        return "Replicate()"


class Partial(Placement):
    """Pending-reduction placement; only its name exists here (no op produces one)."""

    def __init__(self, reduce_op="sum"):
        self.reduce_op = reduce_op

    def is_partial(self):
        return True

    def __repr__(self):
        return f"Partial({self.reduce_op})"
