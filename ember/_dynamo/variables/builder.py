"""Turning real values the capture reads into VariableTrackers, installing their guards."""
import builtins
import collections
import enum
import types

import numpy as np

from ... import _dtype as D
from ..._device import device as _Device
from ..._tensor import Tensor, Size
from ...ops._registry import OpDef, OpOverloadPacket
from .base import ConstantVariable, VariableTracker, unsupported
from .containers import (ListVariable, TupleVariable, DictVariable, SliceVariable,
                         RangeVariable)
from .functions import (UserFunctionVariable, UserMethodVariable, EmberFunctionVariable,
                        BuiltinVariable, is_pure_builtin)
from .objects import (ContextClassVariable, ContextObjectVariable, NNModuleVariable,
                      UserDefinedObjectVariable, UserDefinedClassVariable,
                      PythonModuleVariable, GradModeClassVariable)
from ..source import ItemSource, DictAttrSource

__all__ = ["VariableBuilder", "wrap_constant_result", "is_allowed", "allow_in_graph"]

_CONST_TYPES = (int, float, bool, str, bytes, complex, type(None), type(Ellipsis),
                D.dtype, _Device, enum.Enum, np.dtype, np.generic)

_ALLOWED = set()          # user functions marked allow_in_graph
# ember callables with effects outside the graph: calling one is a graph break
_EFFECTFUL = {"manual_seed", "seed", "set_rng_state", "set_default_dtype",
              "set_default_tensor_type", "use_deterministic_algorithms", "save", "load",
              "set_printoptions", "set_num_threads", "set_flush_denormal",
              "set_anomaly_enabled", "compile", "set_float32_matmul_precision", "is_compiling",
              "set_default_device", "empty_cache", "synchronize"}


def allow_in_graph(fn):
    """Puts calls of `fn` in the graph as one node (not traced into), as PyTorch's."""
    _ALLOWED.add(fn)
    return fn


def _is_user_allowed(fn):
    try:
        return fn in _ALLOWED
    except TypeError:
        return False


def _ember_module(mod):
    return mod == "ember" or (mod or "").startswith("ember.")


def is_allowed(fn):
    """Whether `fn` runs as recorded ember ops (not inlined): ember's functions, registry
    ops, Tensor methods, and what the user marked with allow_in_graph."""
    if isinstance(fn, (OpDef, OpOverloadPacket)):
        return True
    try:
        if fn in _ALLOWED:
            return True
    except TypeError:
        return False
    if not isinstance(fn, (types.FunctionType, types.BuiltinFunctionType,
                           types.MethodWrapperType, types.WrapperDescriptorType,
                           types.MethodDescriptorType)):
        return False             # classes and objects (a Future, a Generator) are not ops
    mod = getattr(fn, "__module__", None)
    if not _ember_module(mod):
        return False
    if mod.startswith(("ember._dynamo", "ember.nn.modules", "ember.optim",
                       "ember.utils.data", "ember.distributed", "ember.compiler")):
        return False
    name = getattr(fn, "__name__", "")
    if name in _EFFECTFUL:
        return False
    return True


def wrap_constant_result(v):
    """A value computed by the capture itself (no source)."""
    if isinstance(v, _CONST_TYPES):
        return ConstantVariable(v)
    if isinstance(v, (tuple, list)) and all(isinstance(x, _CONST_TYPES) for x in v):
        cls = TupleVariable if isinstance(v, tuple) else ListVariable
        return cls([ConstantVariable(x) for x in v], mutable_local=isinstance(v, list),
                   py_type=type(v))
    if isinstance(v, range):
        return RangeVariable(v)
    if isinstance(v, slice):
        return SliceVariable([ConstantVariable(v.start), ConstantVariable(v.stop),
                              ConstantVariable(v.step)])
    if isinstance(v, types.BuiltinFunctionType) or is_pure_builtin(v):
        return BuiltinVariable(v)
    unsupported(f"a Python value of type {type(v).__name__} computed in the region")


class VariableBuilder:
    def __init__(self, tx_root):
        self.root = tx_root            # the top-level translator (og, guards)
        self.og = tx_root.og

    def wrap(self, value, source):
        """One tracker per mutable real object, so mutations through one name are seen
        through every other (a list reached as an argument and as an attribute)."""
        if isinstance(value, (list, dict, set)) or (
                not isinstance(value, (Tensor, *_CONST_TYPES, tuple, type,
                                       types.FunctionType, types.ModuleType))
                and hasattr(value, "__dict__")):
            hit = self.og.obj_vars.get(id(value))
            if hit is not None and hit[0] is value:
                if source is not None and hit[1].source is not None and \
                        source != hit[1].source:
                    self.og.guards.alias(source, hit[1].source)
                return hit[1]
            v = self._wrap(value, source)
            self.og.obj_vars[id(value)] = (value, v)
            return v
        return self._wrap(value, source)

    def _wrap(self, value, source):
        g = self.og.guards
        if isinstance(value, Tensor):
            if value._fake:
                unsupported("a fake tensor passed into the compiled region")
            return self.og.tensor_input(value, source)
        if isinstance(value, bool) or value is None:
            if source is not None:
                g.constant(source, value)
            return ConstantVariable(value, source)
        if type(value) in (int, float) and source is not None:
            dyn = self.root.ctx.scalar_dynamic(source, value)
            return ConstantVariable(self.og.scalar(value, source, dyn), source)
        if isinstance(value, _CONST_TYPES):
            if source is not None:
                if isinstance(value, (D.dtype, _Device, enum.Enum)):
                    g.identity(source, value) if not isinstance(value, _Device) \
                        else g.constant(source, value)
                else:
                    g.constant(source, value)
            return ConstantVariable(value, source)
        if isinstance(value, np.ndarray):
            return self.og.numpy_input(value, source)
        from ..runtime import ResumeIterator
        if type(value) is ResumeIterator:         # a for loop's iterator live at a break
            from ..source import AttrSource, ResumeItemSource
            from .containers import IteratorVariable
            if source is None:
                return IteratorVariable([self.wrap(x, None) for x in value.remaining()])
            g.constant(AttrSource(source, "nleft"), value.nleft)
            return IteratorVariable([self.wrap(x, ResumeItemSource(source, k))
                                     for k, x in enumerate(value.remaining())])
        from ...nn.modules.module import Module
        if isinstance(value, Module):
            if source is not None:
                g.identity(source, value)
            self.og.register_module(value, source)
            return NNModuleVariable(value, source)
        if type(value) in (list, tuple, Size) or (isinstance(value, tuple)
                                                  and hasattr(type(value), "_fields")):
            if source is not None:
                g.length(source, value)
            items = [self.wrap(v, ItemSource(source, i) if source is not None else None)
                     for i, v in enumerate(value)]
            cls = ListVariable if isinstance(value, list) else TupleVariable
            return cls(items, source=source, py_type=type(value))
        if type(value) is set:
            if source is not None:
                g.length(source, value)
            from .containers import SetVariable
            return SetVariable([self.wrap(v, None) for v in value], source=source)
        if type(value) in (dict, collections.OrderedDict, collections.defaultdict):
            return self._wrap_dict(value, source)
        if isinstance(value, (range, slice)):
            if source is not None:
                g.constant(source, value)
            return wrap_constant_result(value)
        if isinstance(value, types.ModuleType):
            if source is not None and not _ember_module(value.__name__):
                g.identity(source, value)
            return PythonModuleVariable(value, source)
        from ..source import AttrSource
        if hasattr(value, "_ember_ctx") and hasattr(value, "_orig_fn"):
            # an ember.compile'd function called from compiled code: inline the original
            return self.wrap(value._orig_fn, AttrSource(source, "_orig_fn") if source else None)
        if type(value).__name__ == "OptimizedModule" and hasattr(value, "_ember_ctx"):
            return self.wrap(value._orig_mod, DictAttrSource(source, "_modules", "_orig_mod")
                             if source else None)
        self._guard_identity(value, source)
        return self._wrap_callable_or_object(value, source)

    def _wrap_dict(self, value, source):
        const_keys = all(isinstance(k, (str, int, float, bool, type(None), tuple))
                         for k in value)
        if source is not None:
            if const_keys:
                self.og.guards.keys(source, value)
            else:
                self.og.guards.add(source, "keys_id", (type(value), list(value)))
        items, key_vars = {}, {}
        for i, (k, v) in enumerate(value.items()):
            if const_keys:
                item_src = ItemSource(source, k) if source is not None else None
            else:
                key_src = _KeySource(source, i) if source is not None else None
                key_vars[id(k)] = self.wrap(k, key_src)
                item_src = _KeyedItemSource(source, i) if source is not None else None
            items[k] = self.wrap(v, item_src)
        d = DictVariable(items, source=source, py_type=type(value))
        d.key_vars = key_vars
        if type(value) is collections.defaultdict and value.default_factory is not None:
            d.default_factory = self.wrap(value.default_factory, None)
        return d

    def _guard_identity(self, value, source):
        if source is None:
            return
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type,
                              OpDef, OpOverloadPacket)):
            self.og.guards.identity(source, value)

    def _wrap_callable_or_object(self, value, source):
        from ...autograd import grad_mode as gm
        if isinstance(value, type) and value in (gm.no_grad, gm.enable_grad,
                                                 gm.set_grad_enabled, gm.inference_mode):
            return GradModeClassVariable(value, source)
        if isinstance(value, type) and _is_context_class(value):
            return ContextClassVariable(value, source)
        from ..numpy_interop import _is_numpy_callable
        if _is_numpy_callable(value) and (not isinstance(value, type) or
                                          issubclass(value, np.generic)):
            return NumpyFunctionVariable(value, source)     # np.sin, np.float32(x)
        if _is_user_allowed(value):
            return AllowedFunctionVariable(value, source)
        if _is_remote_call(value):
            return _RemoteCall(value, source)
        if isinstance(value, types.FunctionType) and getattr(value, "_ember_capture_as", None):
            return UserFunctionVariable(value._ember_capture_as, source)   # ember.cond
        if is_allowed(value) and not isinstance(value, types.MethodType):
            return EmberFunctionVariable(value, source)
        if isinstance(value, types.FunctionType):
            if getattr(value, "_ember_disable", False):
                return _Disabled(value, source)
            return UserFunctionVariable(value, source)
        if isinstance(value, types.MethodType):
            from ..source import AttrSource
            obj = self.wrap(value.__self__, AttrSource(source, "__self__") if source else None)
            if isinstance(value.__func__, types.FunctionType):
                return UserMethodVariable(value.__func__, obj)
            unsupported(f"bound C method {value!r}")
        if isinstance(value, (types.BuiltinFunctionType, types.BuiltinMethodType)) or (
                getattr(builtins, getattr(value, "__name__", ""), None) is value):
            if getattr(value, "__self__", None) is not None and not isinstance(
                    value.__self__, types.ModuleType):
                # a C method bound to an object: opaque (calling it is a graph break)
                if source is not None:
                    self.og.guards.type(source, value)
                return UserDefinedObjectVariable(value, source)
            return BuiltinVariable(value, source)
        if isinstance(value, type):
            return UserDefinedClassVariable(value, source)
        if is_pure_builtin(value):
            return BuiltinVariable(value, source)
        if source is not None:
            self.og.guards.type(source, value)
        if _is_context_class(type(value)):
            if source is not None:
                self.og.guards.identity(source, value)
            return ContextObjectVariable(value, source)
        return UserDefinedObjectVariable(value, source)


def _is_context_class(cls):
    import contextlib
    from ...amp.autocast_mode import autocast
    from ...profiler import record_function
    return issubclass(cls, (autocast, record_function)) or cls is contextlib.nullcontext


class AllowedFunctionVariable(EmberFunctionVariable):
    """A function marked allow_in_graph: one graph node, checked on fake tensors."""

    def call_function(self, tx, args, kwargs):
        return tx.call_opaque(self.fn, args, kwargs, name=getattr(self.fn, "__name__", None))


class _KeySource(ItemSource):
    """The i-th key of a dict keyed by objects (checked by identity in the guard)."""

    def expr(self):
        return f"KEYS({self.base.expr()})[{self.index}]"


class _KeyedItemSource(ItemSource):
    def expr(self):
        b = self.base.expr()
        return f"{b}[KEYS({b})[{self.index}]]"


class NumpyFunctionVariable(EmberFunctionVariable):
    """A NumPy function: traced through its ember implementation (ember._numpy)."""

    def call_function(self, tx, args, kwargs):
        return tx.numpy_call(self.fn, args, kwargs)


def _is_remote_call(fn):
    mod = getattr(fn, "__module__", None) or ""
    if mod.startswith(("ember.distributed.rpc", "ember.distributed.autograd")):
        return callable(fn)
    from ...futures import Future
    return isinstance(fn, type) and issubclass(fn, Future)


class _RemoteCall(VariableTracker):
    """rpc_sync / rpc_async / remote and friends: run for real at a graph break."""

    def __init__(self, fn, source=None):
        self.fn, self.source = fn, source
        self.value = fn                   # rebuilt as itself when live at a break

    def as_python_constant(self):
        return self.fn

    def call_function(self, tx, args, kwargs):
        from ..exc import RemoteCallBreak
        raise RemoteCallBreak(f"{self.fn.__module__}.{self.fn.__qualname__}: remote calls run "
                              "outside the graph")


class _Disabled(UserFunctionVariable):
    def call_function(self, tx, args, kwargs):
        unsupported(f"call to {self.fn.__qualname__}, marked ember.compiler.disable")
