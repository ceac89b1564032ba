"""glibc malloc settings for eager code that allocates and frees large temporaries.

Why: an eager training step makes many multi-megabyte NumPy temporaries. By default glibc
serves big blocks with fresh mmap()s and hands freed memory at the heap top back to the
OS, so every step page-faults its temporaries in again: ~0.3 ms per 4 MB here, a quarter
of a small CNN step (46 -> 35 ms of CPU time with the settings below, bf16 autocast
62 -> 40 ms). Keeping freed memory in the process is what PyTorch's caching allocators and
the jemalloc/tcmalloc setups recommended for CPU training do. The cost is resident memory:
up to `TRIM_MB` of freed heap stays mapped after a peak. EMBER_MALLOC_TUNE=0 keeps glibc's
defaults; other C libraries are left alone.
"""
import ctypes
import os

__all__ = ["tune"]

MMAP_MB = 32        # blocks below this come from the heap (glibc's largest allowed value)
TRIM_MB = 256       # freed heap above this is returned to the OS
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
TUNED = [False]


def tune():
    """Apply the settings once per process (no-op off glibc or with EMBER_MALLOC_TUNE=0)."""
    if TUNED[0] or os.environ.get("EMBER_MALLOC_TUNE", "1") == "0":
        return TUNED[0]
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):      # not glibc (musl, macOS, Windows)
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    TUNED[0] = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_MB << 20)
                    and mallopt(_M_TRIM_THRESHOLD, TRIM_MB << 20))
    return TUNED[0]
