"""nn.functional losses (torch.nn.functional's *_loss functions).

Note: argument handling follows torch/nn/functional.py: the deprecated
size_average/reduce pair overrides `reduction` (with PyTorch's warning), size
checks that PyTorch does in Python (BCE: ValueError since 1.7; l1/mse/huber:
a broadcasting UserWarning) happen here, and the math is the registry ops of
ember/ops/loss.py (which autocast runs in float32). multilabel_soft_margin_loss,
gaussian_nll_loss and triplet_margin_with_distance_loss are Python composites in
PyTorch, so they are here too (and autocast leaves them alone, as PyTorch does).
"""
import math
import warnings

from ..._tensor import Tensor
from ...ops import loss as _ops
from ...ops._registry import REGISTRY as _OP
from ...ops._elementwise import type_name
from ._activation import logsigmoid
from ._misc import pairwise_distance

__all__ = ["l1_loss", "mse_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "kl_div", "huber_loss", "smooth_l1_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "multilabel_margin_loss", "cosine_embedding_loss", "margin_ranking_loss",
           "hinge_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "poisson_nll_loss", "gaussian_nll_loss", "ctc_loss", "linear_cross_entropy"]

# ------------------------------------------------------------------ reduction

def get_enum(reduction):
    """torch.nn._reduction.get_enum: 'none' 0, 'mean' 1, 'sum' 2."""
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=3)
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_get_string(size_average, reduce, emit_warning=True):
    """The reduction that the deprecated size_average/reduce pair means."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _enum(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    return get_enum(reduction)


def _str(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return reduction


def _size(t):
    return f"torch.Size({list(t.shape)})"


def _warn_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({_size(target)}) that is different to the input "
                      f"size ({_size(input)}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)


def _expand(input, target):
    from ...ops.rearrange import broadcast_tensors
    return broadcast_tensors(input, target)


def _not_implemented(name, *tensors):
    for t in tensors:
        if isinstance(t, Tensor) and not t.dtype.is_floating_point:
            raise NotImplementedError(f'"{name}" not implemented for '
                                      f"'{_ops._type_name(t.dtype)}'")


def _not_differentiable(fn, arg, t):
    """PyTorch's autograd refuses, at forward time, an argument its formula has no
    derivative for (class weights, pos_weight, soft_margin's target)."""
    if t is not None and t.requires_grad and _grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                           f"'{arg}'. This input cannot have requires_grad True.")


def _grad_enabled():
    from ..._dispatch import STATE
    return STATE.grad_enabled


def _weighted(loss, weight, input, reduction, mean_by_weight=True):
    """The `weight=` form of l1/mse/huber (PyTorch 2.x): l1/mse's mean divides by
    sum(weight), huber's by the number of elements."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


# ------------------------------------------------------------ regression losses

def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _warn_size(input, target)
    reduction = _str(size_average, reduce, reduction)
    x, t = _expand(input, target)
    if weight is not None:
        return _weighted((x - t).abs(), weight, input, reduction)
    return _OP["l1_loss"](x, t, get_enum(reduction))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _warn_size(input, target)
    reduction = _str(size_average, reduce, reduction)
    x, t = _expand(input, target)
    if weight is not None:
        return _weighted((x - t).pow(2), weight, input, reduction)
    _not_implemented("mse_cpu", x, t)
    return _OP["mse_loss"](x, t, get_enum(reduction))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _warn_size(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    x, t = _expand(input, target)
    if weight is not None:
        return _weighted(_OP["huber_loss"](x, t, 0, delta), weight, input, reduction, False)
    return _OP["huber_loss"](x, t, get_enum(reduction), delta)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _warn_size(input, target)
    reduction = _str(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    x, t = _expand(input, target)
    if beta == 0.0:
        return _OP["l1_loss"](x, t, get_enum(reduction))
    return _OP["smooth_l1_loss"](x, t, get_enum(reduction), beta)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    reduction = _str(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return _OP["poisson_nll_loss"](input, target, log_input, full, eps, get_enum(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """-log N(target; input, var) up to a constant; var may be one dim short of input
    (homoscedastic) or differ from it in exactly one dim of size 1."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * input.new_ones(input.shape)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and \
                sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    from ...autograd.grad_mode import no_grad
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# ------------------------------------------------------------ classification losses

def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    _not_differentiable("nll_loss_forward", "weight", weight)
    return _OP["nll_loss"](input, target, weight, _enum(size_average, reduce, reduction),
                           ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    if tuple(input.shape) != tuple(target.shape):      # class indices: nll_loss's weight
        _not_differentiable("nll_loss_forward", "weight", weight)
    return _OP["cross_entropy_loss"](input, target, weight,
                                     _enum(size_average, reduce, reduction), ignore_index,
                                     float(label_smoothing))


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...), PyTorch's
    reference definition. linear_weight may be (C, d_1, ..., d_K, in_features) for a
    K-dimensional loss. `options` select PyTorch's memory-saving chunked schedule; ember
    computes the same value in one piece, so they change nothing here."""
    from ...ops.matmul import tensordot
    logits = tensordot(input, linear_weight, dims=([-1], [-1]))    # (N, C, d_1, ..., d_K)
    if linear_bias is not None:
        logits = logits + linear_bias
    return cross_entropy(logits, target, weight=weight,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    r = _enum(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({_size(target)}) that is different to the "
                         f"input size ({_size(input)}) is deprecated. Please ensure they have "
                         "the same size.")
    _not_differentiable("binary_cross_entropy", "weight", weight)
    if weight is not None:
        from ...ops.rearrange import broadcast_shapes
        weight = weight.expand(broadcast_shapes(tuple(target.shape), tuple(weight.shape)))
    return _OP["binary_cross_entropy"](input, target, weight, r)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    r = _enum(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_size(target)}) must be the same as input size "
                         f"({_size(input)})")
    if not (target.dtype.is_floating_point or target.dtype.is_complex):
        raise RuntimeError(f"binary_cross_entropy_with_logits: result type "
                           f"{type_name(input.dtype)} can't be cast to the desired output type "
                           f"{type_name(target.dtype)} (target must be floating point)")
    _not_differentiable("binary_cross_entropy_with_logits", "weight", weight)
    _not_differentiable("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    return _OP["binary_cross_entropy_with_logits"](input, target, weight, pos_weight, r)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        r = get_enum(legacy_get_string(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        r = get_enum("sum" if reduction == "batchmean" else reduction)
    out = _OP["kl_div"](input, target, r, log_target)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.shape[0]
    return out


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _not_differentiable("soft_margin_loss", "target", target)
    return _OP["soft_margin_loss"](input, target, _enum(size_average, reduce, reduction))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    reduction = _str(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    r = _enum(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _not_implemented("multi_margin_loss_cpu_kernel", input)
    _not_differentiable("multi_margin_loss", "weight", weight)
    return _OP["multi_margin_loss"](input, target, p, margin, weight, r)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _not_implemented("multilabel_margin_loss_forward_out_frame", input)
    return _OP["multilabel_margin_loss"](input, target, _enum(size_average, reduce, reduction))


# ------------------------------------------------------------ embedding / ranking losses

def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    return _OP["cosine_embedding_loss"](input1, input2, target, margin,
                                        _enum(size_average, reduce, reduction))


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    r = _enum(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {_size(input1)}, input2: {_size(input2)}, "
                           f"target: {_size(target)} ")
    return _OP["margin_ranking_loss"](input1, input2, target, margin, r)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    return _OP["hinge_embedding_loss"](input, target, margin,
                                       _enum(size_average, reduce, reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    r = _enum(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _OP["triplet_margin_loss"](anchor, positive, negative, margin, p, eps, swap, r)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {p}D, "
                           f"and negative {n}D inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(dist(positive, negative))
    loss = (margin + d_pos - d_neg).clamp_min(0)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss


# --------------------------------------------------------------------------- CTC

def _lengths(x, name):
    if isinstance(x, Tensor):
        if x.dtype.is_floating_point or x.dtype.is_complex:
            raise RuntimeError(f"{name} must be integral")
        return tuple(int(v) for v in x.reshape(-1).tolist())
    return tuple(int(v) for v in x)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist Temporal Classification; log_probs (T, N, C) or unbatched (T, C)."""
    r = get_enum(reduction)
    batched = log_probs.dim() == 3
    if not batched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    res = _OP["_ctc_loss"](log_probs, targets, il, tl, blank, bool(zero_infinity))[0]
    if zero_infinity:
        from ...ops.indexing import where
        res = where(res == math.inf, res.new_zeros(()), res)
    if r == 1:      # each sequence's loss divided by its target length (at least 1)
        from ...ops.shape import stack
        tlt = stack([res.new_full((), float(max(n, 1))) for n in tl]) if tl else res.new_ones(0)
        return (res / tlt).mean()
    if r == 2:
        return res.sum()
    return res if batched else res.squeeze(0)

