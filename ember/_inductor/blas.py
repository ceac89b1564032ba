"""The CBLAS that generated C calls for matmul: the OpenBLAS that NumPy ships.

Why that one and not a system BLAS: NumPy is always installed with ember and its wheel
carries OpenBLAS (`numpy.libs/libscipy_openblas64_*.so`, ILP64: 64-bit integer arguments,
symbols prefixed `scipy_` and suffixed `64_`), so generated code multiplies with exactly
the library eager matmul uses, with the same threading (OPENBLAS_NUM_THREADS) and no link
step or header. The library is dlopened here (already mapped by NumPy, so this costs
nothing) and the two function addresses are handed to the generated code at load time
(`em_set_blas`), which keeps the compile command free of library paths.
"""
import ctypes
import functools
import glob
import os

__all__ = ["gemm_addresses"]

# (sgemm, dgemm) symbol names, newest NumPy wheels first
_SYMBOLS = (("scipy_cblas_sgemm64_", "scipy_cblas_dgemm64_"),
            ("cblas_sgemm64_", "cblas_dgemm64_"))


def _candidates():
    import numpy as np
    root = os.path.dirname(os.path.dirname(np.__file__))
    for pattern in ("numpy.libs/libscipy_openblas64_*.so*", "numpy.libs/libopenblas64_*.so*",
                    "numpy/.dylibs/libscipy_openblas64_*.dylib"):
        yield from sorted(glob.glob(os.path.join(root, pattern)))


@functools.lru_cache(maxsize=None)
def gemm_addresses():
    """(address of cblas_sgemm, address of cblas_dgemm) with 64-bit integer arguments, or
    None when NumPy's OpenBLAS is not found (a graph with matmul then keeps its Python
    wrapper, which calls NumPy)."""
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for s, d in _SYMBOLS:
            if hasattr(lib, s) and hasattr(lib, d):
                return (ctypes.cast(getattr(lib, s), ctypes.c_void_p).value,
                        ctypes.cast(getattr(lib, d), ctypes.c_void_p).value)
    return None
