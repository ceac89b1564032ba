"""Hand-written C kernels that eager ops use (int8 GEMM, 2:4 sparse matmul, flash attention,
bf16 loops): built once by the system compiler through the inductor's disk cache.

Why one loader: every such kernel needs the same three things — the cache (a second process
loads the .so without compiling), the inductor's flags (-O3, -march=native or
EMBER_CPU_CAPABILITY, OpenMP), and a clean fallback when there is no C compiler or it
rejects the code (the op then runs its NumPy path, after one warning). `load_native` gives
the ctypes library or None; callers keep their NumPy path for None.
"""
import functools
import warnings

from . import codecache, cpp_builder

__all__ = ["load_native", "available"]


@functools.lru_cache(maxsize=None)
def load_native(name, source):
    """The ctypes CDLL of C `source` (`name` labels the warning), or None with one warning
    when it cannot be built here. Cached per process by (name, source)."""
    try:
        lib, _ = codecache.load(source)
        return lib
    except cpp_builder.CompilerNotFound as e:
        _warn(f"ember: {e}; the {name} kernels run on NumPy instead")
    except (cpp_builder.CompileError, OSError) as e:   # OSError: cache dir not writable
        _warn(f"ember: the {name} C kernels could not be built ({str(e)[:2000]}); "
              "they run on NumPy instead")
    return None


def available():
    """Whether a C compiler is here (cheap after the first call)."""
    try:
        cpp_builder.find_compiler()
        return True
    except cpp_builder.CompilerNotFound:
        return False


@functools.lru_cache(maxsize=None)
def _warn(msg):
    warnings.warn(msg, UserWarning, stacklevel=4)
