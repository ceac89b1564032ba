"""ember.ao.pruning (torch.ao.pruning): sparsifiers that mask weights, e.g. to the 2:4 pattern
that ember.sparse.to_sparse_semi_structured stores compressed."""
from ._sparsifier import BaseSparsifier, WeightNormSparsifier
from ._utils import FakeSparsity, fqn_to_module, get_arg_info_from_tensor_fqn, module_to_fqn

__all__ = ["BaseSparsifier", "WeightNormSparsifier", "FakeSparsity", "fqn_to_module",
           "get_arg_info_from_tensor_fqn", "module_to_fqn"]
