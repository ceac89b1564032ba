"""nn.functional normalization: batch_norm, instance_norm, layer_norm, group_norm,
rms_norm, local_response_norm.

Note: these add torch.nn.functional's Python-level checks (ValueErrors on the batch
size, eps) to the ops in ember/ops/norm.py; local_response_norm is PyTorch's
composite (a zero-padded window sum over channels), written with a loop over the
`size` window offsets, not over elements.
"""
from ...ops import norm as _ops
from ...ops.creation import zeros
from ...ops.shape import cat

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm",
           "local_response_norm"]


def _verify_batch_size(size):
    size_prods = size[0]
    for i in range(len(size) - 2):
        size_prods *= size[i + 2]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")


def _verify_spatial_size(size):
    size_prods = 1
    for i in range(2, len(size)):
        size_prods *= size[i]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Batch normalization over (N, *) per channel; training mode updates the running
    statistics in place (momentum: the weight of the new batch statistic)."""
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _ops.batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                           eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    """Normalization per sample and channel over the spatial dims."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    return _ops.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                              momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    return _ops.layer_norm(input, normalized_shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _ops.rms_norm(input, normalized_shape, weight, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups]
                       + list(input.size()[2:]))
    return _ops.group_norm(input, num_groups, weight, bias, eps)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over a window of `size` channels) ** beta, the window
    zero-padded by size // 2 before and (size - 1) // 2 after (avg_pool's
    count_include_pad: always divided by size)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input.mul(input)
    c = sq.shape[1]
    before, after = size // 2, (size - 1) // 2
    pad = [t for t in (zeros((sq.shape[0], before) + tuple(sq.shape[2:]), dtype=sq.dtype), sq,
                       zeros((sq.shape[0], after) + tuple(sq.shape[2:]), dtype=sq.dtype))
           if t.shape[1]]
    sq = cat(pad, 1) if len(pad) > 1 else sq
    div = sq.narrow(1, 0, c)
    for i in range(1, size):
        div = div + sq.narrow(1, i, c)
    # the window mean is avg_pool's: integer division for integer inputs (sums are >= 0)
    div = div / size if input.is_floating_point() or input.is_complex() else div // size
    div = div.mul(alpha).add(k).pow(beta)
    return input / div
