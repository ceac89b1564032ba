"""Calls in the symbolic interpreter: the CALL opcodes and what a callee becomes.

An ember function runs on fake tensors and its ops are recorded (`call_ember`); an
autograd.Function or allow_in_graph function becomes one opaque node (`call_opaque`); a
NumPy function is traced as ember ops (numpy_interop.py); anything else is a
VariableTracker's `call_function`, which for a user function inlines its bytecode
(symbolic_convert.py). MAKE_FUNCTION builds the nested functions such calls may reach."""
from .._tensor import Tensor
from .exc import Unsupported
from .numpy_interop import _is_numpy_callable, _plain
from .variables.base import VariableTracker, ConstantVariable, unsupported
from .variables.builder import wrap_constant_result
from .variables.containers import (ListVariable, TupleVariable, DictVariable, SliceVariable,
                                   RangeVariable)
from .variables.functions import (NestedUserFunctionVariable, BuiltinVariable,
                                  EmberFunctionVariable)
from .variables.objects import NNModuleVariable, UserDefinedObjectVariable
from .variables.tensor import TensorVariable

__all__ = ["CallMixin", "NULL"]


class _Null(VariableTracker):
    """The NULL CPython pushes before a callable (3.11's calling convention)."""

    def __repr__(self):
        return "NULL"


NULL = _Null()


class CallMixin:
    """InstructionTranslatorBase's calls (a mixin: it reads the translator's stack)."""

    def wrap_result(self, out):
        """Wraps what an ember function returned on fake tensors."""
        if isinstance(out, Tensor):
            if id(out) in self.og.node_of:
                return TensorVariable(out)
            for tv in self.og.input_vars.values():
                if tv.fake is out:
                    return tv
            unsupported("an ember function returned a tensor the capture did not record")
        if isinstance(out, (tuple, list)) and not isinstance(out, str):
            items = [self.wrap_result(o) for o in out]
            if isinstance(out, list):
                return ListVariable(items, mutable_local=True)
            return TupleVariable(items, py_type=type(out) if type(out) is not tuple
                                 else tuple)
        return wrap_constant_result(out)

    def call_ember(self, fn, args, kwargs, name=None):
        a = [self.to_value(x) for x in args]
        k = {n: self.to_value(v) for n, v in kwargs.items()}
        og = self.og
        try:
            with og.recording():
                out = fn(*a, **k)
        except Unsupported:
            raise
        except NotImplementedError as e:
            unsupported(f"{name or fn}: {e}")
        except Exception as e:            # noqa: BLE001 - eager will raise it for real
            unsupported(f"{name or getattr(fn, '__name__', fn)} raised {type(e).__name__} "
                        f"on fake tensors: {e}")
        return self.wrap_result(out)

    def call_opaque(self, fn, args, kwargs, name):
        """`fn` as one graph node (its inside is not recorded): autograd.Function.apply,
        allow_in_graph functions."""
        a = [self.to_value(x) for x in args]
        k = {n: self.to_value(v) for n, v in kwargs.items()}
        og = self.og
        nargs = tuple(og.node_arg(x, name) for x in a)
        nkw = {n: og.node_arg(v, name) for n, v in k.items()}
        try:
            with og.fake_only():
                out = fn(*a, **k)
        except Unsupported:
            raise
        except Exception as e:            # noqa: BLE001 - eager will raise it for real
            unsupported(f"{name} raised {type(e).__name__} on fake tensors: {e}")
        node = og.graph.call_function(fn, nargs, nkw)
        og.bind(node, out)
        og.op_count += 1
        return self.wrap_result(out)

    def to_value(self, v):
        """A VariableTracker as the argument an ember function receives."""
        if isinstance(v, TensorVariable):
            return v.fake
        if isinstance(v, ConstantVariable):
            return v.value
        if isinstance(v, (TupleVariable, ListVariable)):
            vals = [self.to_value(x) for x in v.items]
            if v.py_type is list:
                return vals
            if hasattr(v.py_type, "_fields"):
                return v.py_type(*vals)
            return v.py_type(vals) if v.py_type is not tuple else tuple(vals)
        if isinstance(v, DictVariable):
            return {k: self.to_value(x) for k, x in v.items.items()}
        if isinstance(v, SliceVariable):
            return slice(*[self.to_value(p) for p in v.parts])
        if isinstance(v, (EmberFunctionVariable, BuiltinVariable)):
            return v.fn
        if isinstance(v, RangeVariable):
            return v.r
        if isinstance(v, NNModuleVariable):
            return v.value
        if hasattr(v, "value") and not isinstance(v, (UserDefinedObjectVariable,)):
            return v.value                 # classes (np.float32, dtypes), modules
        if isinstance(v, UserDefinedObjectVariable) and type(v.value).__module__ in (
                "numpy", "numpy.dtypes"):
            return v.value                 # np.dtype objects
        unsupported(f"passing {v} to an ember function")

    def construct_user_object(self, cls_var, args, kwargs):
        unsupported(f"creating a {cls_var.value.__name__} object inside the compiled region")

    def KW_NAMES(self, ins):
        self.kw_names = self.code.co_consts[ins.arg]

    def CALL(self, ins):
        argc = ins.arg
        args = self.popn(argc)
        a, b = self.pop(), self.pop()
        if b is NULL:
            fn = a
        else:
            fn, args = b, [a, *args]
        kw = {}
        if self.kw_names:
            names = self.kw_names
            self.kw_names = None
            vals = args[len(args) - len(names):]
            args = args[:len(args) - len(names)]
            kw = dict(zip(names, vals))
        self.push(self.call(fn, args, kw))

    def CALL_FUNCTION_EX(self, ins):
        kw = self.pop() if ins.arg & 1 else None
        args = self.pop()
        fn = self.pop()
        if self.stack and self.stack[-1] is NULL:
            self.pop()
        a = self.unpack_iterable(args)
        k = {}
        if kw is not None:
            if not isinstance(kw, DictVariable):
                unsupported("**kwargs from a non-dict")
            k = dict(kw.items)
        self.push(self.call(fn, a, k))

    def call(self, fn, args, kwargs):
        if isinstance(fn, BuiltinVariable) or isinstance(fn, EmberFunctionVariable):
            target = fn.fn
            if getattr(target, "__name__", "") in ("from_numpy", "as_tensor", "asarray") and \
                    args and isinstance(args[0], TensorVariable) and args[0].is_numpy and \
                    len(args) == 1 and not kwargs:
                return _plain(args[0])        # the same memory, seen as a tensor again
            if _is_numpy_callable(target):
                return self.numpy_call(target, args, kwargs)
        return fn.call_function(self, args, kwargs)

    def MAKE_FUNCTION(self, ins):
        code = self.pop().as_python_constant()
        flags = ins.arg
        cells = self.pop().items if flags & 0x08 else ()
        if flags & 0x04:
            self.pop()
        kwdefaults = self.to_value(self.pop()) if flags & 0x02 else None
        defaults = tuple(self.to_value(x) for x in self.pop().items) if flags & 0x01 else None
        self.push(NestedUserFunctionVariable(code, self.f_globals, code.co_name, defaults,
                                             kwdefaults, tuple(c.cell for c in cells)))
