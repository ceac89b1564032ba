"""NumPy's functions implemented with ember ops, for compiling NumPy code (torch._numpy).

Note: `ember.compile` stands each ndarray for an ember Tensor inside the graph; when the
captured code calls a NumPy function, `lookup(fn)` gives the ember implementation, which
takes Tensors (and Python scalars) and returns Tensors with NumPy's semantics - NumPy 2
dtype promotion (NEP 50), NumPy's argument names and defaults, NumPy's exceptions - using
ember ops only (no host reads), so it records on fake tensors. A function without an
entry (or one raising `Unsupported` for an argument it does not trace) is a graph break:
it then runs in real NumPy. `GRAPH_BREAK` names NumPy functions left out on purpose and
why. Where NumPy returns a scalar (np.float64) the result here is a 0-d Tensor (PyTorch's
compiled NumPy returns 0-d arrays there too). The dtypes NumPy picks by default (float64,
complex128, int64 when no input has them) follow ember._dynamo.config.numpy_default_*.
`lookup_method`/`lookup_attribute` give ndarray methods and attributes, `binary_op`,
`unary_op`, `inplace_op` the Python operators, all with the array as a Tensor.
"""
import numpy as np

from ._ndarray import binary_op, inplace_op, lookup_attribute, lookup_method, unary_op
from ._util import Unsupported, to_ember_dtype, to_numpy_dtype

__all__ = ["lookup", "lookup_method", "lookup_attribute", "binary_op", "unary_op",
           "inplace_op", "table", "Unsupported", "GRAPH_BREAK", "to_ember_dtype",
           "to_numpy_dtype"]

# NumPy functions deliberately not traced: their result is a Python value computed from
# the data (a host read), or they need randomness / dtypes ember lacks.
GRAPH_BREAK = {
    "allclose": "returns a Python bool computed from the data (host read)",
    "array_equal": "returns a Python bool computed from the data (host read)",
    "array_equiv": "returns a Python bool computed from the data (host read)",
    "isscalar": "a Python-level type test",
    "random": "numpy.random draws from NumPy's generator, not ember's",
    "unique": "data-dependent output size with NumPy's sorted/flag variants",
    "bincount": "output length is max(x) + 1, a data value",
    "nonzero-style boolean indexing": "a[mask] has a data-dependent size (ember's "
                                      "nonzero cannot run on fake tensors)",
}

_MODULES = {
    "_reductions": "sum prod mean std var max amax min amin ptp argmax argmin all any "
                   "cumsum cumprod count_nonzero nansum nanprod nancumsum nancumprod "
                   "nanmean nanvar nanstd nanmax nanmin nanargmax nanargmin median "
                   "nanmedian quantile percentile nanquantile nanpercentile average",
    "_shape": "reshape transpose permute_dims matrix_transpose swapaxes moveaxis "
              "expand_dims squeeze ravel concatenate concat stack atleast_1d atleast_2d "
              "atleast_3d vstack hstack dstack column_stack split array_split hsplit "
              "vsplit flip fliplr flipud rot90 roll tile repeat broadcast_to "
              "broadcast_arrays append take take_along_axis diagonal shape ndim size",
    "_linalg": "matmul dot vdot inner outer tensordot einsum kron trace",
    "_creation": "zeros ones empty full zeros_like ones_like empty_like full_like arange "
                 "linspace logspace eye identity tri tril triu diag meshgrid array "
                 "asarray asanyarray ascontiguousarray copy",
    "_misc": "where nonzero argwhere flatnonzero clip isclose sort argsort searchsorted "
             "diff pad round around fix real imag angle iscomplex isreal nan_to_num "
             "sinc cross",
    "_stats": "cov corrcoef trapezoid interp i0 select isin triu_indices tril_indices "
              "unravel_index cumulative_sum cumulative_prod vecdot astype isposinf isneginf "
              "convolve correlate",
}
_LINALG = ("inv det slogdet cholesky eigvalsh pinv solve matrix_power multi_dot norm "
           "vector_norm matrix_norm eigh svd svdvals qr matrix_rank")
_LINALG_SHARED = "tensordot matmul matrix_transpose vecdot"

# np.float32(x) etc.: a cast of an array (NumPy returns an array for ndim > 0).
_SCALAR_TYPES = (np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16,
                 np.float32, np.float64, np.complex64, np.complex128)

_TABLE = None


def _build():
    import importlib
    from ._ufuncs import ufunc_table
    table = dict(ufunc_table())
    for mod, names in _MODULES.items():
        m = importlib.import_module(f"{__name__}.{mod}")
        for n in names.split():
            impl = getattr(m, "round" if n == "around" else n)
            fn = getattr(np, n, None)
            if fn is not None:
                table.setdefault(fn, impl)
    from . import _fft, _histogram, _index_tricks, _linalg, _misc, _shape, _stats
    table[np.histogram] = _histogram.histogram
    for n in _fft.NAMES.split():
        table[getattr(np.fft, n)] = getattr(_fft, n)
    for n in _index_tricks.NAMES.split():
        table[getattr(np, n)] = getattr(_index_tricks, n)
    for t in _SCALAR_TYPES:
        table[t] = _stats.scalar_type(t)
    for n in _LINALG.split():
        fn = getattr(np.linalg, n, None)
        if fn is not None:
            table[fn] = getattr(_linalg, n)
    for n in _LINALG_SHARED.split():
        fn = getattr(np.linalg, n, None)
        impl = (getattr(_linalg, n, None) or getattr(_misc, n, None)
                or getattr(_shape, n, None))
        if fn is not None and impl is not None and fn not in table:
            table[fn] = impl
    return table


def table():
    """{NumPy callable: ember implementation} for everything traced."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _build()
    return _TABLE


def lookup(fn):
    """The ember implementation of NumPy callable `fn` (np.sin, np.sum, np.linalg.norm),
    or None when it is not traced (the capture graph-breaks)."""
    try:
        return table().get(fn)
    except TypeError:          # unhashable callables are never in the table
        return None
