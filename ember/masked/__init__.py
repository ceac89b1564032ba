"""ember.masked: torch.masked's functions that take `mask=` (reductions, cumulative ops,
softmax family, normalize). MaskedTensor is not implemented."""
from ._ops import (amax, amin, argmax, argmin, cumprod, cumsum, log_softmax, logaddexp,
                   logsumexp, mean, median, norm, normalize, prod, softmax, softmin, std, sum,
                   var)

__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum",
           "is_masked_tensor", "log_softmax", "logaddexp", "logsumexp", "masked_tensor",
           "MaskedTensor", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]


class MaskedTensor:
    """torch.masked.MaskedTensor (a tensor subclass carrying its mask) is not implemented
    in ember; use the functions with mask= instead."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("ember.masked.MaskedTensor is not implemented; use the "
                                  "ember.masked functions with mask= instead")


def masked_tensor(data, mask, requires_grad=False):
    raise NotImplementedError("ember.masked.masked_tensor: MaskedTensor is not implemented; "
                              "use the ember.masked functions with mask= instead")


def as_masked_tensor(data, mask):
    raise NotImplementedError("ember.masked.as_masked_tensor: MaskedTensor is not "
                              "implemented; use the ember.masked functions with mask= "
                              "instead")


def is_masked_tensor(obj):
    return isinstance(obj, MaskedTensor)
