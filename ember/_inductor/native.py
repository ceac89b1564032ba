"""Hand-written C kernels that eager ops use (int8 GEMM, 2:4 sparse matmul, flash attention,
bf16 loops): built once by the system compiler through the inductor's disk cache.

Why one loader: every such kernel needs the same three things — the cache (a second process
loads the .so without compiling), the inductor's flags (-O3, -march=native or
EMBER_CPU_CAPABILITY, OpenMP), and a clean fallback when there is no C compiler or it
rejects the code (the op then runs its NumPy path, after one warning). `load_native` gives
the ctypes library or None; callers keep their NumPy path for None. `threads()` is the
OpenMP thread count every kernel call uses.
"""
import functools
import os
import warnings

__all__ = ["load_native", "available", "threads"]

FORKED = [False]          # set in a child made by fork()


def _after_fork_in_child():
    FORKED[0] = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def threads():
    """OpenMP threads for one kernel call: ember.get_num_threads() (torch.set_num_threads's
    setting), or 1 in a forked child — GNU OpenMP's thread pool does not survive fork(), so
    a parallel region there (a DataLoader worker) would wait forever, and PyTorch runs
    forked children on one thread too."""
    if FORKED[0]:
        return 1
    from .. import get_num_threads
    return get_num_threads()


@functools.lru_cache(maxsize=None)
def load_native(name, source):
    """The ctypes CDLL of C `source` (`name` labels the warning), or None with one warning
    when it cannot be built here. Cached per process by (name, source)."""
    from . import codecache, cpp_builder    # here: `import ember` need not load subprocess
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
    from . import cpp_builder
    try:
        cpp_builder.find_compiler()
        return True
    except cpp_builder.CompilerNotFound:
        return False


@functools.lru_cache(maxsize=None)
def _warn(msg):
    warnings.warn(msg, UserWarning, stacklevel=4)
