"""ndarray methods, attributes and Python operators on a Tensor standing for an ndarray.

Note: each method is the module-level function with the array first (`a.sum(axis=0)` is
`np.sum(a, axis=0)`), except where ndarray's signature differs (`reshape(*shape)`,
`transpose(*axes)`, `astype`, `flatten`, `copy`). `sort` and `fill` write into
the array (an ember in-place op, as NumPy mutates it); `resize` and the methods that read
data to the host (item, tolist, __bool__) are not in the table, so the capture
graph-breaks on them.
"""
import numpy as np

import ember
from .. import _dtype as D
from ._util import Unsupported, cast, to_ember_dtype


def _m_reshape(self, *shape, order="C", copy=None):
    from ._shape import reshape
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return reshape(self, shape, order=order)


def _m_transpose(self, *axes):
    from ._shape import transpose
    if not axes or (len(axes) == 1 and axes[0] is None):
        return transpose(self)
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return transpose(self, axes)


def _m_astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    d = to_ember_dtype(dtype, "astype")
    if not np.can_cast(self.dtype.np, d.np, casting):
        raise TypeError(f"Cannot cast array data from {self.dtype.np!r} to {d.np!r} "
                        f"according to the rule {casting!r}")
    if self.dtype is d:
        return ember.clone(self) if copy else self
    if d is D.bool:
        return self != 0
    if self.dtype._kind == 2 and d._kind == 1:
        # NumPy's float -> int cast truncates; NaN/inf give the platform's value.
        return ember.trunc(self).to(d)
    return self.to(d)


def _m_flatten(self, order="C"):
    if order not in ("C", "K", "A"):
        raise Unsupported(f"ndarray.flatten(order={order!r})")
    return ember.clone(self.reshape(-1))


def _m_copy(self, order="C"):
    return ember.clone(self)


def _m_squeeze(self, axis=None):
    from ._shape import squeeze
    return squeeze(self, axis)


def _m_swapaxes(self, axis1, axis2):
    from ._shape import swapaxes
    return swapaxes(self, axis1, axis2)


def _m_view(self, dtype=None, type=None):
    if dtype is None and type is None:
        return self.view(tuple(self.shape))
    raise Unsupported("ndarray.view(dtype) reinterprets bytes; not traced")


def _m_sort(self, axis=-1, kind=None, order=None, *, stable=None):
    """ndarray.sort: sorts in place (written back into the array) and returns None."""
    from ._misc import sort
    if axis is None:
        raise TypeError("'NoneType' object cannot be interpreted as an integer")
    self.copy_(sort(self, axis, kind, order, stable=stable))


def _m_fill(self, value):
    """ndarray.fill: every element set to value (cast as NumPy's setitem casts)."""
    if isinstance(value, ember.Tensor):
        self.copy_(ember.broadcast_to(cast(value.reshape(()), self.dtype), tuple(self.shape)))
    else:
        self.fill_(np.asarray(value).astype(self.dtype.np).item())


def _m_conj(self):
    if not self.dtype.is_complex:
        return ember.clone(self)        # ndarray.conj keeps a real array's dtype
    from ._ufuncs import make_ufunc
    return make_ufunc(np.conjugate)(self)


def _methods():
    from . import _linalg, _misc, _reductions, _shape
    fns = {}
    for mod, names in (
            (_reductions, "sum prod mean std var max min argmax argmin all any cumsum "
                          "cumprod"),
            (_shape, "ravel repeat diagonal take"),
            (_misc, "clip round nonzero argsort searchsorted"),
            (_linalg, "dot trace")):
        for n in names.split():
            fns[n] = getattr(mod, n)
    fns.update(reshape=_m_reshape, transpose=_m_transpose, astype=_m_astype,
               flatten=_m_flatten, copy=_m_copy, squeeze=_m_squeeze, swapaxes=_m_swapaxes,
               view=_m_view, conj=_m_conj, conjugate=_m_conj, sort=_m_sort, fill=_m_fill,
               __copy__=_m_copy, __deepcopy__=lambda self, memo=None: ember.clone(self))
    from ._indexing import getitem, setitem
    fns.update(__getitem__=getitem, __setitem__=setitem)
    return fns


def _attributes():
    def real(x):
        return ember.real(x) if x.dtype.is_complex else x

    def imag(x):
        return ember.imag(x) if x.dtype.is_complex else ember.zeros_like(x)

    def mT(x):
        if x.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return x.swapaxes(-1, -2)

    return {
        "T": lambda x: x.permute(*reversed(range(x.ndim))),
        "mT": mT,
        "shape": lambda x: tuple(x.shape),
        "ndim": lambda x: x.ndim,
        "size": lambda x: x.numel(),
        "dtype": lambda x: x.dtype.np,
        "itemsize": lambda x: x.dtype.itemsize,
        "nbytes": lambda x: x.numel() * x.dtype.itemsize,
        "real": real,
        "imag": imag,
    }


METHODS = None
ATTRIBUTES = None


def lookup_method(name):
    """The ndarray method `name` as a function taking the array first, or None (the
    capture graph-breaks on methods not listed)."""
    global METHODS
    if METHODS is None:
        METHODS = _methods()
    return METHODS.get(name)


def lookup_attribute(name):
    """The ndarray attribute `name` as a function of the array, or None."""
    global ATTRIBUTES
    if ATTRIBUTES is None:
        ATTRIBUTES = _attributes()
    return ATTRIBUTES.get(name)


# --- Python operators --------------------------------------------------------------------

_BINARY = {
    "add": "add", "+": "add", "sub": "subtract", "-": "subtract", "mul": "multiply",
    "*": "multiply", "truediv": "true_divide", "/": "true_divide",
    "floordiv": "floor_divide", "//": "floor_divide", "mod": "remainder",
    "%": "remainder", "pow": "power", "**": "power", "and": "bitwise_and",
    "and_": "bitwise_and", "&": "bitwise_and", "or": "bitwise_or", "or_": "bitwise_or",
    "|": "bitwise_or", "xor": "bitwise_xor", "^": "bitwise_xor", "lshift": "left_shift",
    "<<": "left_shift", "rshift": "right_shift", ">>": "right_shift", "eq": "equal",
    "==": "equal", "ne": "not_equal", "!=": "not_equal", "lt": "less", "<": "less",
    "le": "less_equal", "<=": "less_equal", "gt": "greater", ">": "greater",
    "ge": "greater_equal", ">=": "greater_equal", "matmul": "matmul", "@": "matmul",
    "divmod": "divmod",
}
_UNARY = {"neg": "negative", "-": "negative", "pos": "positive", "+": "positive",
          "invert": "invert", "inv": "invert", "~": "invert", "abs": "absolute"}


def _norm_op(opname):
    return opname.strip("_") if opname.startswith("__") else opname


def _ufunc(npname):
    if npname == "matmul":
        from ._linalg import matmul
        return matmul
    from ._ufuncs import make_ufunc
    return make_ufunc(getattr(np, npname))


def binary_op(opname, a, b):
    """`a <op> b` with NumPy semantics, where a or b is a Tensor standing for an ndarray.
    opname: an `operator` name ('add', 'truediv', 'and_', 'matmul', '__radd__' is
    not needed: pass the operands in source order) or the symbol ('+', '/', '@')."""
    name = _BINARY.get(_norm_op(opname))
    if name is None:
        raise Unsupported(f"Python operator {opname!r} on ndarrays")
    if (name == "power" and type(b) is int and b == 2 and getattr(a, "dtype", None)
            is D.bool):
        name = "square"         # ndarray.__pow__'s fast path: bool ** 2 is square (int8)
    if name == "square":
        return _ufunc(name)(a)
    return _ufunc(name)(a, b)


def unary_op(opname, a):
    """`<op> a` (-a, +a, ~a, abs(a)) with NumPy semantics."""
    name = _UNARY.get(_norm_op(opname))
    if name is None:
        raise Unsupported(f"Python operator {opname!r} on ndarrays")
    return _ufunc(name)(a)


def inplace_op(opname, a, b):
    """`a <op>= b` on an ndarray: NumPy computes the op, casts the result back to a's dtype
    under 'same_kind' rules (UFuncTypeError otherwise) and writes it into a, which is
    returned (so views of a see the change)."""
    name = _norm_op(opname)
    name = name[1:] if name.startswith("i") and name not in ("invert",) else name
    name = name[:-1] if name.endswith("=") else name
    res = binary_op(name, a, b)
    if not np.can_cast(res.dtype.np, a.dtype.np, "same_kind"):
        ufname = _BINARY[name]
        raise np._core._exceptions._UFuncOutputCastingError(
            getattr(np, ufname), "same_kind", res.dtype.np, a.dtype.np, 0)
    if tuple(res.shape) != tuple(a.shape):
        raise ValueError(f"non-broadcastable output operand with shape {tuple(a.shape)} "
                         f"doesn't match the broadcast shape {tuple(res.shape)}")
    a.copy_(cast(res, a.dtype))
    return a

