"""nn.functional embedding and embedding_bag: torch.nn.functional's argument handling
(padding_idx normalisation, 2-D input as fixed-length bags, max_norm renormalisation
in place) around the ops in ember/ops/embedding.py."""
import warnings

from ...ops import embedding as _ops
from ...ops.creation import arange

__all__ = ["embedding", "embedding_bag"]


def _padding_idx(padding_idx, num, msg="Padding_idx must be within num_embeddings"):
    """A negative padding_idx counts from the end; out of range is an AssertionError."""
    if padding_idx is None:
        return None
    if padding_idx > 0:
        if padding_idx >= num:
            raise AssertionError(msg)
    elif padding_idx < 0:
        if padding_idx < -num:
            raise AssertionError(msg)
        padding_idx = num + padding_idx
    return padding_idx


def _sparse_refused(fn):
    raise NotImplementedError(f"{fn}: sparse=True (sparse gradients) is not supported by "
                              "ember; use sparse=False")


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of weight at the indices in input; the padding_idx row gets no gradient;
    with max_norm, the rows looked up are first renormalised in place."""
    if sparse:
        _sparse_refused("embedding")
    padding_idx = _padding_idx(padding_idx, weight.size(0))
    if max_norm is not None:
        input = input.contiguous()
        _ops.embedding_renorm_(weight, input, max_norm, norm_type)
    return _ops.embedding(weight, input, -1 if padding_idx is None else padding_idx,
                          scale_grad_by_freq, False)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embeddings: 2-D input = one bag per row, 1-D input
    = bags starting at `offsets`; per_sample_weights scale the rows (mode='sum')."""
    if weight.dtype.name == "int64" and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if not weight.dim() == 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {_type_str(offsets)}")
        offsets = arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode == "sum":
        mode_enum = 0
    elif mode == "mean":
        mode_enum = 1
    elif mode == "max":
        mode_enum = 2
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    else:
        raise ValueError("mode has to be one of sum, mean or max")
    if sparse:
        _sparse_refused("embedding_bag")
    if max_norm is not None:
        _ops.embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if padding_idx is not None:
        num = weight.size(0)
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        padding_idx %= num
    ret, _, _, _ = _ops.embedding_bag(weight, input, offsets, scale_grad_by_freq, mode_enum,
                                      False, per_sample_weights, include_last_offset,
                                      padding_idx)
    return ret


def _type_str(x):
    from ..._tensor import Tensor
    return "<class 'torch.Tensor'>" if isinstance(x, Tensor) else str(type(x))
