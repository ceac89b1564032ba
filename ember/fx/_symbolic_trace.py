"""`ember.fx.symbolic_trace` and `Tracer`: record a Module's or function's forward as a
Graph by running it on Proxies (torch.fx semantics).

Note: PyTorch routes `torch.relu(proxy)` to the Proxy through `__torch_function__`;
ember's public functions do not check their arguments for that protocol, so while a
trace runs the Tracer patches them instead: every public function of `ember`,
`ember.nn.functional`, `ember.special`, `ember.linalg` and `ember.fft` (and the same
objects bound in the traced code's globals) is swapped for a wrapper that records a
`call_function` node on the original function when an argument holds a Proxy and
otherwise calls it unchanged. `Module.__call__`/`__getattr__` are patched as torch.fx
does (leaf modules become `call_module`, parameters `get_attr`), and Tensor's binary
operators yield to a Proxy operand so `tensor + proxy` is recorded. Every patch is
undone when the trace ends, also on error.
"""
import builtins
import contextlib
import functools
import inspect
import math
import operator
import sys
import types

from .._tensor import Tensor
from ..ops._registry import OpDef
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .graph import Graph
from .graph_module import GraphModule
from .node import has_side_effect
from .proxy import Proxy, TracerBase, _find_proxy

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "proxy_calls"]

_PUBLIC_MODULES = ("ember", "ember.nn.functional", "ember.special", "ember.linalg",
                   "ember.fft")
_wrapped_fns_to_patch = {}     # (id(globals), name) -> (globals, name)
_TENSOR_DUNDERS = ("__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__",
                   "__mod__", "__pow__", "__matmul__", "__and__", "__or__", "__xor__",
                   "__lshift__", "__rshift__", "__eq__", "__ne__", "__lt__", "__le__",
                   "__gt__", "__ge__", "__radd__", "__rsub__", "__rmul__", "__rtruediv__",
                   "__rfloordiv__", "__rmod__", "__rpow__", "__rmatmul__", "__rand__",
                   "__ror__", "__rxor__")


class _PH:
    """`concrete_args` marker: this leaf stays a placeholder."""

    def __repr__(self):
        return "PH"


PH = _PH()


def _assert(condition, message):
    """torch._assert: raise AssertionError(message) unless condition holds."""
    if not condition:
        raise AssertionError(message)


has_side_effect(_assert)


def _assert_is_none(value, msg):
    assert value is None, msg


has_side_effect(_assert_is_none)


def wrap(fn_or_name):
    """Call at module scope: calls of this global function from that module are
    recorded as one call_function node instead of being traced through."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a "
                           "callable or string name")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    f = sys._getframe(1)
    if f.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(f.f_globals), name)] = (f.f_globals, name)
    return fn_or_name


class _Patcher:
    """Sets attributes/dict entries and restores every one of them on exit."""

    def __init__(self):
        self._undo = []

    def setattr(self, obj, name, value):
        had = name in obj.__dict__ if isinstance(obj, (type, types.ModuleType)) else True
        old = obj.__dict__.get(name) if had else None
        setattr(obj, name, value)
        self._undo.append(lambda: setattr(obj, name, old) if had else delattr(obj, name))

    def setitem(self, d, name, value):
        had, old = name in d, d.get(name)
        d[name] = value

        def undo():
            if had:
                d[name] = old
            else:
                d.pop(name, None)
        self._undo.append(undo)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self._undo:
            self._undo.pop()()


def _record_if_proxy(orig, method=False):
    """`orig` that records a call_function node when an argument holds a Proxy; with
    method=True, orig is an unbound method and the node's target is its receiver."""
    if method:
        @functools.wraps(orig)
        def bound(self, /, *args, **kwargs):
            proxy = _find_proxy(args, kwargs)
            if proxy is not None:
                return proxy.tracer.create_proxy("call_function", self, args, kwargs)
            return orig(self, *args, **kwargs)
        return bound

    return _ProxyCall(orig)


class _ProxyCall:
    """A function's stand-in while Proxies are about: records a call_function node on
    the original when an argument holds a Proxy, else calls it. Compares and hashes as
    the original, so `target == ember.relu` in a Transformer handler still holds."""

    def __init__(self, orig):
        functools.update_wrapper(self, orig)
        self.__fx_original__ = orig

    def __call__(self, *args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            return proxy.tracer.create_proxy("call_function", self.__fx_original__, args,
                                             kwargs)
        return self.__fx_original__(*args, **kwargs)

    def __eq__(self, other):
        return getattr(other, "__fx_original__", other) is self.__fx_original__

    def __hash__(self):
        return hash(self.__fx_original__)

    def __repr__(self):
        return repr(self.__fx_original__)


# `tensor <op> proxy` is recorded as the Tensor method PyTorch's __torch_function__ sees
# for that operator (torch.fx's own names: `c * x` -> call_method mul, `c / x` -> div)
_TENSOR_OP_METHOD = {"__add__": "add", "__sub__": "sub", "__mul__": "mul",
                     "__truediv__": "div", "__floordiv__": "__floordiv__",
                     "__mod__": "remainder", "__pow__": "pow", "__matmul__": "matmul",
                     "__and__": "__and__", "__or__": "__or__", "__xor__": "__xor__",
                     "__lshift__": "__lshift__", "__rshift__": "__rshift__", "__eq__": "eq",
                     "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt",
                     "__ge__": "ge"}


def _yield_to_proxy(orig, name):
    method = _TENSOR_OP_METHOD.get(name)

    @functools.wraps(orig)
    def dunder(self, other):
        if isinstance(other, Proxy):
            if method is None:
                return NotImplemented
            return other.tracer.create_proxy("call_method", method, (self, other), {})
        return orig(self, other)
    return dunder


def _tensor_getitem(orig):
    @functools.wraps(orig)
    def getitem(self, idx):
        proxy = _find_proxy(idx)
        if proxy is not None:
            return proxy.tracer.create_proxy("call_function", operator.getitem, (self, idx),
                                             {})
        return orig(self, idx)
    return getitem


_WRAPPERS = {}     # (id(original), kind...) -> (original, wrapper): built once, reused


def _wrapper(f, make, *a):
    f = getattr(f, "__fx_original__", f)
    key = (id(f), make) + a
    hit = _WRAPPERS.get(key)
    if hit is None or hit[0] is not f:
        w = make(f, *a)
        w.__fx_original__ = f
        hit = _WRAPPERS[key] = (f, w)
    return hit[1]


def _install_proxy_calls(patcher):
    """Patch (through `patcher`, which undoes it) ember's public functions, registry ops
    and Tensor's operators so that calls given a Proxy record nodes; returns
    {id(original function): wrapper} for patching the traced code's globals."""
    public = {}
    for mod, name, f in _public_functions():
        w = _wrapper(f, _record_if_proxy)
        public[id(w.__fx_original__)] = w
        patcher.setattr(mod, name, w)
    for name in _TENSOR_DUNDERS:
        patcher.setattr(Tensor, name, _wrapper(getattr(Tensor, name), _yield_to_proxy, name))
    patcher.setattr(Tensor, "__getitem__", _wrapper(Tensor.__getitem__, _tensor_getitem))
    # registry ops called directly (ember.ops.aten.add.Tensor(proxy, 1), as in the code
    # of a captured GraphModule) record themselves
    patcher.setattr(OpDef, "__call__", _wrapper(OpDef.__call__, _record_if_proxy, True))
    return public


@contextlib.contextmanager
def proxy_calls():
    """ember-specific: inside, ember functions, registry ops and Tensor operators accept
    Proxies (recording nodes), as torch functions always do through __torch_function__.
    Tracer.trace and Transformer.transform enter it themselves; enter it when building
    graphs with `Proxy(node)` by hand."""
    with _Patcher() as patcher:
        _install_proxy_calls(patcher)
        yield


def _public_functions():
    """{id(fn): (module, name, fn)} of the ember functions a trace must intercept."""
    import importlib
    out = []
    for modname in _PUBLIC_MODULES:
        mod = importlib.import_module(modname)
        for name, v in list(vars(mod).items()):
            if name.startswith("_") or isinstance(v, (type, types.ModuleType)):
                continue
            if isinstance(v, (types.FunctionType, types.BuiltinFunctionType)):
                out.append((mod, name, v))
    return out


class Tracer(TracerBase):
    """Turns a Module's forward (or a function) into a Graph by running it on Proxies.
    Override `is_leaf_module` to choose which submodules stay `call_module` nodes."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(),
                 param_shapes_constant=False):
        self._autowrap_function_ids = {id(v) for m in autowrap_modules
                                       for k, v in vars(m).items()
                                       if not k.startswith("_") and callable(v)}
        self._autowrap_function_ids |= {id(f) for f in autowrap_functions}
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root = None
        self.graph = None
        self.tensor_attrs = {}
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}

    # ------------------------------------------------------------ policy hooks
    def is_leaf_module(self, m, module_qualified_name):
        """ember.nn's built-in modules (Linear, Conv2d, ReLU ...) are leaves; Sequential
        and user modules are traced through."""
        from ..nn.modules.container import Sequential
        return (m.__module__.startswith("ember.nn") or m.__module__.startswith("torch.nn")) \
            and not isinstance(m, Sequential)

    def path_of_module(self, mod):
        if self.submodule_paths is None:
            self.submodule_paths = {}
            for n, p in self.root.named_modules():
                self.submodule_paths.setdefault(id(p), n)
        path = self.submodule_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward, args, kwargs):
        qualname = self.path_of_module(m)
        if not self.is_leaf_module(m, qualname):
            self._autowrap_globals(getattr(forward, "__globals__", {}))
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", qualname, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """`module.attr` during tracing: parameters (and buffers when
        proxy_buffer_attributes) become get_attr proxies, cached per name."""
        def lookup(collection):
            for n, p in collection:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {})
                    return parameter_proxy_cache[n]
            return None
        if isinstance(attr_val, Parameter):
            r = lookup(self.root.named_parameters())
            if r is not None:
                return r
        if self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            r = lookup(self.root.named_buffers())
            if r is not None:
                return r
        return attr_val

    def create_arg(self, a):
        """Parameters, buffers and tensor attributes of root become get_attr nodes; any
        other tensor constant is stored on root as `_tensor_constant<N>`."""
        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for n, p in self.root.named_buffers():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            qualname = self.tensor_attrs.get(id(a))
            if qualname is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                qualname = f"_tensor_constant{i}"
                setattr(self.root, qualname, a)
                self.tensor_attrs[id(a)] = qualname
            return self.create_node("get_attr", qualname, (), {})
        if isinstance(a, Module):
            return self.create_node("get_attr", self.path_of_module(a), (), {})
        return super().create_arg(a)

    # ------------------------------------------------------------ tracing
    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """Placeholders for root_fn's parameters (`*args`/`**kwargs` included);
        concrete_args values are specialised, with an assert node guarding each."""
        fn = inspect.unwrap(root_fn)
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        if is_module:
            params = params[1:]
        if isinstance(concrete_args, tuple):
            if len(concrete_args) != len(params):
                raise RuntimeError(f"Tracing expected {len(params)} arguments but got "
                                   f"{len(concrete_args)} concrete arguments")
            concrete_args = {p.name: v for p, v in zip(params, concrete_args)}
        concrete_args = concrete_args or {}
        # the code object's order: positional, keyword-only, *args, **kwargs
        P = inspect.Parameter
        rank = {P.VAR_POSITIONAL: 2, P.VAR_KEYWORD: 3, P.KEYWORD_ONLY: 1}
        params.sort(key=lambda q: rank.get(q.kind, 0))
        args = []
        for p in params:
            if p.kind is p.VAR_POSITIONAL:
                args.append(self.create_proxy("placeholder", f"*{p.name}", (), {}))
            elif p.kind is p.VAR_KEYWORD:
                args.append(self.create_proxy("placeholder", f"**{p.name}", (), {}))
            elif p.name in concrete_args:
                args.append(self._concrete(p, concrete_args[p.name]))
            else:
                args.append(self.create_proxy("placeholder", p.name,
                                              () if p.default is p.empty else (p.default,),
                                              {}))
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY) for p in params):
            root_fn = _patch_function(fn, len(params) + is_module)
        return root_fn, args, {}

    def _concrete(self, p, value):
        default = () if p.default is p.empty else (p.default,)
        cnt = [0]

        def replace(x):
            cnt[0] += 1
            out = self.create_proxy("placeholder", f"{p.name}_{cnt[0]}", default, {})
            if x is PH:
                return out
            if type(x) in (bool, int, float, str, complex):
                self.create_proxy("call_function", _assert,
                                  (out == x, f"{p.name} has been specialized to have value "
                                             f"{x} but got another value"), {})
            elif x is None:
                self.create_proxy("call_function", _assert_is_none,
                                  (out, f"{p.name} has been specialized to have value None "
                                        "but got another value"), {})
            return x

        if isinstance(value, (list, tuple)):
            return type(value)(replace(v) for v in value)
        if isinstance(value, dict):
            return {k: replace(v) for k, v in value.items()}
        return replace(value)

    def _autowrap_globals(self, g):
        for name, v in list(g.items()):
            if name.startswith("_"):
                continue
            if id(v) in self._autowrap_function_ids:
                self._patcher.setitem(g, name, _wrapper(v, _record_if_proxy))
            elif id(v) in self._public_ids and g.get(name) is v:
                self._patcher.setitem(g, name, self._public_ids[id(v)])

    def trace(self, root, concrete_args=None):
        """Trace `root` (a Module or a function) into a new Graph (also `self.graph`)."""
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            is_module = True
        else:
            self.root = Module()
            fn = root
            is_module = False
        self.graph = Graph(tracer_cls=type(self))
        self.submodule_paths = None
        self.tensor_attrs = {}
        self._collect_tensor_attrs(self.root, [])
        parameter_proxy_cache = {}
        tracer = self

        def module_getattr_wrapper(mod, attr):
            attr_val = orig_getattr(mod, attr)
            return tracer.getattr(attr, attr_val, parameter_proxy_cache)

        def module_call_wrapper(mod, *args, **kwargs):
            def forward(*a, **k):
                return orig_call(mod, *a, **k)
            return tracer.call_module(mod, forward, args, kwargs)

        orig_getattr, orig_call = Module.__getattr__, Module.__call__
        with _Patcher() as patcher:
            self._patcher = patcher
            patcher.setattr(Module, "__getattr__", module_getattr_wrapper)
            patcher.setattr(Module, "__call__", module_call_wrapper)
            self._public_ids = _install_proxy_calls(patcher)
            for g, name in _wrapped_fns_to_patch.values():
                if name in g:
                    patcher.setitem(g, name, _wrapper(g[name], _record_if_proxy))
                elif name in builtins.__dict__:
                    patcher.setitem(g, name, _wrapper(builtins.__dict__[name], _record_if_proxy))
            self._autowrap_globals(getattr(fn, "__globals__", {}))
            if is_module:       # self.act = F.gelu stored on a module: patch it there too
                for mod in root.modules():
                    self._autowrap_globals(mod.__dict__)
            for m in self._autowrap_search:     # math.sqrt(proxy) through the module
                self._autowrap_globals(m.__dict__)
            fn_, args, kwargs = self.create_args_for_root(fn, is_module, concrete_args)
            if is_module:
                args = [root] + args
            result = self._run_patching_callees(fn_, args, kwargs)
            self.create_node("output", "output", (self.create_arg(result),), {},
                             type_expr=getattr(fn, "__annotations__", {}).get("return"))
            self._patcher = None
        self.submodule_paths = None
        return self.graph

    def _run_patching_callees(self, fn, args, kwargs):
        """Call fn; every user (non-ember) Python function it calls gets the ember
        functions in its module's globals patched when first entered, so helpers that
        did `from ember import relu` elsewhere record too (PyTorch gets this from
        __torch_function__). A profile hook on this thread sees those calls; the
        previous hook is put back after."""
        seen = set()

        def hook(frame, event, arg):
            if event == "call":
                g = frame.f_globals
                if id(g) not in seen:
                    seen.add(id(g))
                    if not str(g.get("__name__", "")).startswith("ember"):
                        self._autowrap_globals(g)
        previous = sys.getprofile()
        sys.setprofile(hook)
        try:
            return fn(*args, **kwargs)
        finally:
            sys.setprofile(previous)

    def _collect_tensor_attrs(self, m, prefix):
        for k, v in m.__dict__.items():
            if isinstance(v, Tensor):
                self.tensor_attrs[id(v)] = ".".join(prefix + [k])
        for k, v in m.named_children():
            self._collect_tensor_attrs(v, prefix + [k])


def _patch_function(fn, nargs):
    """A copy of `fn` whose parameters are all positional: `*args` and `**kwargs` receive
    one Proxy each, as torch.fx's tracer passes them."""
    co = fn.__code__
    flags = co.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    code = co.replace(co_flags=flags, co_argcount=nargs, co_kwonlyargcount=0,
                      co_posonlyargcount=0)
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def symbolic_trace(root, concrete_args=None):
    """Trace `root` into a GraphModule (named after root's class or function)."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
