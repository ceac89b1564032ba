"""torch.native_layer_norm / native_batch_norm / native_group_norm: aten's norm entry points.

Why: they return the saved statistics next to the output (mean and 1/std, as aten's
kernels save them for backward), which decomposition and export code reads. Built from the
nn.functional norms plus biased mean/var in ember ops, so autograd flows through.
"""


def _stats(x, dims, eps):
    mean = x.mean(dim=dims, keepdim=True)
    rstd = (x.var(dim=dims, unbiased=False, keepdim=True) + eps).rsqrt()
    return mean, rstd


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(layer_norm(input), mean, rstd); the statistics keep the normalized dims as size 1."""
    from .nn import functional as F
    out = F.layer_norm(input, list(normalized_shape), weight, bias, eps)
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    mean, rstd = _stats(input, dims, eps)
    return out, mean, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    """(batch_norm(input), save_mean, save_invstd); in eval mode the saved ones are empty."""
    from .nn import functional as F
    from .ops.creation import empty
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        return out, empty(0, dtype=input.dtype), empty(0, dtype=input.dtype)
    dims = [d for d in range(input.dim()) if d != 1]
    mean, rstd = _stats(input, dims, eps)
    return out, mean.reshape(-1), rstd.reshape(-1)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(group_norm(input), mean, rstd) with the statistics of shape (N, group)."""
    from .nn import functional as F
    out = F.group_norm(input, group, weight, bias, eps)
    x = input.reshape(N, group, -1)
    mean, rstd = _stats(x, [-1], eps)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


def _native_batch_norm_legit(input, weight, bias, running_mean, running_var=None,
                             training=None, momentum=None, eps=None):
    """native_batch_norm with the two overloads of aten::_native_batch_norm_legit:
    (input, weight, bias, running_mean, running_var, training, momentum, eps) and, with no
    running statistics, (input, weight, bias, training, momentum, eps)."""
    if eps is None:                                # the no_stats overload
        training, momentum, eps = running_mean, running_var, training
        running_mean = running_var = None
    return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)
