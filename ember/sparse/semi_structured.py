"""torch.sparse.semi_structured: 2:4 semi-structured sparse tensors (ember runs them on CPU),
and the 2:4 magnitude-pruning masks that make a dense weight fit the layout."""
from .. import _dtype as D
from .._tensor import Tensor, wrap
from ._semi_structured import (SparseSemiStructuredTensor, SparseSemiStructuredTensorCUSPARSELT,
                               SparseSemiStructuredTensorCUTLASS, prune_mask_2_4,
                               prune_mask_2_4_tile, to_sparse_semi_structured)

__all__ = ["SparseSemiStructuredTensor", "SparseSemiStructuredTensorCUTLASS",
           "SparseSemiStructuredTensorCUSPARSELT", "to_sparse_semi_structured",
           "semi_structured_mask", "prune_2_4"]


def semi_structured_mask(weight, *, tile=False):
    """A bool mask keeping the two largest |values| of each group of four along the rows
    (`tile=True`: 2:4 along rows and columns of each 4x4 tile, PyTorch's
    prune_dense_static_sort pattern)."""
    if not isinstance(weight, Tensor) or weight.ndim != 2 or weight.shape[1] % 4 or \
            (tile and weight.shape[0] % 4):
        raise RuntimeError(f"semi_structured_mask: expected a 2-d tensor whose columns "
                           f"{'and rows ' if tile else ''}are a multiple of 4, got "
                           f"{list(getattr(weight, 'shape', []))}")
    arr = weight.detach()._data
    return wrap(prune_mask_2_4_tile(arr) if tile else prune_mask_2_4(arr)).to(D.bool)


def prune_2_4(weight, *, tile=False):
    """`weight` with all but the two largest |values| of each group of four zeroed (a new
    tensor, same dtype), ready for to_sparse_semi_structured."""
    return weight.detach() * semi_structured_mask(weight, tile=tile).to(weight.dtype)
