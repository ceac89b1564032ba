"""The autograd function behind SyncBatchNorm (statistics and gradients across ranks).

Note: forward all-gathers each rank's (mean, biased var, count) per channel and combines
them like PyTorch's batch_norm_gather_stats_with_counts; backward all-reduces the two
per-channel sums the input gradient needs. Weight/bias gradients stay local (DDP
averages them). Written in ember ops, per the design rule for backward formulas.
"""
from ...autograd.function import Function

__all__ = ["sync_batch_norm"]


def _reduce_dims(x):
    return [0] + list(range(2, x.dim()))


def _bshape(x):
    return [1, x.size(1)] + [1] * (x.dim() - 2)


class _SyncBatchNormFn(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps, momentum, group):
        import ember
        from ... import distributed as dist
        dims, shape, C = _reduce_dims(x), _bshape(x), x.size(1)
        count = x.numel() // C
        if count == 0:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {list(x.shape)}")
        xf = x.float()
        mean = xf.mean(dim=dims)
        var = xf.var(dim=dims, unbiased=False)
        stats = ember.cat([mean, var, ember.full((1,), float(count))])
        world = dist.get_world_size(group)
        gathered = ember.zeros(world, 2 * C + 1)
        dist.all_gather_into_tensor(gathered, stats, group=group)
        means, vars_, counts = gathered[:, :C], gathered[:, C:2 * C], gathered[:, 2 * C:]
        total = counts.sum()
        gmean = (means * counts).sum(0) / total
        gvar = ((vars_ + (means - gmean) ** 2) * counts).sum(0) / total
        invstd = (gvar + eps).rsqrt()
        if running_mean is not None:
            n = float(total.item())
            running_mean.mul_(1 - momentum).add_(gmean.to(running_mean.dtype) * momentum)
            unbiased = gvar * (n / (n - 1)) if n > 1 else gvar
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
        y = (xf - gmean.view(shape)) * invstd.view(shape)
        if weight is not None:
            y = y * weight.view(shape)
        if bias is not None:
            y = y + bias.view(shape)
        ctx.save_for_backward(x, weight, gmean, invstd)
        ctx.total, ctx.group = total, group
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        import ember
        from ... import distributed as dist
        x, weight, mean, invstd = ctx.saved_tensors
        dims, shape, C = _reduce_dims(x), _bshape(x), x.size(1)
        dy = grad_output.float()
        xmu = x.float() - mean.view(shape)
        sum_dy = dy.sum(dims)
        sum_dy_xmu = (dy * xmu).sum(dims)
        grad_weight = sum_dy_xmu * invstd if weight is not None else None
        grad_bias = sum_dy.clone() if weight is not None else None
        grad_input = None
        if ctx.needs_input_grad[0]:
            both = ember.cat([sum_dy, sum_dy_xmu])
            dist.all_reduce(both, group=ctx.group)
            mean_dy = both[:C] / ctx.total
            mean_dy_xmu = both[C:] / ctx.total
            scale = invstd if weight is None else invstd * weight.float()
            grad_input = ((dy - mean_dy.view(shape) - xmu * (invstd ** 2).view(shape)
                           * mean_dy_xmu.view(shape)) * scale.view(shape)).to(x.dtype)
        if weight is not None:
            grad_weight = grad_weight.to(weight.dtype) if ctx.needs_input_grad[1] else None
            grad_bias = grad_bias.to(weight.dtype) if ctx.needs_input_grad[2] else None
        return grad_input, grad_weight, grad_bias, None, None, None, None, None


def sync_batch_norm(x, weight, bias, running_mean, running_var, eps, momentum, group):
    return _SyncBatchNormFn.apply(x, weight, bias, running_mean, running_var, eps, momentum,
                                  group)
