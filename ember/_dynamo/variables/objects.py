"""Real objects the capture reads through their sources: nn.Modules, user objects and
classes, Python modules, and the grad-mode context managers."""
import collections
import inspect
import types

from ..._dispatch import STATE
from ..source import AttrSource, DictAttrSource, TypeSource
from .base import VariableTracker, ConstantVariable, unsupported
from .containers import TupleVariable, IteratorVariable
from .functions import UserMethodVariable, UserFunctionVariable, BuiltinVariable

__all__ = ["NNModuleVariable", "UserDefinedObjectVariable", "UserDefinedClassVariable",
           "PythonModuleVariable", "GradModeVariable", "GradModeClassVariable",
           "SuperVariable"]


def _class_attr(cls, name):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    raise AttributeError(name)


class _ObjectVariable(VariableTracker):
    def __init__(self, value, source=None):
        self.value, self.source = value, source
        self.pending = {}          # attributes set in the region (applied after the graph)

    def python_type(self):
        return type(self.value)

    def as_python_constant(self):
        return self.value

    def __repr__(self):
        return f"{type(self).__name__}({type(self.value).__name__})"

    def _attr_source(self, name):
        return AttrSource(self.source, name) if self.source is not None else None

    def _class_member(self, tx, name):
        attr = _class_attr(type(self.value), name)
        if isinstance(attr, types.FunctionType):
            if self.source is not None and not (attr.__module__ or "").startswith("ember"):
                # a method replaced on the class recompiles
                tx.og.guards.identity(AttrSource(TypeSource(self.source), name), attr)
            return UserMethodVariable(attr, self)
        if isinstance(attr, property):
            if attr.fget is None:
                raise AttributeError(name)
            return tx.inline_user_function(attr.fget, [self], {})
        if isinstance(attr, staticmethod):
            return tx.builder.wrap(attr.__func__, None)
        if isinstance(attr, classmethod):
            return UserMethodVariable(attr.__func__, tx.builder.wrap(type(self.value), None))
        if hasattr(type(attr), "__get__") and not isinstance(attr, (int, float, str)):
            return tx.builder.wrap(getattr(self.value, name), self._attr_source(name))
        return tx.builder.wrap(attr, self._attr_source(name))

    def call_function(self, tx, args, kwargs):
        try:
            call = _class_attr(type(self.value), "__call__")
        except AttributeError:
            unsupported(f"calling a {type(self.value).__name__}")
        if not isinstance(call, types.FunctionType):
            unsupported(f"calling a {type(self.value).__name__} (C-level __call__)")
        return tx.inline_user_function(call, [self, *args], kwargs)


class UserDefinedObjectVariable(_ObjectVariable):
    def var_getattr(self, tx, name):
        from ...futures import Future
        if isinstance(self.value, Future) and not name.startswith("__"):
            from ..exc import RemoteCallBreak
            raise RemoteCallBreak(f"Future.{name}: waiting on a future runs outside the graph")
        if name in self.pending:
            return self.pending[name]
        obj = self.value
        cls = type(obj)
        if getattr(cls, "_capture_static_attrs", False):   # ops.aten.add.Tensor: fixed names
            return tx.builder.wrap(getattr(obj, name), None)
        if ("__getattr__" in cls.__dict__ or cls.__getattribute__ is not object.__getattribute__) \
                and cls is not types.SimpleNamespace:   # generic getattr (fx code's op paths)
            unsupported(f"{cls.__name__} customizes attribute access")
        d = getattr(obj, "__dict__", None)
        if d is not None and name in d:
            return tx.builder.wrap(d[name], self._attr_source(name))
        try:
            return self._class_member(tx, name)
        except AttributeError:
            pass
        if hasattr(obj, name):           # slots and C-level attributes
            return tx.builder.wrap(getattr(obj, name), self._attr_source(name))
        if self.source is not None:
            tx.og.guards.absent(self.source, name)
        raise AttributeError(f"'{cls.__name__}' object has no attribute '{name}'")


class NNModuleVariable(_ObjectVariable):
    """An nn.Module (ember's own or the user's): its forward is inlined, its parameters and
    buffers are graph inputs named by their attribute path."""

    def var_getattr(self, tx, name):
        if name in self.pending:
            return self.pending[name]
        m = self.value
        if name in ("items", "values", "keys", "__len__", "__getitem__", "__iter__") and \
                _is_container(m):
            from .functions import BoundBuiltinMethod
            return BoundBuiltinMethod(self, name)
        d = m.__dict__
        if name in d:
            return tx.builder.wrap(d[name], self._attr_source(name))
        for dict_name in ("_parameters", "_buffers", "_modules"):
            sub = d.get(dict_name)
            if sub is not None and name in sub:
                src = DictAttrSource(self.source, dict_name, name) if self.source else None
                return tx.builder.wrap(sub[name], src)
        try:
            return self._class_member(tx, name)
        except AttributeError:
            pass
        if self.source is not None:
            tx.og.guards.absent(self.source, name)
        raise AttributeError(f"'{type(m).__name__}' object has no attribute '{name}'")

    def call_function(self, tx, args, kwargs):
        m = self.value
        if (m._forward_hooks or m._forward_pre_hooks or m._backward_hooks
                or m._backward_pre_hooks):
            unsupported(f"calling {type(m).__name__} with module hooks registered")
        if self.source is not None:
            tx.og.guards.no_new_hooks()
        fwd = self.var_getattr(tx, "forward")
        return fwd.call_function(tx, args, kwargs)

    def _children(self, tx):
        src = self.source
        if src is not None:
            tx.og.guards.keys(AttrSource(src, "_modules"), self.value._modules)
        return [(k, tx.builder.wrap(v, DictAttrSource(src, "_modules", k) if src else None))
                for k, v in self.value._modules.items() if v is not None]

    def unpack(self, tx):
        from ...nn.modules.container import ModuleDict
        kids = self._children(tx)
        if isinstance(self.value, ModuleDict):
            return [ConstantVariable(k) for k, _ in kids]
        return [v for _, v in kids]

    def call_method(self, tx, name, args, kwargs):
        from ...nn.modules.container import ModuleDict, ModuleList, Sequential
        m = self.value
        if isinstance(m, (ModuleList, Sequential, ModuleDict)):
            if name == "__len__":
                return ConstantVariable(len(m))
            if name == "__getitem__":
                key = args[0].as_python_constant()
                kids = self._children(tx)
                if isinstance(key, str):
                    return dict(kids)[key]
                if isinstance(key, slice):
                    unsupported("slicing a module container")
                return kids[key][1]
            if isinstance(m, ModuleDict) and name in ("items", "values", "keys"):
                kids = self._children(tx)
                if name == "keys":
                    return TupleVariable([ConstantVariable(k) for k, _ in kids])
                if name == "values":
                    return TupleVariable([v for _, v in kids])
                return TupleVariable([TupleVariable([ConstantVariable(k), v]) for k, v in kids])
        if name in ("parameters", "buffers", "children", "named_parameters", "named_buffers",
                    "named_children", "modules", "named_modules"):
            return self._walk(tx, name, args, kwargs)
        return super().call_method(tx, name, args, kwargs)

    def _walk(self, tx, name, args, kwargs):
        a = [x.as_python_constant() for x in args]
        k = {n: x.as_python_constant() for n, x in kwargs.items()}
        named = name.startswith("named_")
        meth = name if named else "named_" + name
        out = []
        for qual, obj in getattr(self.value, meth)(*a, **k):
            src = self.source
            parts = qual.split(".") if qual else []
            for i, p in enumerate(parts):
                last = i == len(parts) - 1
                dict_name = ("_modules" if not last or meth in ("named_children",
                                                                 "named_modules")
                             else "_parameters" if "param" in meth else "_buffers")
                src = DictAttrSource(src, dict_name, p) if src is not None else None
            v = tx.builder.wrap(obj, src)
            out.append(TupleVariable([ConstantVariable(qual), v]) if named else v)
        return IteratorVariable(out)


def _is_container(m):
    from ...nn.modules.container import ModuleDict, ModuleList, Sequential
    return isinstance(m, (ModuleList, Sequential, ModuleDict))


class UserDefinedClassVariable(_ObjectVariable):
    def var_getattr(self, tx, name):
        from ...autograd.function import Function
        if name == "apply" and issubclass(self.value, Function):
            return FunctionApplyVariable(self.value)
        attr = inspect.getattr_static(self.value, name)
        if isinstance(attr, classmethod):
            return UserMethodVariable(attr.__func__, self)
        if isinstance(attr, staticmethod):
            return tx.builder.wrap(attr.__func__, None)
        if isinstance(attr, types.FunctionType):
            return UserFunctionVariable(attr)
        return tx.builder.wrap(getattr(self.value, name), self._attr_source(name))

    def call_function(self, tx, args, kwargs):
        cls = self.value
        import itertools
        if cls is itertools.chain and not kwargs:
            return IteratorVariable([v for a in args for v in tx.unpack_iterable(a)])
        if cls in (collections.OrderedDict, collections.defaultdict) and not args[1:]:
            from .containers import DictVariable
            d = DictVariable({}, mutable_local=True, py_type=cls)
            if cls is collections.defaultdict and args:
                d.default_factory = args[0]
            elif args:
                d.items.update(tx.call(BuiltinVariable(dict), [args[0]], {}).items)
            d.items.update(kwargs)
            return d
        if issubclass(cls, tuple) and hasattr(cls, "_fields"):       # namedtuple
            vals = list(args) + [kwargs[f] for f in cls._fields[len(args):] if f in kwargs]
            return TupleVariable(vals, py_type=cls)
        from ...autograd.function import Function
        if issubclass(cls, Function):
            unsupported(f"constructing autograd.Function {cls.__name__}")
        return tx.construct_user_object(self, args, kwargs)


def _stable_module(mod):
    name = mod.__name__
    return name == "ember" or name.startswith(("ember.", "numpy", "math", "operator",
                                               "functools", "itertools", "collections"))


class FunctionApplyVariable(VariableTracker):
    """`MyFunction.apply`: one graph node calling the real Function, so its forward runs
    and its backward is the user's, as in eager (the forward is checked on fake tensors)."""

    def __init__(self, cls):
        self.cls = cls

    def call_function(self, tx, args, kwargs):
        return tx.call_opaque(self.cls.apply, args, kwargs,
                              name=f"{self.cls.__name__}.apply")


class PythonModuleVariable(_ObjectVariable):
    def var_getattr(self, tx, name):
        mod = self.value
        if not hasattr(mod, name):
            raise AttributeError(f"module '{mod.__name__}' has no attribute '{name}'")
        value = getattr(mod, name)
        if _stable_module(mod) and callable(value):
            return tx.builder.wrap(value, None)   # ember.relu, math.sqrt: not rebound
        return tx.builder.wrap(value, self._attr_source(name))


class GradModeClassVariable(_ObjectVariable):
    """ember.no_grad / enable_grad / set_grad_enabled / inference_mode (the classes)."""

    def call_function(self, tx, args, kwargs):
        from ...autograd import grad_mode as gm
        cls = self.value
        if cls is gm.set_grad_enabled:
            mode = bool(args[0].as_python_constant() if args else
                        kwargs["mode"].as_python_constant())
            prev = STATE.grad_enabled
            tx.set_grad_mode(mode)             # takes effect immediately, as torch's
            return GradModeVariable(mode, prev, entered=True)
        if cls is gm.no_grad:
            return GradModeVariable(False)
        if cls is gm.enable_grad:
            return GradModeVariable(True)
        if cls is gm.inference_mode:
            mode = args[0].as_python_constant() if args else (
                kwargs["mode"].as_python_constant() if "mode" in kwargs else True)
            if mode:
                unsupported("inference_mode inside the compiled region")
            return GradModeVariable(STATE.grad_enabled)
        unsupported(f"{cls.__name__}")


class GradModeVariable(VariableTracker):
    mutable_local = True

    def __init__(self, mode, prev=None, entered=False):
        self.mode, self.prev, self.entered = mode, prev, entered

    def enter(self, tx):
        if not self.entered:
            self.prev = STATE.grad_enabled
        tx.set_grad_mode(self.mode)
        return ConstantVariable(None)

    def exit(self, tx):
        tx.set_grad_mode(self.prev)
        return ConstantVariable(False)

    def call_function(self, tx, args, kwargs):
        if len(args) == 1 and isinstance(args[0], (UserFunctionVariable,)):
            return _GradModeWrapped(self.mode, args[0])
        unsupported("calling a grad-mode object")

    def var_getattr(self, tx, name):
        if name == "__exit__":
            return _Bound(self.exit)
        if name == "__enter__":
            return _Bound(self.enter)
        unsupported(f"grad mode .{name}")


class _Bound(VariableTracker):
    def __init__(self, fn):
        self.fn = fn
        self.owner = getattr(fn, "__self__", None)

    def call_function(self, tx, args, kwargs):
        return self.fn(tx)


class _GradModeWrapped(VariableTracker):
    def __init__(self, mode, fn):
        self.mode, self.fn = mode, fn

    def call_function(self, tx, args, kwargs):
        prev = STATE.grad_enabled
        tx.set_grad_mode(self.mode)
        out = self.fn.call_function(tx, args, kwargs)
        tx.set_grad_mode(prev)
        return out


class SuperVariable(VariableTracker):
    def __init__(self, cls, obj):
        self.cls, self.obj = cls, obj

    def var_getattr(self, tx, name):
        mro = type(self.obj.value).__mro__
        for klass in mro[mro.index(self.cls) + 1:]:
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                if isinstance(attr, types.FunctionType):
                    return UserMethodVariable(attr, self.obj)
                return tx.builder.wrap(attr, None)
        raise AttributeError(name)


class ContextObjectVariable(_ObjectVariable):
    """A context manager whose enter/exit change ember's global state (autocast,
    record_function, nullcontext): entered for real while capturing and replayed as graph
    effects, so the ops inside are recorded as they run in eager."""

    def enter(self, tx):
        tx.ctx_effect("enter", self.value)
        return self

    def exit(self, tx):
        tx.ctx_effect("exit", self.value)
        return ConstantVariable(False)

    def var_getattr(self, tx, name):
        if name == "__exit__":
            return _Bound(self.exit)
        if name == "__enter__":
            return _Bound(self.enter)
        return super().var_getattr(tx, name)


class ContextClassVariable(_ObjectVariable):
    """ember.autocast / ember.amp.autocast / record_function / nullcontext (the class)."""

    def call_function(self, tx, args, kwargs):
        try:
            a = [x.as_python_constant() for x in args]
            k = {n: x.as_python_constant() for n, x in kwargs.items()}
        except Exception:          # noqa: BLE001
            unsupported(f"{self.value.__name__}() with traced arguments")
        return ContextObjectVariable(self.value(*a, **k))
