"""The runtime of compiled functions: a cache of Segments per (code, offset), the loop that
runs segments and graph breaks, and automatic dynamic shapes.

Note: calling a compiled function binds its arguments into a frame state (locals, value
stack, closure cells); the Segment whose guards pass runs (graph + rebuild); at a break
the breaking instruction runs for real (ember/_dynamo/concrete.py) and the loop continues
at the next instruction's Segments. A failed lookup captures a new Segment, up to
`config.cache_size_limit` per place; past that the rest of the frame runs eagerly."""
import inspect
import sysconfig
import logging
import types
import warnings
import weakref

from .._dispatch import STATE
from . import concrete, config
from .concrete import NULL_OBJ
from .symbolic_convert import real_param_name
from .exc import Unsupported

log = logging.getLogger("ember._dynamo")

__all__ = ["CompileContext", "run_function", "reset", "NULL_OBJ", "ResumeIterator",
           "is_compiling", "entries"]

_CONTEXTS = weakref.WeakSet()    # every CompileContext (its .caches: code -> offset -> [Segment])
_FRAME_STATE = {}                 # code -> {source expr: {dim: size seen}} (automatic dynamic)
_RUNNING = [0]
_FORCE_EAGER = set()


def is_compiling():
    return _RUNNING[0] > 0


def reset():
    for ctx in list(_CONTEXTS):
        ctx.caches.clear()
    _FRAME_STATE.clear()
    _FORCE_EAGER.clear()
    from .utils import counters
    counters.clear()


class ResumeIterator:
    """The iterator of a for loop live at a graph break."""

    def __init__(self, items):
        self.items, self.pos = items, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.pos >= len(self.items):
            raise StopIteration
        self.pos += 1
        return self.items[self.pos - 1]

    def remaining(self):
        return self.items[self.pos:]

    @property
    def nleft(self):
        return len(self.items) - self.pos


class _GradCtx:
    def __init__(self, mode, prev):
        self.mode, self.prev = mode, prev

    def __enter__(self):
        STATE.grad_enabled = self.mode

    def __exit__(self, *exc):
        STATE.grad_enabled = self.prev
        return False


def _mkfn(code, fglobals, defaults, kwdefaults, cells):
    fn = types.FunctionType(code, fglobals, code.co_name, defaults, cells or None)
    if kwdefaults:
        fn.__kwdefaults__ = kwdefaults
    return fn


def _from_numpy(a):
    from .. import from_numpy
    return from_numpy(a)


def rebuild_namespace():
    return {"NULL": NULL_OBJ, "RESUME_ITER": ResumeIterator, "METHOD": types.MethodType,
            "CELL": types.CellType, "MKFN": _mkfn, "GRADCTX": _GradCtx,
            "FROM_NUMPY": _from_numpy, "KEYS": list}


class CompileContext:
    """The options of one ember.compile call and its statistics (for explain)."""

    def __init__(self, backend, fullgraph=False, dynamic=None):
        self.backend = backend
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.graphs = []
        self.breaks = []          # (reason, user_stack)
        self.guards = []
        self.ops_per_graph = []
        self.compile_times = []
        self.code = None
        self.caches = {}          # code -> {offset: [Segment, ...]}: per compile call, as
        _CONTEXTS.add(self)       # a different backend or option set compiles anew

    def record_break(self, reason, stack):
        self.breaks.append((reason, stack))
        from ._logs import graph_break
        graph_break(reason, stack)

    def record_compile(self, seg, seconds):
        if seg.gm is not None:
            self.graphs.append(seg.gm)
            self.ops_per_graph.append([n.target for n in seg.gm.graph.nodes
                                       if n.op == "call_function"])
        self.guards.append(seg.guard_text)
        self.compile_times.append(seconds)

    def pin_static(self, sources):
        """These inputs' sizes stay static for this code (their graph depended on size
        values, see convert_frame._same_with_other_sizes)."""
        st = _FRAME_STATE.setdefault(self.code, {})
        for src in sources:
            st[src.expr()] = "static"
        from ._logs import pinned_static
        pinned_static(self.code, sources)

    def sizes_changed(self, inputs, scalars=()):
        """Automatic dynamic: records the sizes this capture saw; True when a size differs
        from an earlier capture's (that dim is dynamic from now on)."""
        if self.dynamic is False or not config.automatic_dynamic_shapes:
            return False
        return _note_sizes(self, [(src.expr(), tuple(int(n) for n in t.shape))
                                  for src, t, _ in inputs if src is not None and t is not None]
                           + list(scalars))

    def scalar_dynamic(self, source, value):
        """A Python int/float input that changed between captures is a graph input from
        then on (PyTorch's automatic dynamic for specialize_int/float=False)."""
        if self.dynamic is False or not config.automatic_dynamic_shapes:
            return False
        if type(value) is int and config.specialize_int:
            return False
        from .source import is_local
        if not is_local(source):
            return False       # globals and closure cells specialize on their value (torch)
        if type(value) is float and config.specialize_float:
            return False
        seen = _FRAME_STATE.get(self.code, {}).get(source.expr())
        return isinstance(seen, dict) and "v" in seen and seen["v"] is None

    def dynamic_dims(self, source, t):
        """Which dims of the input at `source` get symbols: dynamic=True all (not 0/1),
        mark_dynamic'd dims, and dims automatic dynamic saw change."""
        if self.dynamic is False or not config.dynamic_shapes:
            return ()
        if getattr(t, "_is_param", False) and config.force_parameter_static_shapes:
            return ()
        dims = set(getattr(t, "_dynamo_dynamic_indices", ()))
        if self.dynamic is True:
            dims |= set(range(t.dim()))
        seen = _FRAME_STATE.get(self.code, {}).get(source.expr())
        if seen == "static":
            return ()
        if seen is not None and config.automatic_dynamic_shapes:
            dims |= {d for d, n in seen.items() if n is None}
        dims -= set(getattr(t, "_dynamo_static_indices", ()))
        if getattr(t, "_dynamo_static", False):
            return ()
        return tuple(sorted(d for d in dims if d < t.dim()))


def _note_sizes(ctx, segs_inputs):
    """Automatic dynamic: remember each input's sizes; a size that changed between
    captures becomes None (dynamic from now on)."""
    st = _FRAME_STATE.setdefault(ctx.code, {})
    changed = False
    for key, shape in segs_inputs:
        prev = st.get(key)
        if prev == "static":
            continue
        cur = dict(enumerate(shape)) if isinstance(shape, tuple) else {"v": shape}
        if prev is None:
            st[key] = cur
            continue
        if len(prev) != len(cur):
            continue
        for d, n in cur.items():
            if prev.get(d) is not None and prev[d] != n:
                prev[d] = None
                changed = True
    return changed


def _bind(fn, code, args, kwargs):
    """The frame's locals for a call (CPython's argument binding)."""
    nargs = code.co_argcount
    if not kwargs and len(args) == nargs and not code.co_flags & 0x0C \
            and not code.co_kwonlyargcount:
        L = dict(zip(code.co_varnames, args))
    else:
        sig = _signature(fn)
        ba = sig.bind(*args, **kwargs)
        ba.apply_defaults()
        L = {real_param_name(k, code): v for k, v in ba.arguments.items()}
    for name in code.co_cellvars:
        L[name] = types.CellType(L[name]) if name in L else types.CellType()
    return L


_SIGS = weakref.WeakKeyDictionary()


def _signature(fn):
    s = _SIGS.get(fn)
    if s is None:
        s = _SIGS[fn] = inspect.signature(fn, follow_wrapped=False)
    return s


_NO_CELLS = {}


def entries(fn):
    """The compiled Segments of `fn` at its first instruction, over every compile call
    (for benchmarks and debugging)."""
    return [seg for ctx in list(_CONTEXTS) for seg in ctx.caches.get(fn.__code__, {}).get(0, [])]


def run_function(fn, args, kwargs, ctx):
    """Calls `fn(*args, **kwargs)` through the compiled-segment cache."""
    code = fn.__code__
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE |
                        inspect.CO_ASYNC_GENERATOR) or code in _FORCE_EAGER:
        return fn(*args, **kwargs)
    L = _bind(fn, code, args, kwargs)
    S = []
    C = dict(zip(code.co_freevars, fn.__closure__)) if code.co_freevars else _NO_CELLS
    G = fn.__globals__
    caches = ctx.caches.get(code)
    if caches is None:
        caches = ctx.caches[code] = {}
    offset = 0
    _RUNNING[0] += 1
    try:
        while True:
            entries = caches.get(offset)
            seg = None
            if entries:
                for e in entries:
                    if e.guard(L, S, G, C, e.consts):
                        seg = e
                        break
            if seg is None:
                if entries is not None and len(entries) >= config.cache_size_limit:
                    _limit_hit(code, offset, ctx)
                    return concrete.run_rest(code, offset, L, S, C, G, _caller(ctx))
                seg = _capture(fn, code, G, (L, S, C), offset, ctx, entries)
                if seg is None:        # capture refused the frame: run it eagerly
                    return concrete.run_rest(code, offset, L, S, C, G, _caller(ctx))
                caches.setdefault(offset, []).append(seg)
            res = seg.run(L, S, G, C)
            if res[0] == "return":
                return res[1]
            _, L, S = res
            try:
                offset = concrete.step(code, seg.break_offset, L, S, C, G, _caller(ctx))
            except concrete.Returned as r:
                return r.value
    finally:
        _RUNNING[0] -= 1


def _capture(fn, code, G, frame, offset, ctx, entries):
    from .convert_frame import capture_segment
    try:
        seg = capture_segment(code, G, frame, offset, ctx)
    except Unsupported:
        if ctx.fullgraph:
            raise
        return None                    # nothing capturable here: the frame runs eagerly
    except Exception as e:             # noqa: BLE001 - a capture or backend failure
        if not config.suppress_errors or ctx.fullgraph:
            raise
        warnings.warn(f"ember.compile: capturing {code.co_name} failed ({type(e).__name__}: "
                      f"{e}); it runs eagerly (config.suppress_errors=True)")
        return None
    if entries:
        from ._logs import recompile
        recompile(code, offset, len(entries))
    return seg


def _limit_hit(code, offset, ctx):
    from ._logs import recompile_limit
    recompile_limit(code, config.cache_size_limit)


def _caller(ctx):
    def call(fn, args, kwargs):
        if type(fn) is types.FunctionType and not getattr(fn, "_ember_disable", False) \
                and not _is_library(fn):
            return run_function(fn, args, kwargs, ctx)
        if type(fn) is types.MethodType and type(fn.__func__) is types.FunctionType \
                and not _is_library(fn.__func__):
            return run_function(fn.__func__, (fn.__self__, *args), kwargs, ctx)
        return fn(*args, **kwargs)
    return call


_LIB_DIRS = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib",
                                                     "platlib")})


def _is_library(fn):
    """ember's own code, the standard library and installed packages are called as they
    are at a graph break (PyTorch's skipfiles); only the user's functions are compiled."""
    mod = getattr(fn, "__module__", "") or ""
    if mod == "ember" or mod.startswith("ember."):
        return True
    return fn.__code__.co_filename.startswith(_LIB_DIRS)

