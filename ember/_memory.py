"""Storage and memory accounting.

Note: a `_Storage` is shared by a tensor and all its views. It counts the bytes
of the array a kernel allocated while it lives, and it holds the version counter
that autograd checks to detect in-place changes of saved tensors. The counters
live in a list, not on the class: assigning a class attribute invalidates
CPython's type cache, which made every tensor allocation ~0.25 µs slower.
"""

import sys
import threading

COUNT = [0, 0, 0, 0]  # [allocated bytes, peak bytes, total ever allocated, total freed]
# When set, every count goes through _add (under a lock, keeping the two totals):
# once ember.jit.fork has threads, or while a profiler records memory.
_THREADED = [False]
_LOCK = threading.Lock()
_SLOW_USERS = [0, False]   # [profilers recording memory, threads started]


def set_threaded(flag):
    """From now on, update the counters under a lock (read-modify-write is not atomic)."""
    _SLOW_USERS[1] = bool(flag)
    _THREADED[0] = _SLOW_USERS[1] or _SLOW_USERS[0] > 0


def track_totals(on):
    """A profiler with profile_memory=True needs allocated and freed bytes separately."""
    _SLOW_USERS[0] += 1 if on else -1
    _THREADED[0] = _SLOW_USERS[1] or _SLOW_USERS[0] > 0


def _add(n, C=COUNT):
    with _LOCK:
        a = C[0] + n
        C[0] = a
        if a > C[1]:
            C[1] = a
        if n > 0:
            C[2] += n
        else:
            C[3] -= n


class _Storage:
    __slots__ = ("nbytes", "version", "_owner", "__weakref__")

    def __init__(self, nbytes, C=COUNT):
        self.nbytes = nbytes
        self.version = 0
        if nbytes:
            if _THREADED[0]:
                return _add(nbytes)
            a = C[0] + nbytes
            C[0] = a
            if a > C[1]:
                C[1] = a

    def __del__(self, C=COUNT, T=_THREADED):
        if self.nbytes:
            if T[0]:
                return _add(-self.nbytes)
            C[0] -= self.nbytes


CACHE = [None]      # the active ember.cpu.CachingAllocator, if any


class _CachedStorage(_Storage):
    """A storage whose memory came from a caching allocator: it goes back there on death."""
    __slots__ = ("buf", "pool")

    def __del__(self, C=COUNT, T=_THREADED, refcount=sys.getrefcount):
        _Storage.__del__(self)
        # 2 = this slot + getrefcount's argument: no array view of the buffer survives
        if refcount(self.buf) == 2:
            self.pool.recycle(self.buf)


class OutOfMemoryError(RuntimeError, MemoryError):
    """An allocation the system refused. PyTorch's CPU allocator raises RuntimeError
    ("DefaultCPUAllocator: can't allocate memory"), and `except RuntimeError` code relies on
    it; it stays a MemoryError too, for code written against NumPy."""


def out_of_memory(exc, opname):
    """The OutOfMemoryError for NumPy's MemoryError `exc`, raised while running `opname`."""
    if isinstance(exc, OutOfMemoryError):
        return exc
    nbytes = getattr(exc, "_total_size", None)
    what = f"{nbytes} bytes" if nbytes is not None else "more memory than is available"
    return OutOfMemoryError(
        f"{opname}: DefaultCPUAllocator: can't allocate memory: you tried to allocate {what}. "
        "Error code 12 (Cannot allocate memory)")


PENDING = {}        # id(array) -> its _CachedStorage, for kernels that return plain arrays


def cached_out(shape, npdtype):
    """An output buffer from the active caching allocator (None without one); `wrap`
    picks up its storage when the kernel returns this array."""
    got = cached_empty(shape, npdtype)
    if got is None:
        return None
    arr, storage = got
    PENDING[id(arr)] = storage
    return arr


def cached_empty(shape, npdtype):
    """(array, storage) from the active caching allocator, or None when there is none."""
    pool = CACHE[0]
    if pool is None:
        return None
    arr, buf = pool.allocate(shape, npdtype)
    s = object.__new__(_CachedStorage)
    s.nbytes = arr.nbytes
    s.version = 0
    s.buf = buf
    s.pool = pool
    _add(arr.nbytes)
    return arr, s


def new_storage(nbytes, _new=object.__new__, S=_Storage, C=COUNT, T=_THREADED):
    """_Storage(nbytes) without the __init__ call, for the hot path."""
    s = _new(S)
    s.nbytes = nbytes
    s.version = 0
    if T[0]:
        _add(nbytes)
        return s
    a = C[0] + nbytes
    C[0] = a
    if a > C[1]:
        C[1] = a
    return s


def alias_storage(storage):
    """A storage with its own version counter over `storage`'s memory (Tensor.data):
    it counts no bytes but keeps `storage`, which does, alive."""
    s = _Storage(0)
    s._owner = storage
    return s


def resize_storage(storage, nbytes):
    """Accounts for a storage whose array was replaced by one of `nbytes` (out= resize)."""
    delta = nbytes - storage.nbytes
    storage.nbytes = nbytes
    _add(delta)


def memory_reserved(device=None):
    """Live tensor bytes plus the bytes a caching allocator keeps for reuse."""
    pool = CACHE[0]
    return COUNT[0] + (pool.cached_bytes if pool is not None else 0)


def memory_allocated(device=None):
    """Bytes held by live tensors that ember allocated."""
    return COUNT[0]


def max_memory_allocated(device=None):
    return COUNT[1]


def reset_peak_memory_stats(device=None):
    COUNT[1] = COUNT[0]


def memory_stats(device=None):
    return {"allocated_bytes.all.current": COUNT[0], "allocated_bytes.all.peak": COUNT[1]}
