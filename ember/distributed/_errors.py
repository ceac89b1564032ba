"""PyTorch's distributed exception types (all RuntimeError subclasses, as in torch)."""

__all__ = ["DistError", "DistBackendError", "DistStoreError", "DistNetworkError"]


class DistError(RuntimeError):
    """Base of every ember.distributed error (torch.distributed.DistError)."""


class DistBackendError(DistError):
    """A collective failed or timed out in the backend."""


class DistStoreError(DistError):
    """A store operation failed or timed out (e.g. `get` of a key that never appears)."""


class DistNetworkError(DistError):
    """A socket could not connect or broke."""
