"""One FSDP unit: shards its module's own parameters and gathers them around forward.

Note: parameters are replaced by their local dim-0 shards (nn.Parameter), so an optimizer
built afterwards steps on shards only and its state is sharded too. Around the module's
forward the shards are all-gathered (differentiably, see `_param`). FULL_SHARD frees the
gathered parameters after forward and gathers them again in backward; ember has no hook to
empty and refill a saved tensor's storage, so a non-root FULL_SHARD unit runs its forward
under reentrant activation checkpointing (the unit's activations are recomputed too; a
call with keyword arguments, which reentrant checkpointing cannot take, keeps the gathered
parameters until backward instead). The
root unit keeps its parameters until backward, as PyTorch's FSDP2 does. SHARD_GRAD_OP keeps
the gathered parameters (held by the autograd graph) until backward; NO_SHARD keeps whole
parameters and all-reduces gradients, like DDP.
"""
import enum
import threading

import ember
from ember.nn.parameter import Parameter

from ._param import ParamInfo, gather_for_compute

__all__ = ["ShardingStrategy", "FSDPState"]


class ShardingStrategy(enum.Enum):
    FULL_SHARD = enum.auto()
    SHARD_GRAD_OP = enum.auto()
    NO_SHARD = enum.auto()
    HYBRID_SHARD = enum.auto()
    _HYBRID_SHARD_ZERO2 = enum.auto()


_depth = threading.local()


def _dist():
    from ... import distributed
    return distributed


def _own_params(module):
    """(submodule, name, param, fqn) of `module`'s tree, skipping subtrees of other FSDP units."""
    out, seen = [], set()

    def walk(m, prefix):
        for name, p in m._parameters.items():
            if p is None or id(p) in seen:
                if p is not None:
                    raise NotImplementedError("FSDP: shared (tied) parameters are not "
                                              "implemented in ember")
                continue
            seen.add(id(p))
            out.append((m, name, p, prefix + name))
        for cname, child in m._modules.items():
            if child is not None and getattr(child, "_fsdp_state", None) is None:
                walk(child, prefix + cname + ".")
    walk(module, "")
    return out


class FSDPState:
    def __init__(self, module, mesh, strategy):
        if strategy in (ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2):
            raise NotImplementedError(f"FSDP: {strategy} needs a 2-D DeviceMesh, which ember "
                                      f"does not implement")
        dist = _dist()
        self.mesh, self.strategy = mesh, strategy
        self.group = mesh.get_group()
        self.world, self.rank = mesh.size(), mesh.get_local_rank()
        self.no_shard = strategy is ShardingStrategy.NO_SHARD
        self.infos = []
        for mod, name, p, fqn in _own_params(module):
            if p.dim() == 0:
                raise NotImplementedError(f"FSDP: sharding the 0-d parameter {name!r}")
            full = p.detach().contiguous().clone()
            if self.world > 1:
                dist.broadcast(full, src=mesh._ranks[0], group=self.group)  # same init
            info = ParamInfo(mod, name, full.shape, self.group, self.world, self.rank, None)
            local = full if self.no_shard else info.local_piece(full).clone()
            shard = Parameter(local, requires_grad=p.requires_grad)
            if not self.no_shard:
                shard._fsdp_spec = (mesh, tuple(full.shape))
            info.shard, info.fqn = shard, fqn
            mod._parameters[name] = shard
            self.infos.append(info)
            del full

    def unshard(self, shards):
        for info, shard in zip(self.infos, shards):
            info.module._parameters[info.name] = gather_for_compute(shard, info, self.no_shard)

    def reshard(self):
        for info in self.infos:
            info.module._parameters[info.name] = info.shard

    def run(self, forward, args, kwargs):
        """Call `forward` with gathered parameters (recomputed in backward for FULL_SHARD)."""
        depth = getattr(_depth, "n", 0)
        shards = [i.shard for i in self.infos]
        recompute = (self.strategy is ShardingStrategy.FULL_SHARD and depth > 0 and not kwargs
                     and ember.is_grad_enabled() and any(s.requires_grad for s in shards))
        _depth.n = depth + 1
        try:
            if recompute:
                from ember.utils.checkpoint import checkpoint
                n = len(shards)

                def body(*xs):
                    self.unshard(xs[:n])
                    try:
                        return forward(*xs[n:])
                    finally:
                        self.reshard()
                return checkpoint(body, *shards, *args, use_reentrant=True)
            self.unshard(shards)
            try:
                return forward(*args, **kwargs)
            finally:
                self.reshard()
        finally:
            _depth.n = depth
