"""fully_shard: FSDP2's per-module API (torch.distributed.fsdp.fully_shard).

Note: `fully_shard(layer)` on each block, then on the root, makes each block one unit: its
parameters become dim-0 shards and are gathered only while the block runs. The module's
class becomes a subclass of FSDPModule, as in PyTorch. As there, `model.state_dict()` gives
DTensors (Shard(0)) for sharded parameters, and `load_state_dict` takes DTensors or full
tensors (this rank's rows are taken).
"""
import functools

from ..tensor import DTensor, Shard, init_device_mesh
from ._unit import FSDPState, ShardingStrategy

__all__ = ["fully_shard", "FSDPModule"]


class FSDPModule:
    """Mixin of modules that `fully_shard` manages."""

    def reshard(self):
        self._fsdp_state.reshard()

    def set_requires_gradient_sync(self, requires_gradient_sync, *, recurse=True):
        if not requires_gradient_sync:
            raise NotImplementedError("FSDP: skipping gradient sync (no_sync) is not "
                                      "implemented in ember")


def fully_shard(module, *, mesh=None, reshard_after_forward=True, shard_placement_fn=None,
                mp_policy=None, offload_policy=None, ignored_params=None):
    if shard_placement_fn is not None or ignored_params:
        raise NotImplementedError("fully_shard: shard_placement_fn / ignored_params are not "
                                  "implemented in ember (parameters are sharded on dim 0)")
    if mp_policy is not None or offload_policy is not None:
        raise NotImplementedError("fully_shard: mp_policy / offload_policy are not "
                                  "implemented in ember")
    if getattr(module, "_fsdp_state", None) is not None:
        return module
    from ... import distributed as dist
    mesh = mesh if mesh is not None else init_device_mesh(
        "cpu", (dist.get_world_size() if dist.is_initialized() else 1,))
    strategy = (ShardingStrategy.FULL_SHARD if reshard_after_forward
                else ShardingStrategy.SHARD_GRAD_OP)
    state = FSDPState(module, mesh, strategy)
    object.__setattr__(module, "_fsdp_state", state)
    forward = module.forward
    object.__setattr__(module, "forward",
                       lambda *args, **kwargs: state.run(forward, args, kwargs))
    module.register_state_dict_post_hook(functools.partial(_to_dtensors, state))
    module._register_load_state_dict_pre_hook(functools.partial(_to_shards, state))
    cls = module.__class__
    module.__class__ = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    return module


def _to_dtensors(state, module, destination, prefix, local_metadata):
    for info in state.infos:
        key = prefix + info.fqn
        spec = getattr(info.shard, "_fsdp_spec", None)
        if spec is not None and key in destination and not isinstance(destination[key], DTensor):
            destination[key] = DTensor.from_local(destination[key], spec[0], [Shard(0)],
                                                  shape=spec[1])
    return destination


def _to_shards(state, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
    for info in state.infos:
        key = prefix + info.fqn
        v = state_dict.get(key)
        if isinstance(v, DTensor):
            state_dict[key] = v.to_local()
        elif v is not None and not state.no_shard and tuple(v.shape) == info.shape:
            state_dict[key] = info.local_piece(v)
