"""`ember.fx.Proxy`: the stand-in value symbolic tracing passes through user code.

Note: every operation on a Proxy appends a node to the tracer's graph instead of
computing: operators become `call_function` nodes on `operator.*`, attribute reads
`getattr`, method calls `call_method`, and ember functions (patched for the duration of
a trace, see _symbolic_trace.py) `call_function` on the function itself. A Proxy has no
value, so using one in Python control flow raises TraceError, as torch.fx does.
"""
import dis
import inspect
import operator
import sys
from bisect import bisect_left

from .node import Node, map_aggregate

__all__ = ["Proxy", "Attribute", "TraceError", "TracerBase", "GraphAppendingTracer"]


class TraceError(ValueError):
    pass


class TracerBase:
    """What a Proxy needs from its tracer: node/proxy creation and the policy for
    bool(), iter() and ** on Proxies."""

    graph = None
    record_stack_traces = False
    proxy_buffer_attributes = False
    check_mutable_operations = False
    trace_asserts = False

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        # a function patched for tracing stands for the original (see _symbolic_trace)
        target = getattr(target, "__fx_original__", target)
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise TypeError("create_proxy: args must be a tuple and kwargs a dict")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """Turn a Python value holding Proxies into a node argument."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            if hasattr(a, "_fields"):
                return type(a)(*(self.create_arg(e) for e in a))
            return tuple(self.create_arg(e) for e in a)
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError("Keys for dictionaries used as an argument cannot "
                                       f"contain a Node. Got key: {k}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        return a

    def to_bool(self, obj):
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow" + _internal_use_hint())

    def iter(self, obj):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function argument. "
                         "See the torch.fx docs on pytorch.org for a more detailed explanation "
                         "of what types of control flow can be traced, and check out the Proxy "
                         "docstring for help troubleshooting Proxy iteration errors"
                         + _internal_use_hint())

    def keys(self, obj):
        return Attribute(obj, "keys")()


def _internal_use_hint():
    """When a Proxy reached ember's own code (a function the tracer did not intercept:
    one bound in a closure or default argument, or called outside a trace), say so."""
    f = sys._getframe(1)
    while f is not None:
        mod = str(f.f_globals.get("__name__", ""))
        if not mod.startswith("ember.fx"):
            break
        f = f.f_back
    if f is None or not mod.startswith("ember"):
        return ""
    return (f" (the Proxy reached ember's own code in {mod}.{f.f_code.co_name}: an ember "
            "function was called on a Proxy without being intercepted; call it through "
            "its module (ember.relu, F.gelu) inside the traced code, or use fx.wrap / "
            "fx.proxy_calls())")


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends to an existing graph (for Proxy(node) in passes)."""

    def __init__(self, graph):
        self.graph = graph
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}


class Proxy:
    """A symbolic value: operations on it record nodes (torch.fx.Proxy)."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        # a copy stands for the same value (torch.fx's behaviour); defined so that
        # deepcopy does not find an Attribute through __getattr__
        return Proxy(self.node, self.tracer)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe().f_back
        insts = list(dis.get_instructions(frame.f_code))
        if sys.version_info >= (3, 11):
            idx = bisect_left(insts, frame.f_lasti, key=lambda x: x.offset)
        else:
            idx = frame.f_lasti // 2
        if idx < len(insts) and insts[idx].opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(insts[idx].argval))
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call ember.fx.wrap('len') at "
                           "module scope")

    def __index__(self):
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def __contains__(self, item):
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    __hash__ = object.__hash__


class Attribute(Proxy):
    """`proxy.attr`: becomes a getattr node only if used as a value; calling it records
    a call_method node instead."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


_MAGIC = ["add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "lshift", "rshift",
          "and_", "or_", "xor", "getitem", "matmul", "eq", "ne", "lt", "gt", "le", "ge"]
_REFLECTABLE = ["add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "lshift",
                "rshift", "and_", "or_", "xor", "matmul"]
_UNARY = ["neg", "pos", "invert"]


def _dunder(name):
    return f"__{name.rstrip('_')}__"


def _install_magic():
    for name in _MAGIC:
        target = getattr(operator, name)

        def impl(self, rhs, target=target):
            return self.tracer.create_proxy("call_function", target, (self, rhs), {})
        impl.__name__ = _dunder(name)
        setattr(Proxy, _dunder(name), impl)
    for name in _UNARY:
        target = getattr(operator, name)

        def unary(self, target=target):
            return self.tracer.create_proxy("call_function", target, (self,), {})
        unary.__name__ = _dunder(name)
        setattr(Proxy, _dunder(name), unary)
    for name in _REFLECTABLE:
        target = getattr(operator, name)

        def rimpl(self, lhs, target=target):
            return self.tracer.create_proxy("call_function", target, (lhs, self), {})
        rname = f"__r{name.rstrip('_')}__"
        rimpl.__name__ = rname
        setattr(Proxy, rname, rimpl)


_install_magic()


def _find_proxy(*objs):
    """The first Proxy inside nested args (or None)."""
    found = []

    def look(x):
        if not found and isinstance(x, Proxy):
            found.append(x)
        return x
    map_aggregate(objs, look)
    return found[0] if found else None

