"""ember.cuda: what a PyTorch CPU build reports — no CUDA device.

Programs test `torch.cuda.is_available()` and seed CUDA unconditionally; those work.
Anything that needs a device raises like PyTorch's CPU build does."""

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "synchronize", "empty_cache", "current_device", "is_initialized",
           "memory_allocated", "max_memory_allocated", "reset_peak_memory_stats", "amp"]


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def manual_seed(seed):
    """PyTorch seeds CUDA lazily and silently ignores it without a device."""


def manual_seed_all(seed):
    """Silently ignored without a device (as in PyTorch)."""


def seed():
    """Silently ignored without a device (as in PyTorch)."""


def seed_all():
    """Silently ignored without a device (as in PyTorch)."""


def _no_cuda(*args, **kwargs):
    raise AssertionError("Torch not compiled with CUDA enabled")


synchronize = current_device = memory_allocated = max_memory_allocated = _no_cuda
reset_peak_memory_stats = get_device_name = get_device_properties = set_device = _no_cuda


def empty_cache():
    """Nothing is cached without a device."""


def __getattr__(name):
    """torch.cuda.amp (the deprecated device aliases) is loaded on first use, not at import."""
    if name == "amp":
        import importlib
        return importlib.import_module(".amp", __name__)
    raise AttributeError(f"module 'ember.cuda' has no attribute '{name}'")


# torch.cuda.FloatTensor, ...: the type objects exist in a CPU build; constructing one raises
from .._legacy import CUDA_TENSOR_TYPES as _CUDA_TYPES  # noqa: E402
globals().update(_CUDA_TYPES)
