"""Callables: user functions (inlined), ember functions (run on fake tensors, recorded),
Python builtins (evaluated on what the capture knows)."""
import builtins
import operator

from .base import VariableTracker, ConstantVariable, NotConstant, unsupported
from .containers import (ListVariable, TupleVariable, DictVariable, RangeVariable,
                         IteratorVariable, SetVariable, BaseListVariable)
from .tensor import TensorVariable

__all__ = ["UserFunctionVariable", "UserMethodVariable", "NestedUserFunctionVariable",
           "EmberFunctionVariable", "BuiltinVariable", "BoundBuiltinMethod", "TensorMethod"]


class FunctionLikeVariable(VariableTracker):
    """A callable the capture holds as itself (`fn`), read from `source`."""

    def __init__(self, fn, source=None):
        self.fn, self.source = fn, source

    def python_type(self):
        return type(self.fn)

    def as_python_constant(self):
        return self.fn


class UserFunctionVariable(FunctionLikeVariable):
    """A Python function of the user's program: calls are inlined into the graph."""

    def call_function(self, tx, args, kwargs):
        return tx.inline_user_function(self.fn, args, kwargs, fn_source=self.source)

    def var_getattr(self, tx, name):
        if name in ("__name__", "__qualname__", "__module__", "__doc__"):
            return ConstantVariable(getattr(self.fn, name))
        unsupported(f"attribute {name} of function {self.fn.__qualname__}")


class UserMethodVariable(VariableTracker):
    def __init__(self, fn, obj, source=None):
        self.fn, self.obj, self.source = fn, obj, source

    def call_function(self, tx, args, kwargs):
        return tx.inline_user_function(self.fn, [self.obj, *args], kwargs)


class NestedUserFunctionVariable(VariableTracker):
    """A function made inside the compiled region (a def or lambda in the user's code)."""

    def __init__(self, code, fglobals, name, defaults, kwdefaults, cells):
        self.code, self.fglobals, self.name = code, fglobals, name
        self.defaults, self.kwdefaults, self.cells = defaults, kwdefaults, cells

    def call_function(self, tx, args, kwargs):
        return tx.inline_nested_function(self, args, kwargs)


class EmberFunctionVariable(FunctionLikeVariable):
    """An ember function, registry op or Tensor method: run on fake tensors, recorded."""

    def call_function(self, tx, args, kwargs):
        return tx.call_ember(self.fn, args, kwargs, name=getattr(self.fn, "__name__", None))

    def var_getattr(self, tx, name):
        from ...ops._registry import OpDef, OpOverloadPacket
        from .builder import wrap_constant_result
        value = getattr(self.fn, name)
        if isinstance(value, (OpDef, OpOverloadPacket)):      # ops.<ns>.<op>.<overload>
            return EmberFunctionVariable(value, None)
        return wrap_constant_result(value)


class TensorMethod(VariableTracker):
    def __init__(self, tensor, name):
        self.tensor, self.name = tensor, name

    def call_function(self, tx, args, kwargs):
        return self.tensor.call_method(tx, self.name, args, kwargs)


class BoundBuiltinMethod(VariableTracker):
    """`lst.append`, `d.items`: a method of a tracked container."""

    def __init__(self, obj, name):
        self.obj, self.name = obj, name

    def call_function(self, tx, args, kwargs):
        return self.obj.call_method(tx, self.name, args, kwargs)


def _consts(args):
    return [a.as_python_constant() for a in args]


_PURE = {abs, all, any, bool, callable, chr, divmod, float, format, hash, hex, int, len, max,
         min, oct, ord, pow, repr, round, sorted, str, sum, bin, complex, frozenset}
_PURE_MODULES = ("math", "operator", "_operator", "functools", "itertools", "collections")


class BuiltinVariable(FunctionLikeVariable):
    """A Python builtin (or a pure function of math/operator)."""

    def __repr__(self):
        return f"BuiltinVariable({getattr(self.fn, '__name__', self.fn)})"

    def call_function(self, tx, args, kwargs):
        fn = self.fn
        handler = getattr(self, "_call_" + getattr(fn, "__name__", ""), None)
        if handler is not None and fn is getattr(builtins, fn.__name__, None):
            return handler(tx, args, kwargs)
        if any(isinstance(a, TensorVariable) for a in (*args, *kwargs.values())):
            if fn in _OP_FNS or getattr(fn, "__module__", None) in ("math", "_operator",
                                                                  "operator"):
                return tx.call_ember(fn, args, kwargs, name=getattr(fn, "__name__", None))
        from .objects import UserDefinedObjectVariable, NNModuleVariable
        if any(isinstance(v, (UserDefinedObjectVariable, NNModuleVariable))
               for v in (*args, *kwargs.values())):
            # a user object's __len__/__repr__/__eq__... would run here, untracked
            unsupported(f"builtin {getattr(fn, '__name__', fn)} on a user object")
        try:
            a, k = _consts(args), {n: v.as_python_constant() for n, v in kwargs.items()}
        except NotConstant:
            unsupported(f"builtin {getattr(fn, '__name__', fn)} on traced values "
                        f"{[type(x).__name__ for x in args]}")
        from .builder import wrap_constant_result
        return wrap_constant_result(fn(*a, **k))

    # ---- builtins that look inside tracked values
    def _call_len(self, tx, args, kwargs):
        (x,) = args
        if isinstance(x, TensorVariable):
            if x.fake.dim() == 0:
                unsupported("len() of a 0-d tensor")
            return tx.wrap_result(x.fake.shape[0])
        if isinstance(x, (BaseListVariable, DictVariable)):
            return ConstantVariable(len(x.items))
        from .objects import UserDefinedObjectVariable
        if isinstance(x, UserDefinedObjectVariable):
            return x.var_getattr(tx, "__len__").call_function(tx, [], {})
        return x.call_method(tx, "__len__", [], {})

    def _call_isinstance(self, tx, args, kwargs):
        x, cls = args
        try:
            c = cls.as_python_constant()
        except NotConstant:
            unsupported("isinstance with a traced class")
        t = x.python_type()
        from ... import _tensor
        if isinstance(x, TensorVariable) and x.real is not None:
            return ConstantVariable(isinstance(x.real, c))
        if isinstance(x, TensorVariable):
            return ConstantVariable(isinstance(x.fake, c))
        obj = getattr(x, "value", None)
        if obj is not None and not isinstance(x, ConstantVariable) or isinstance(
                x, ConstantVariable):
            return ConstantVariable(isinstance(x.value, c))
        del _tensor
        return ConstantVariable(issubclass(t, c))

    def _call_issubclass(self, tx, args, kwargs):
        return ConstantVariable(issubclass(*_consts(args)))

    def _call_type(self, tx, args, kwargs):
        if len(args) != 1:
            unsupported("type() with 3 arguments")
        from .builder import wrap_constant_result
        x = args[0]
        if isinstance(x, TensorVariable):
            return wrap_constant_result(x.python_type())
        if getattr(x, "source", None) is not None and hasattr(x, "value"):
            from ..source import TypeSource
            return tx.builder.wrap(type(x.value), TypeSource(x.source))
        return wrap_constant_result(x.python_type())

    def _call_range(self, tx, args, kwargs):
        return RangeVariable(range(*[tx.specialize(a) for a in args]))

    def _call_iter(self, tx, args, kwargs):
        return IteratorVariable(tx.unpack_iterable(args[0]))

    def _call_next(self, tx, args, kwargs):
        it = args[0]
        if not isinstance(it, IteratorVariable):
            unsupported("next() of an untracked iterator")
        v = it.next()
        if v is None:
            if len(args) > 1:
                return args[1]
            unsupported("next() of an exhausted iterator (StopIteration)")
        return v

    def _call_zip(self, tx, args, kwargs):
        cols = [tx.unpack_iterable(a) for a in args]
        return IteratorVariable([TupleVariable(list(t)) for t in zip(*cols)])

    def _call_enumerate(self, tx, args, kwargs):
        start = args[1].as_python_constant() if len(args) > 1 else (
            kwargs["start"].as_python_constant() if "start" in kwargs else 0)
        return IteratorVariable([TupleVariable([ConstantVariable(i + start), v])
                                 for i, v in enumerate(tx.unpack_iterable(args[0]))])

    def _call_reversed(self, tx, args, kwargs):
        return IteratorVariable(list(reversed(tx.unpack_iterable(args[0]))))

    def _call_list(self, tx, args, kwargs):
        return ListVariable(tx.unpack_iterable(args[0]) if args else [], mutable_local=True)

    def _call_tuple(self, tx, args, kwargs):
        return TupleVariable(tx.unpack_iterable(args[0]) if args else [])

    def _call_set(self, tx, args, kwargs):
        s = SetVariable([], mutable_local=True)
        for v in (tx.unpack_iterable(args[0]) if args else []):
            s.call_method(tx, "add", [v], {})
        return s

    def _call_dict(self, tx, args, kwargs):
        items = {}
        if args:
            src = args[0]
            if isinstance(src, DictVariable):
                items.update(src.items)
            else:
                for kv in tx.unpack_iterable(src):
                    k, v = tx.unpack_iterable(kv)
                    items[k.as_python_constant()] = v
        items.update(kwargs)
        return DictVariable(items, mutable_local=True)

    def _call_map(self, tx, args, kwargs):
        f, *its = args
        cols = [tx.unpack_iterable(a) for a in its]
        return IteratorVariable([f.call_function(tx, list(t), {}) for t in zip(*cols)])

    def _call_filter(self, tx, args, kwargs):
        f, it = args
        out = []
        for v in tx.unpack_iterable(it):
            keep = v if isinstance(f, ConstantVariable) and f.value is None \
                else f.call_function(tx, [v], {})
            if keep.truth(tx):
                out.append(v)
        return IteratorVariable(out)

    def _call_sum(self, tx, args, kwargs):
        items = tx.unpack_iterable(args[0])
        acc = args[1] if len(args) > 1 else kwargs.get("start", ConstantVariable(0))
        for v in items:
            acc = tx.binary_op(operator.add, acc, v)
        return acc

    def _minmax(self, tx, args, kwargs, pick):
        items = tx.unpack_iterable(args[0]) if len(args) == 1 else list(args)
        if any(isinstance(v, TensorVariable) for v in items) or "key" in kwargs:
            unsupported(f"{pick.__name__}() of tensors or with key= (data-dependent)")
        if not items:
            if "default" in kwargs:
                return kwargs["default"]
            unsupported(f"{pick.__name__}() of an empty sequence")
        from .builder import wrap_constant_result
        return wrap_constant_result(pick(_consts(items)))

    def _call_sorted(self, tx, args, kwargs):
        items = tx.unpack_iterable(args[0])
        if "key" in kwargs:
            keys = [kwargs["key"].call_function(tx, [v], {}) for v in items]
        else:
            keys = items
        try:
            order = sorted(range(len(items)), key=lambda i: keys[i].as_python_constant(),
                           reverse=bool(kwargs["reverse"].as_python_constant())
                           if "reverse" in kwargs else False)
        except NotConstant:
            unsupported("sorted() of traced values (data-dependent order)")
        return ListVariable([items[i] for i in order], mutable_local=True)

    def _call_min(self, tx, args, kwargs):
        return self._minmax(tx, args, kwargs, min)

    def _call_max(self, tx, args, kwargs):
        return self._minmax(tx, args, kwargs, max)

    def _call_all(self, tx, args, kwargs):
        return ConstantVariable(all(v.truth(tx) for v in tx.unpack_iterable(args[0])))

    def _call_any(self, tx, args, kwargs):
        return ConstantVariable(any(v.truth(tx) for v in tx.unpack_iterable(args[0])))

    def _call_bool(self, tx, args, kwargs):
        return ConstantVariable(args[0].truth(tx) if args else False)

    def _call_abs(self, tx, args, kwargs):
        if isinstance(args[0], TensorVariable):
            return tx.call_ember(operator.abs, args, {}, name="abs")
        return ConstantVariable(abs(args[0].as_python_constant()))

    def _call_getattr(self, tx, args, kwargs):
        obj, name = args[0], args[1].as_python_constant()
        try:
            return tx.getattr(obj, name)
        except AttributeError:
            if len(args) > 2:
                return args[2]
            raise

    def _call_hasattr(self, tx, args, kwargs):
        try:
            tx.getattr(args[0], args[1].as_python_constant())
            return ConstantVariable(True)
        except AttributeError:
            return ConstantVariable(False)

    def _call_setattr(self, tx, args, kwargs):
        tx.store_attr(args[0], args[1].as_python_constant(), args[2])
        return ConstantVariable(None)

    def _call_print(self, tx, args, kwargs):
        unsupported("print() (a Python side effect)")

    def _call_id(self, tx, args, kwargs):
        unsupported("id()")

    def _call_callable(self, tx, args, kwargs):
        x = args[0]
        if isinstance(x, (UserFunctionVariable, NestedUserFunctionVariable,
                          EmberFunctionVariable, BuiltinVariable, UserMethodVariable)):
            return ConstantVariable(True)
        return ConstantVariable(callable(getattr(x, "value", None)))

    def _call_int(self, tx, args, kwargs):
        return self._number(tx, args, int)

    def _call_float(self, tx, args, kwargs):
        return self._number(tx, args, float)

    def _number(self, tx, args, typ):
        if args and isinstance(args[0], TensorVariable):
            unsupported(f"{typ.__name__}() of a tensor (reads its value)")
        return ConstantVariable(typ(*_consts(args)))

    def _call_super(self, tx, args, kwargs):
        return tx.make_super(args)


_OP_FNS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
           operator.mod, operator.pow, operator.matmul, operator.neg, operator.pos,
           operator.abs, operator.invert, operator.and_, operator.or_, operator.xor,
           operator.lshift, operator.rshift, operator.lt, operator.le, operator.gt,
           operator.ge, operator.eq, operator.ne, operator.getitem, operator.iadd,
           operator.isub, operator.imul, operator.itruediv, operator.ifloordiv, operator.imod,
           operator.ipow, operator.imatmul, operator.iand, operator.ior, operator.ixor,
           operator.ilshift, operator.irshift}


def is_pure_builtin(fn):
    if not callable(fn):
        return False
    try:
        if fn in _PURE or fn in _OP_FNS:
            return True
    except TypeError:          # unhashable callable object
        return False
    if isinstance(fn, type):
        return fn.__module__ == "builtins"
    return getattr(fn, "__module__", None) in _PURE_MODULES

