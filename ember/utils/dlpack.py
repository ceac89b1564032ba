"""torch.utils.dlpack: zero-copy exchange with other array libraries through DLPack
(NumPy's implementation: ember tensors are NumPy arrays underneath)."""
import numpy as np

from .._tensor import Tensor

__all__ = ["from_dlpack", "to_dlpack"]


def to_dlpack(tensor):
    """A DLPack capsule over `tensor`'s memory (no copy). It is a versioned capsule
    (DLPack 1.0, which carries the read-only flag): from a legacy capsule NumPy can only make
    read-only arrays."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack: expected a Tensor, got {type(tensor).__name__}")
    if tensor.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    return tensor.numpy().__dlpack__(max_version=(1, 0))


class _Capsule:
    """Adapts a bare capsule to the __dlpack__ protocol np.from_dlpack reads."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)        # kDLCPU


def from_dlpack(ext_tensor):
    """A tensor sharing the memory of an object with __dlpack__ (or a DLPack capsule)."""
    from .. import from_numpy
    src = ext_tensor if hasattr(ext_tensor, "__dlpack__") else _Capsule(ext_tensor)
    return from_numpy(np.from_dlpack(src))
