"""NumPy in the symbolic interpreter: ndarray code traced as ember ops.

An ndarray is a TensorVariable flagged `is_numpy`: its attributes, methods, operators and
the numpy functions applied to it run through ember._numpy's tensor implementations, so
they land in the graph; `from_numpy` of it is the same memory seen as a tensor again."""
from .variables.base import VariableTracker, unsupported
from .variables.containers import BaseListVariable
from .variables.tensor import TensorVariable

__all__ = ["NumpyMixin"]


class NumpyMixin:
    """InstructionTranslatorBase's ndarray handling (a mixin)."""

    def to_numpy(self, tv):
        return TensorVariable(tv.fake, is_numpy=True)

    def numpy_attr(self, tv, name):
        from .. import _numpy
        impl = _numpy.lookup_attribute(name)
        if impl is None:
            impl_m = _numpy.lookup_method(name)
            if impl_m is None:
                unsupported(f"ndarray attribute '{name}'")
            return _NumpyMethod(tv, name)
        return self._numpy_wrap(self.call_ember(impl, [_plain(tv)], {}, name=f"ndarray.{name}"))

    def numpy_method(self, tv, name, args, kwargs):
        from .. import _numpy
        impl = _numpy.lookup_method(name)
        if impl is None:
            unsupported(f"ndarray.{name}")
        return self._numpy_wrap(self.call_ember(impl, [_plain(tv), *args], kwargs,
                                                name=f"ndarray.{name}"))

    def numpy_call(self, fn, args, kwargs):
        from .. import _numpy
        impl = _numpy.lookup(fn)
        if impl is None:
            unsupported(f"numpy function {getattr(fn, '__name__', fn)}")
        args = [_plain(a) for a in args]
        kwargs = {k: _plain(v) for k, v in kwargs.items()}
        return self._numpy_wrap(self.call_ember(impl, args, kwargs,
                                                name=f"numpy.{fn.__name__}"))

    def numpy_binary(self, fn, a, b):
        from .. import _numpy
        name = fn.__name__
        if name.startswith("i") and name not in ("is_", "is_not") and isinstance(
                a, TensorVariable) and a.is_numpy:
            op = _numpy.inplace_op
        else:
            op = _numpy.binary_op
        out = self.call_ember(lambda x, y: op(name, x, y), [_plain(a), _plain(b)], {},
                              name=name)
        if op is _numpy.inplace_op and isinstance(out, TensorVariable):
            return a if out.fake is a.fake else self._numpy_wrap(out)
        return self._numpy_wrap(out)

    def _numpy_wrap(self, v):
        if isinstance(v, TensorVariable):
            return TensorVariable(v.fake, is_numpy=True)
        if isinstance(v, BaseListVariable):
            v.items = [self._numpy_wrap(x) for x in v.items]
        return v


class _NumpyMethod(VariableTracker):  # noqa: D101
    def __init__(self, tv, name):
        self.tv, self.name = tv, name
        self.obj = tv

    def call_function(self, tx, args, kwargs):
        return tx.numpy_method(self.tv, self.name, args, kwargs)


def _plain(v):
    if isinstance(v, TensorVariable) and v.is_numpy:
        return TensorVariable(v.fake, v.source, v.real)
    return v


def _is_numpy_callable(fn):
    mod = getattr(fn, "__module__", None) or ""
    return (mod == "numpy" or mod.startswith("numpy.")) and callable(fn) \
        or type(fn).__name__ == "ufunc"
