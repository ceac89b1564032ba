"""BatchedTensor: a logical (per-sample) tensor backed by a physical one with the batch
dim in front, tagged with its vmap level.

Note: `_data` is a zero-strided stand-in of the logical shape (no memory), so Python code
that reads `.shape`/`.dim()`/`.dtype` before dispatching sees the per-sample view, as
PyTorch's BatchedTensorImpl gives. Every op on it reaches the vmap mode of its level,
which applies the op's batching rule to the physical value.
"""
import numpy as np

from .._dispatch import _disabled_torch_function_impl
from .._memory import _Storage
from .._tensor import Tensor


class BatchedTensor(Tensor):
    __torch_function__ = _disabled_torch_function_impl

    def __repr__(self):
        return (f"BatchedTensor(lvl={self._bt_level}, bdim=0, "
                f"value=\n{self._bt_value!r})")

    def item(self):
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't "
                           "support vmap over calling .item() on a Tensor, please try to "
                           "rewrite what you're doing with other operations.")

    def numpy(self, *a, **k):
        raise RuntimeError("vmap: cannot convert a batched tensor to NumPy inside vmap "
                           "(its data depends on the batch element)")

    def tolist(self):
        raise RuntimeError("vmap: cannot call .tolist() on a batched tensor inside vmap")

    def __bool__(self):
        raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some "
                           "data-dependent control flow. We don't support that yet, please "
                           "shout over at https://github.com/pytorch/functorch/issues/257 .")


def make_batched(value, level):
    """Wrap physical `value` (batch at dim 0) as a level-`level` BatchedTensor."""
    t = object.__new__(BatchedTensor)
    arr = value._data
    t._data = np.broadcast_to(np.zeros((), arr.dtype), arr.shape[1:])
    t._dtype = value._dtype
    t._storage = _Storage(0)
    t._bt_value = value
    t._bt_level = level
    if value._backend != "cpu":
        t._backend, t._device = value._backend, value._device
    return t


def is_batched(x, level=None):
    return isinstance(x, BatchedTensor) and (level is None or x._bt_level == level)


def add_batch_dim(x, in_dim, level):
    """The logical tensor of physical `x` mapped over `in_dim`."""
    if in_dim != 0:
        x = x.movedim(in_dim, 0)
    return make_batched(x, level)


def remove_batch_dim(x, level, batch_size, out_dim):
    """Physical tensor from a vmap output: batch moved to `out_dim` (unbatched outputs are
    expanded, as PyTorch does)."""
    if is_batched(x, level):
        v = x._bt_value
    else:
        v = x.unsqueeze(0).expand((batch_size,) + tuple(x.shape))
    if out_dim != 0:
        v = v.movedim(0, out_dim)
    return v
