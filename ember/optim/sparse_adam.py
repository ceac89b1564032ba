"""SparseAdam: needs sparse gradients, which ember does not have."""
from .._tensor import Tensor
from .optimizer import Optimizer, _check_betas

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """torch.optim.SparseAdam's signature and argument checks; constructing it raises
    NotImplementedError because ember has no sparse tensors (use Adam: ember's Embedding
    produces dense gradients)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        raise NotImplementedError("SparseAdam is not supported by ember: it requires sparse "
                                  "gradients and ember has no sparse tensors; use "
                                  "ember.optim.Adam instead")
