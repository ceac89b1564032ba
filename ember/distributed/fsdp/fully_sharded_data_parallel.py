"""FullyShardedDataParallel (FSDP1's wrapper API) on ember's FSDP units.

Note: the wrapper holds the module as `_fsdp_wrapped_module` (so parameter names carry that
prefix, as with PyTorch's use_orig_params=True); `auto_wrap_policy` wraps matching
submodules in their own FSDP instances first. `state_dict()` follows `state_dict_type`:
FULL_STATE_DICT gives whole tensors, SHARDED_STATE_DICT gives DTensors (Shard(0)) for DCP;
keys have no wrapper prefixes. Not implemented: CPU offload, mixed precision,
summon_full_params, hybrid sharding (each raises NotImplementedError).
"""
import contextlib
import enum
from dataclasses import dataclass

from ...nn.modules.module import Module
from ..tensor import DeviceMesh, init_device_mesh
from ._unit import FSDPState, ShardingStrategy
from .wrap import ModuleWrapPolicy

__all__ = ["BackwardPrefetch", "CPUOffload", "FullyShardedDataParallel", "FullStateDictConfig",
           "MixedPrecision", "ModuleWrapPolicy", "ShardedStateDictConfig", "StateDictType"]


class StateDictType(enum.Enum):
    FULL_STATE_DICT = enum.auto()
    LOCAL_STATE_DICT = enum.auto()
    SHARDED_STATE_DICT = enum.auto()


@dataclass
class FullStateDictConfig:
    offload_to_cpu: bool = False
    rank0_only: bool = False


@dataclass
class ShardedStateDictConfig:
    offload_to_cpu: bool = False


class BackwardPrefetch(enum.Enum):
    """Accepted for compatibility: prefetching changes timing only, never results."""
    BACKWARD_PRE = enum.auto()
    BACKWARD_POST = enum.auto()


@dataclass
class CPUOffload:
    offload_params: bool = False


@dataclass
class MixedPrecision:
    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True


def _mesh(process_group, device_mesh):
    from ... import distributed as dist
    if device_mesh is not None:
        return device_mesh
    if process_group is None or process_group is dist.group.WORLD:
        return init_device_mesh("cpu", (dist.get_world_size() if dist.is_initialized() else 1,))
    mesh = DeviceMesh("cpu", dist.get_process_group_ranks(process_group), _init_backend=False)
    mesh._group = process_group
    return mesh


class FullyShardedDataParallel(Module):
    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None,
                 auto_wrap_policy=None, backward_prefetch=None, mixed_precision=None,
                 ignored_modules=None, param_init_fn=None, device_id=None,
                 sync_module_states=False, forward_prefetch=False, limit_all_gathers=True,
                 use_orig_params=False, ignored_states=None, device_mesh=None):
        super().__init__()
        if cpu_offload is not None and not cpu_offload.offload_params:
            cpu_offload = None                      # ember runs on the CPU already
        if mixed_precision is not None and not any(
                (mixed_precision.param_dtype, mixed_precision.reduce_dtype,
                 mixed_precision.buffer_dtype)):
            mixed_precision = None
        for what, value in (("cpu_offload", cpu_offload), ("mixed_precision", mixed_precision),
                            ("ignored_modules", ignored_modules),
                            ("ignored_states", ignored_states),
                            ("param_init_fn", param_init_fn)):
            if value:
                raise NotImplementedError(f"FullyShardedDataParallel: {what} is not "
                                          f"implemented in ember")
        mesh = _mesh(process_group, device_mesh)
        strategy = sharding_strategy or ShardingStrategy.FULL_SHARD
        if auto_wrap_policy is not None:
            _auto_wrap(module, auto_wrap_policy, dict(process_group=process_group,
                                                      sharding_strategy=strategy,
                                                      device_mesh=mesh))
        self._fsdp_wrapped_module = module
        self.sharding_strategy = strategy
        self._state_dict_type = StateDictType.FULL_STATE_DICT
        object.__setattr__(self, "_fsdp_state", FSDPState(module, mesh, strategy))

    @property
    def module(self):
        return self._fsdp_wrapped_module

    def forward(self, *args, **kwargs):
        return self._fsdp_state.run(self._fsdp_wrapped_module, args, kwargs)

    # -- state dicts ------------------------------------------------------------
    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module, state_dict_type, state_dict_config=None,
                        optim_state_dict_config=None):
        if state_dict_type is StateDictType.LOCAL_STATE_DICT:
            raise NotImplementedError("FSDP: LOCAL_STATE_DICT is not implemented in ember; "
                                      "use SHARDED_STATE_DICT")
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        old = [u._state_dict_type for u in units]
        for u in units:
            u._state_dict_type = state_dict_type
        try:
            yield
        finally:
            for u, t in zip(units, old):
                u._state_dict_type = t

    def _options(self):
        from ..checkpoint.state_dict import StateDictOptions
        return StateDictOptions(
            full_state_dict=self._state_dict_type is StateDictType.FULL_STATE_DICT)

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """FULL_STATE_DICT: whole tensors; SHARDED_STATE_DICT: DTensors (no wrapper prefix).
        Inside a parent's state_dict it behaves as Module.state_dict."""
        if args or destination is not None:
            return super().state_dict(*args, destination=destination, prefix=prefix,
                                      keep_vars=keep_vars)
        from ..checkpoint.state_dict import get_model_state_dict
        return {prefix + k: v for k, v in
                get_model_state_dict(self, options=self._options()).items()}

    def load_state_dict(self, state_dict, strict=True, assign=False):
        from ..checkpoint.state_dict import set_model_state_dict
        opts = self._options()
        opts.strict = strict
        return set_model_state_dict(self, state_dict, options=opts)

    @staticmethod
    def optim_state_dict(model, optim, optim_state_dict=None, group=None):
        from ..checkpoint.state_dict import get_optimizer_state_dict
        opts = model._options() if isinstance(model, FullyShardedDataParallel) else None
        return get_optimizer_state_dict(model, optim, options=opts)

    @staticmethod
    def optim_state_dict_to_load(model, optim, optim_state_dict, is_named_optimizer=False,
                                 load_directly=False, group=None):
        from ..checkpoint.state_dict import _optim_sd_to_load
        sd = _optim_sd_to_load(model, optim, optim_state_dict)
        if load_directly:
            optim.load_state_dict(sd)
        return sd

    @staticmethod
    def summon_full_params(module, recurse=True, writeback=True, rank0_only=False,
                           offload_to_cpu=False, with_grads=False):
        raise NotImplementedError("FSDP.summon_full_params is not implemented in ember; use "
                                  "state_dict_type(FULL_STATE_DICT)")


def _auto_wrap(module, policy, kwargs):
    for name, child in list(module._modules.items()):
        if child is None or isinstance(child, FullyShardedDataParallel):
            continue
        _auto_wrap(child, policy, kwargs)
        n = sum(p.numel() for p in child.parameters())
        if policy(module=child, recurse=False, nonwrapped_numel=n):
            module._modules[name] = FullyShardedDataParallel(child, **kwargs)
