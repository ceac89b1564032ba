"""`ember.compile` and the objects it returns (torch._dynamo.eval_frame's roles).

Note: a compiled function or OptimizedModule keeps its options in a CompileContext and
calls through ember/_dynamo/runtime.py; nothing is captured until the first call."""
import functools
import types

from . import runtime
from .runtime import CompileContext

__all__ = ["compile", "OptimizedModule", "disable", "optimize", "explain",
           "mark_dynamic", "maybe_mark_dynamic", "mark_static", "innermost_fn"]


def _lookup_backend(backend):
    from .backends.registry import lookup_backend
    return lookup_backend(backend)


def _check_mode_options(mode, options):
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode not in (None, "default", "reduce-overhead", "max-autotune",
                    "max-autotune-no-cudagraphs"):
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: default, "
                           "reduce-overhead, max-autotune, max-autotune-no-cudagraphs")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """Captures `model` (a function or nn.Module) into graphs on its first call and runs
    them through `backend`; the result equals eager on every call, or it runs eagerly."""
    if model is None:
        def deco(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, disable=disable)
        return deco
    _check_mode_options(mode, options)
    if not callable(model):
        raise RuntimeError("compile() expects a callable (a function or nn.Module), got "
                           f"{type(model).__name__}")
    if disable:
        return model
    fn = _lookup_backend(backend)
    if mode is not None or options is not None:
        fn = functools.partial(_with_options, fn, mode, options) \
            if _accepts_options(fn) else fn
    ctx = CompileContext(fn, fullgraph=fullgraph, dynamic=dynamic)
    from ..nn.modules.module import Module
    from ..nn.parallel.distributed import DistributedDataParallel
    if isinstance(model, DistributedDataParallel):
        # DDP's own forward (buffer sync, reducer bookkeeping) stays eager; the wrapped
        # module's forward is compiled, its graphs split at the bucket boundaries
        inner = model.module
        inner.__dict__["forward"] = _compiled_function(
            types.MethodType(type(inner).forward, inner), ctx)
        opt = OptimizedModule(model, ctx)
        opt.__dict__["_ember_eager_call"] = True
        return opt
    if isinstance(model, Module):
        return OptimizedModule(model, ctx)
    return _compiled_function(model, ctx)


def _accepts_options(fn):
    import inspect
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "options" in params or "mode" in params


def _with_options(fn, mode, options, gm, example_inputs):
    return fn(gm, example_inputs, mode=mode, options=options)


def _compiled_function(fn, ctx):
    target = fn
    if isinstance(fn, types.MethodType):
        target = fn.__func__
        self_obj = fn.__self__
    else:
        self_obj = None
    if isinstance(fn, functools.partial):
        part = fn
        target = _partial_call
        self_obj = part
    elif not isinstance(target, types.FunctionType):
        # a callable object: compile its __call__
        call = getattr(type(fn), "__call__", None)
        if isinstance(call, types.FunctionType):
            target, self_obj = call, fn
        else:
            raise NotImplementedError(f"ember.compile of a {type(fn).__name__} (not a Python "
                                      "function, method or nn.Module)")

    @functools.wraps(fn)
    def compiled(*args, **kwargs):
        if getattr(target, "_ember_disable", False):
            return fn(*args, **kwargs)
        if self_obj is not None:
            args = (self_obj, *args)
        return runtime.run_function(target, args, kwargs, ctx)

    compiled._ember_ctx = ctx
    compiled._torchdynamo_orig_callable = fn
    compiled._orig_fn = fn
    return compiled


def _partial_call(part, *args, **kwargs):
    return part.func(*part.args, *args, **{**part.keywords, **kwargs})


class OptimizedModule:
    """What `ember.compile(module)` returns: calls go through the compiled forward;
    attributes, parameters and state_dict are the original module's (`_orig_mod`)."""

    def __new__(cls, mod, ctx):
        from ..nn.modules.module import Module
        klass = type("OptimizedModule", (_OptimizedModuleBase, Module), {})
        self = Module.__new__(klass)
        Module.__init__(self)
        self._modules["_orig_mod"] = mod
        self.__dict__["_ember_ctx"] = ctx
        return self


class _OptimizedModuleBase:
    def __getattr__(self, name):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._modules["_orig_mod"], name)

    def __setattr__(self, name, value):
        if name in ("training",):
            object.__setattr__(self, name, value)
            setattr(self._orig_mod, name, value)
            return
        from ..nn.modules.module import Module
        Module.__setattr__(self, name, value)

    def __call__(self, *args, **kwargs):
        mod = self._orig_mod
        ctx = self.__dict__["_ember_ctx"]
        if self.__dict__.get("_ember_eager_call"):
            return mod(*args, **kwargs)
        if mod._forward_hooks or mod._forward_pre_hooks or mod._backward_hooks \
                or mod._backward_pre_hooks or "forward" in mod.__dict__:
            fwd = mod.forward
            if isinstance(fwd, types.MethodType):
                return runtime.run_function(fwd.__func__, (mod, *args), kwargs, ctx) \
                    if not (mod._forward_hooks or mod._forward_pre_hooks or
                            mod._backward_hooks or mod._backward_pre_hooks) \
                    else _hooked(mod, ctx, args, kwargs)
            return _compiled_function(fwd, ctx)(*args, **kwargs)
        return runtime.run_function(type(mod).forward, (mod, *args), kwargs, ctx)

    forward = __call__

    def __repr__(self):
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)"

    def state_dict(self, *args, **kwargs):
        return self._orig_mod.state_dict(*args, **kwargs)

    def load_state_dict(self, *args, **kwargs):
        return self._orig_mod.load_state_dict(*args, **kwargs)


def _hooked(mod, ctx, args, kwargs):
    """Module hooks run eagerly around the compiled forward, as PyTorch's do."""
    orig = mod.__dict__.get("forward")
    fwd_fn = type(mod).forward
    mod.forward = lambda *a, **k: runtime.run_function(fwd_fn, (mod, *a), k, ctx)
    try:
        return mod(*args, **kwargs)
    finally:
        if orig is None:
            del mod.forward
        else:
            mod.forward = orig


def disable(fn=None, recursive=True, *, reason=None):
    """Runs `fn` eagerly even when called from compiled code (a graph break there)."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def inner(*args, **kwargs):
        return fn(*args, **kwargs)

    inner._ember_disable = True
    inner._torchdynamo_disable = True
    return inner


def optimize(backend="inductor", *, nopython=False, dynamic=None, disable=False):
    """torch._dynamo.optimize: the pre-2.0 spelling of compile, as a decorator."""
    def deco(fn):
        return compile(fn, backend=backend, fullgraph=nopython, dynamic=dynamic,
                       disable=disable)
    return deco


def innermost_fn(fn):
    while hasattr(fn, "_orig_fn"):
        fn = fn._orig_fn
    return fn


def explain(f, *extra_args, **extra_kwargs):
    """`explain(fn)(*args)`: runs fn compiled with a recording backend and reports the
    graphs, graph breaks (reason and user line), ops per graph and guards."""
    from ._explain_output import ExplainOutput, BreakReason
    from .utils import compile_times

    def inner(*args, **kwargs):
        from .backends.registry import lookup_backend
        ctx = CompileContext(lookup_backend("eager"))
        target = innermost_fn(f)
        if hasattr(target, "_orig_mod"):
            target = target._orig_mod
        from ..nn.modules.module import Module
        from .runtime import _FRAME_STATE
        if isinstance(target, Module):
            fn, a = type(target).forward, (target, *args)
        elif isinstance(target, types.MethodType):
            fn, a = target.__func__, (target.__self__, *args)
        else:
            fn, a = target, args
        saved = _FRAME_STATE.pop(fn.__code__, None)
        try:                  # its own context: the compiled function's caches stay as they are
            runtime.run_function(fn, a, kwargs, ctx)
        finally:
            _FRAME_STATE.pop(fn.__code__, None)
            if saved is not None:
                _FRAME_STATE[fn.__code__] = saved
        reasons = [BreakReason(r, s) for r, s in ctx.breaks]
        return ExplainOutput(graphs=ctx.graphs, graph_count=len(ctx.graphs),
                             graph_break_count=len(reasons), break_reasons=reasons,
                             op_count=sum(len(o) for o in ctx.ops_per_graph),
                             ops_per_graph=ctx.ops_per_graph, out_guards=ctx.guards,
                             compile_times=compile_times())
    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner


def _indices(t):
    s = getattr(t, "_dynamo_dynamic_indices", None)
    if s is None:
        s = set()
        t._dynamo_dynamic_indices = s
    return s


def mark_dynamic(t, index, *, min=None, max=None):
    """Compiles `t`'s dim `index` with a symbolic size from the first call (error if a
    call violates min/max)."""
    if isinstance(index, (list, tuple)):
        for i in index:
            mark_dynamic(t, i, min=min, max=max)
        return
    _indices(t).add(index)
    if not hasattr(t, "_dynamo_marked"):
        t._dynamo_marked = set()
    t._dynamo_marked.add(index)
    if min is not None or max is not None:
        if not hasattr(t, "_dynamo_constraints"):
            t._dynamo_constraints = {}
        t._dynamo_constraints[index] = (min, max)


def maybe_mark_dynamic(t, index):
    if isinstance(index, (list, tuple)):
        for i in index:
            maybe_mark_dynamic(t, i)
        return
    _indices(t).add(index)


def mark_static(t, index=None):
    """Keeps `t`'s dim `index` (all dims when None) static even under dynamic=True or
    automatic dynamic: a new size recompiles."""
    if index is None:
        t._dynamo_static = True
        return
    for i in (index if isinstance(index, (list, tuple)) else [index]):
        _indices(t).discard(i)
        if not hasattr(t, "_dynamo_static_indices"):
            t._dynamo_static_indices = set()
        t._dynamo_static_indices.add(i)
