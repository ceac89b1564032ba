"""Storage and memory accounting.

Note: a `_Storage` is shared by a tensor and all its views. It counts the bytes
of the array a kernel allocated while it lives, and it holds the version counter
that autograd checks to detect in-place changes of saved tensors.
"""


class _Storage:
    __slots__ = ("nbytes", "version")
    allocated = 0
    peak = 0

    def __init__(self, nbytes):
        self.nbytes = nbytes
        self.version = 0
        if nbytes:
            a = _Storage.allocated + nbytes
            _Storage.allocated = a
            if a > _Storage.peak:
                _Storage.peak = a

    def __del__(self):
        if self.nbytes:
            _Storage.allocated -= self.nbytes


def memory_allocated(device=None):
    """Bytes held by live tensors that ember allocated."""
    return _Storage.allocated


def max_memory_allocated(device=None):
    return _Storage.peak


def reset_peak_memory_stats(device=None):
    _Storage.peak = _Storage.allocated


def memory_stats(device=None):
    return {"allocated_bytes.all.current": _Storage.allocated,
            "allocated_bytes.all.peak": _Storage.peak}
