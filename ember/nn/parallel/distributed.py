"""DistributedDataParallel: one model replica per process, gradients averaged in backward.

Note: construction broadcasts parameters and buffers from rank 0 (coalesced per dtype);
forward optionally re-broadcasts buffers (BatchNorm running stats) and, with
`find_unused_parameters`, walks the output's autograd graph to mark parameters that
will get no gradient; the `_reducer.Reducer` all-reduces gradient buckets during
backward. DDP is a `Joinable`, so `with Join([ddp]):` (or `ddp.join()`) handles ranks
with fewer batches exactly as PyTorch does.
"""
import contextlib

import numpy as np

from ...distributed.algorithms.join import Join, JoinHook, Joinable
from ..modules.module import Module
from ._reducer import Reducer

__all__ = ["DistributedDataParallel"]


def _dist():
    from ... import distributed
    return distributed


def _broadcast_coalesced(tensors, src, group):
    """Broadcast `tensors` from `src` as one flat buffer per dtype."""
    import ember
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    for dtype, ts in by_dtype.items():
        flat = ember.from_numpy(np.concatenate([np.ascontiguousarray(t._data).reshape(-1)
                                                for t in ts]))
        _dist().broadcast(flat, src=src, group=group)
        off = 0
        for t in ts:
            n = t.numel()
            t._data[...] = flat._data[off:off + n].reshape(t._data.shape)
            t._bump()
            off += n


class _DDPJoinHook(JoinHook):
    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        self.ddp._divide_by_initial_world_size = divide_by_initial_world_size
        super().__init__()

    def main_hook(self):
        ddp = self.ddp
        ddp._check_and_sync_module_buffers()
        should_sync_backwards = ddp._check_global_requires_backward_grad_sync(
            is_joined_rank=True)
        ddp.require_forward_param_sync = should_sync_backwards
        if not should_sync_backwards:
            return
        ddp.reducer.shadow_backward()

    def post_hook(self, is_last_joiner):
        self.ddp._sync_final_model(is_last_joiner)


_ACTIVE_DDP = []      # DDP modules whose forward is running (innermost last)


class DistributedDataParallel(Module, Joinable):
    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        Module.__init__(self)
        Joinable.__init__(self)
        dist = _dist()
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if mixed_precision is not None or device_mesh is not None:
            raise NotImplementedError("DistributedDataParallel: mixed_precision and "
                                      "device_mesh are not supported by ember")
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.process_group = process_group if process_group is not None else \
            dist.distributed_c10d._default()
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.broadcast_buffers = broadcast_buffers if broadcast_buffers is not None else True
        self.forward_sync_buffers = self.broadcast_buffers if forward_sync_buffers is None \
            else forward_sync_buffers
        self.find_unused_parameters = find_unused_parameters or static_graph
        self.static_graph = static_graph
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._divide_by_initial_world_size = True
        self.parameters_to_ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore",
                                                ()))
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb)
                                    * 1024 * 1024)
        self._distributed_rank = dist.get_rank(self.process_group)
        self._module_copies = None
        if init_sync:
            _broadcast_coalesced(self._params_and_buffers(), self._global(0),
                                 self.process_group)
        self.reducer = Reducer(params, self.process_group, self.bucket_bytes_cap,
                               gradient_as_bucket_view, self.find_unused_parameters)

    # ----------------------------------------------------------------- helpers
    def _global(self, group_rank):
        return _dist().get_global_rank(self.process_group, group_rank)

    def _params_and_buffers(self):
        out = [p for n, p in self.module.named_parameters() if n not in self.parameters_to_ignore]
        return out + self._buffers_to_sync()

    def _buffers_to_sync(self):
        return [b for n, b in self.module.named_buffers()
                if b is not None and n not in self.parameters_to_ignore]

    def _find_common_rank(self, input_rank, rank_cond):
        import ember
        dist = _dist()
        t = ember.tensor([input_rank if rank_cond else -1])
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.process_group)
        if t.item() == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process.")
        return int(t.item())

    def will_sync_module_buffers(self):
        return (self.require_forward_param_sync and self.forward_sync_buffers
                and len(self._buffers_to_sync()) > 0)

    def _check_sync_bufs_pre_fwd(self):
        return self.will_sync_module_buffers()

    def _sync_buffers(self):
        rank = self._find_common_rank(self._distributed_rank, True) \
            if self._join_config.enable else 0
        _broadcast_coalesced(self._buffers_to_sync(), self._global(rank), self.process_group)

    def _check_and_sync_module_buffers(self):
        if self._check_sync_bufs_pre_fwd():
            rank = self._find_common_rank(self._distributed_rank, False)
            _broadcast_coalesced(self._buffers_to_sync(), self._global(rank),
                                 self.process_group)

    def _sync_final_model(self, is_last_joiner):
        self._authoritative_rank = self._find_common_rank(self._distributed_rank,
                                                          is_last_joiner)
        _broadcast_coalesced(self._params_and_buffers(), self._global(self._authoritative_rank),
                             self.process_group)

    def _check_global_requires_backward_grad_sync(self, is_joined_rank):
        import ember
        if not is_joined_rank and self.require_backward_grad_sync:
            t = ember.ones(1)
        else:
            t = ember.zeros(1)
        work = _dist().all_reduce(t, group=self.process_group, async_op=True)
        if is_joined_rank:
            work.wait()
            return t.item() != 0
        return work

    def _unused_parameters(self, output):
        """Parameters the autograd graph of `output` does not reach."""
        from ..._tensor import Tensor
        seen, stack, reached = set(), [], set()

        def collect(o):
            if isinstance(o, Tensor):
                if o._grad_fn is not None:
                    stack.append(o._grad_fn)
                elif o.requires_grad:
                    reached.add(id(o))
            elif isinstance(o, (list, tuple)):
                for x in o:
                    collect(x)
            elif isinstance(o, dict):
                for x in o.values():
                    collect(x)
        collect(output)
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            var = getattr(node, "variable", None)
            if var is not None:
                reached.add(id(var))
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        return [p for p in self.reducer.params if id(p) not in reached]

    @staticmethod
    def _get_active_ddp_module():
        """The DDP module whose forward is running (what ember.compile's DDPOptimizer reads
        the bucket size from), or None."""
        return _ACTIVE_DDP[-1] if _ACTIVE_DDP else None

    # ----------------------------------------------------------------- forward
    def forward(self, *inputs, **kwargs):
        import ember
        grad_sync = ember.is_grad_enabled() and self.require_backward_grad_sync
        if grad_sync and self.reducer.require_finalize:
            from ._reducer import _UNFINISHED
            raise RuntimeError(_UNFINISHED)
        Join.notify_join_context(self)
        if self._check_sync_bufs_pre_fwd():
            self._sync_buffers()
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)
        _ACTIVE_DDP.append(self)          # ember.compile splits graphs at bucket boundaries
        try:
            output = self.module(*inputs, **kwargs)
        finally:
            _ACTIVE_DDP.pop()
        if grad_sync:
            self.require_forward_param_sync = True
            unused = self._unused_parameters(output) if self.find_unused_parameters else []
            self.reducer.prepare_for_backward(unused)
        else:
            self.require_forward_param_sync = False
            self.reducer.expect_hooks = False
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Accumulate gradients locally; the first backward after the block all-reduces."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook):
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        if self.reducer.comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        self.reducer.comm_hook, self.reducer.comm_state = hook, state

    def _set_static_graph(self):
        self.static_graph = True
        self.find_unused_parameters = self.reducer.find_unused = True

    # ----------------------------------------------------------------- join
    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        from ... import _device
        return _device.CPU

    @property
    def join_process_group(self):
        return self.process_group

    def state_dict(self, *args, **kwargs):
        return Module.state_dict(self, *args, **kwargs)
