"""torch.accelerator, as a CPU build answers it: no accelerator is present.

Why: current example programs pick their device with
`torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"`;
the query functions answer, everything that needs a device raises PyTorch's error.
"""
import contextlib

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "current_device_idx", "set_device_index", "set_device_idx", "device_index",
           "current_stream", "set_stream", "synchronize", "empty_cache", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
           "reset_peak_memory_stats", "reset_accumulated_memory_stats", "get_memory_info",
           "get_device_capability"]


def _none_available(*args, **kwargs):
    raise RuntimeError("Cannot access accelerator device when none is available.")


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0


current_device_index = current_device_idx = _none_available
set_device_index = set_device_idx = _none_available
current_stream = set_stream = synchronize = empty_cache = _none_available
memory_allocated = max_memory_allocated = memory_reserved = max_memory_reserved = _none_available
memory_stats = reset_peak_memory_stats = reset_accumulated_memory_stats = _none_available
get_memory_info = get_device_capability = _none_available


class device_index(contextlib.AbstractContextManager):
    """`with torch.accelerator.device_index(i):` — None is a no-op, an index needs a device."""

    def __init__(self, device, /):
        self.idx = device

    def __enter__(self):
        if self.idx is not None:
            _none_available()
        return self

    def __exit__(self, *exc):
        return False
