"""ember.cpu: the cpu backend's caching allocator (PyTorch 1.7 mobile's idea).

Note: inside `with ember.cpu.caching_allocator():` (or a `CachingAllocator` given to
`WithCPUCachingAllocatorGuard`), kernels that can write into a given buffer (ufunc
pointwise ops, the binary fast path) take their output from a size-bucketed free
list, and a tensor's buffer goes back to that list when its storage dies, provided
nothing else (a NumPy view a user kept, say) still refers to it. Repeated steps of
the same shapes then reuse memory instead of asking malloc (and the kernel for fresh
zeroed pages) each time. `memory_allocated()` keeps counting live tensor bytes only;
the free list is `memory_reserved() - memory_allocated()`.
"""
import contextlib
import sys

import numpy as np

from .. import _memory

__all__ = ["CachingAllocator", "WithCPUCachingAllocatorGuard", "caching_allocator",
           "empty_cache", "current_allocator"]

_MIN_BUCKET = 512


def _bucket(nbytes):
    """Round up to the next of 8 steps per power of two (at least 512 bytes): coarse
    enough that similar sizes share buffers, fine enough to waste at most 1/8."""
    if nbytes <= _MIN_BUCKET:
        return _MIN_BUCKET
    step = 1 << max(0, (nbytes - 1).bit_length() - 3)
    return (nbytes + step - 1) // step * step


class CachingAllocator:
    """A free list of byte buffers keyed by bucket size."""

    def __init__(self):
        self._free = {}
        self.hits = 0
        self.misses = 0
        self.cached_bytes = 0

    def allocate(self, shape, dtype):
        """(array of `shape`/`dtype` over a cached buffer, the buffer)."""
        dtype = np.dtype(dtype)
        n = dtype.itemsize
        for s in shape:
            n *= s
        size = _bucket(n)
        lst = self._free.get(size)
        if lst:
            buf = lst.pop()
            self.hits += 1
            self.cached_bytes -= size
        else:
            buf = np.empty(size, np.uint8)
            self.misses += 1
        return buf[:n].view(dtype).reshape(shape), buf

    def recycle(self, buf):
        self._free.setdefault(buf.nbytes, []).append(buf)
        self.cached_bytes += buf.nbytes

    def empty_cache(self):
        """Drop every cached buffer (gives the memory back to malloc)."""
        self._free.clear()
        self.cached_bytes = 0

    def stats(self):
        return {"hits": self.hits, "misses": self.misses, "cached_bytes": self.cached_bytes}

    def __repr__(self):
        return (f"CachingAllocator(hits={self.hits}, misses={self.misses}, "
                f"cached_bytes={self.cached_bytes})")


class WithCPUCachingAllocatorGuard:
    """Makes `allocator` the cpu backend's allocator while the guard is open."""

    def __init__(self, allocator):
        if not isinstance(allocator, CachingAllocator):
            raise TypeError("WithCPUCachingAllocatorGuard expects a CachingAllocator, got "
                            f"{type(allocator).__name__}")
        self.allocator = allocator

    def __enter__(self):
        self._prev = _memory.CACHE[0]
        _memory.CACHE[0] = self.allocator
        return self.allocator

    def __exit__(self, *exc):
        _memory.CACHE[0] = self._prev
        return False


@contextlib.contextmanager
def caching_allocator(allocator=None):
    """`with ember.cpu.caching_allocator() as alloc:` — a fresh allocator unless given."""
    alloc = allocator if allocator is not None else CachingAllocator()
    with WithCPUCachingAllocatorGuard(alloc):
        yield alloc


def current_allocator():
    return _memory.CACHE[0]


def empty_cache():
    a = _memory.CACHE[0]
    if a is not None:
        a.empty_cache()


_refcount = sys.getrefcount


def __getattr__(name):
    """torch.cpu.amp (the deprecated device aliases) is loaded on first use, not at import."""
    if name == "amp":
        import importlib
        return importlib.import_module(".amp", __name__)
    raise AttributeError(f"module 'ember.cpu' has no attribute '{name}'")
