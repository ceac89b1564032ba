"""The collectives of one sharded parameter: all-gather in forward, reduce-scatter in backward.

Note: a parameter is split along dim 0 as torch.chunk does; for the collectives each piece is
padded to ceil(rows / world) rows. `_AllGather` is an autograd Function, so the gradient of
the gathered parameter is reduce-scattered (summed, then divided by the world size) straight
into the local shard's .grad by the ordinary backward pass. Buffers come from ember.empty, so
ember.memory_allocated counts them.
"""
import ember
from ember.autograd import Function

from ..tensor.placement_types import chunk_bounds


def _dist():
    from ... import distributed
    return distributed


class ParamInfo:
    """Where a managed parameter lives: its module, attribute name, global shape, group."""

    def __init__(self, module, name, shape, group, world, rank, shard):
        self.module, self.name, self.shape = module, name, tuple(shape)
        self.group, self.world, self.rank, self.shard = group, world, rank, shard
        rows = self.shape[0]
        self.step = -(-rows // world) if rows else 0
        self.start, self.rows = chunk_bounds(rows, world, rank)

    def local_piece(self, full):
        return full.narrow(0, self.start, self.rows)


def _padded(t, info):
    """`t` (this rank's rows) padded to `info.step` rows, in a counted buffer."""
    if t.shape[0] == info.step:
        return t.contiguous()
    buf = ember.zeros((info.step,) + tuple(t.shape[1:]), dtype=t.dtype)
    if t.shape[0]:
        buf.narrow(0, 0, t.shape[0]).copy_(t)
    return buf


def all_gather_param(shard, info):
    if info.world == 1:
        return shard.detach().clone()
    out = ember.empty((info.world * info.step,) + info.shape[1:], dtype=shard.dtype)
    _dist().all_gather_into_tensor(out, _padded(shard.detach(), info), group=info.group)
    return out.narrow(0, 0, info.shape[0]) if out.shape[0] != info.shape[0] else out


class _AllGather(Function):
    @staticmethod
    def forward(ctx, shard, info, no_shard):
        ctx.info, ctx.no_shard = info, no_shard
        if no_shard:
            return shard.detach().clone()
        return all_gather_param(shard, info)

    @staticmethod
    def backward(ctx, grad):
        info = ctx.info
        grad = grad.detach()
        if info.world == 1:
            return grad, None, None
        if ctx.no_shard:
            g = grad.contiguous().clone()
            _dist().all_reduce(g, group=info.group)
            return g.div_(info.world), None, None
        full = ember.zeros((info.world * info.step,) + info.shape[1:], dtype=grad.dtype)
        full.narrow(0, 0, info.shape[0]).copy_(grad)
        out = ember.empty((info.step,) + info.shape[1:], dtype=grad.dtype)
        _dist().reduce_scatter_tensor(out, full, group=info.group)
        out.div_(info.world)
        return out.narrow(0, 0, info.rows), None, None


def gather_for_compute(shard, info, no_shard):
    """The full parameter, differentiable w.r.t. the shard when it requires grad."""
    if shard.requires_grad and ember.is_grad_enabled():
        return _AllGather.apply(shard, info, no_shard)
    with ember.no_grad():
        return shard.detach() if no_shard else all_gather_param(shard, info)
