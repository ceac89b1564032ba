"""dispatch(op, args): the one path every operator call takes.

Note: the path is  __torch_function__ (function modes, then Tensor subclasses)
-> dispatch modes -> autograd recording -> kernel.
A dispatch mode is an object with `__torch_dispatch__(func, types, args, kwargs)`
and a rank (`_mode_rank`, its place in DESIGN §6's fixed order: autocast, then
user / fake / recording modes, then the profiler, then the determinism check). The
stack is kept sorted by rank whatever order modes were entered in, so a profiler
entered inside autocast still sees autocast's casts; modes of one rank keep
PyTorch's order (the most recently entered runs first). While a mode runs it is
popped off the stack, so calling `func(*args)` inside it goes on to the next mode
in that order and finally to `execute`. Function modes (entry order, as PyTorch)
work the same way with `__torch_function__`.
Tensor subclasses: `Tensor.__init_subclass__` sets `TF.active` when a class that
may override `__torch_function__` is defined; only then does dispatch look at the
argument types. With no mode, no such subclass class and no input that requires
grad, the cost is two truthiness tests, the kernel and one Tensor wrapper.
"""
import threading


class _State(threading.local):
    def __init__(self):
        self.modes = []          # dispatch modes, innermost last
        self.tf_modes = []       # function modes, innermost last
        self.tf_disabled = False  # inside DisableTorchFunctionSubclass
        self.grad_enabled = True
        self.inference = False


STATE = _State()


class _TF:
    """Process-wide: does any dispatch need the __torch_function__ check?

    Instance attributes, not class ones: every op reads them, and on CPython 3.11 a
    read that falls through to the class is ~35 ns slower."""

    def __init__(self):
        self.subclasses = False   # a Tensor subclass that keeps __torch_function__ exists
        self.mode_count = 0       # function modes currently entered (all threads)
        self.active = False


TF = _TF()


def _refresh_tf():
    TF.active = TF.subclasses or TF.mode_count > 0


def dispatch(op, args):
    try:
        if STATE.modes or TF.active:
            return _slow_dispatch(op, args)
        return op.execute(args)
    except MemoryError as e:        # NumPy's, from any allocation a kernel makes
        from ._memory import out_of_memory
        raise out_of_memory(e, getattr(op, "name", op)) from None


def _slow_dispatch(op, args):
    st = STATE
    if TF.active:
        if st.tf_modes:
            return _tf_mode_dispatch(op, args, {})
        if not st.tf_disabled:
            overloaded = overloaded_args(args)
            if overloaded:
                return handle_torch_function(op, overloaded, args, {})
    if st.modes:
        return _mode_dispatch(op, args)
    return op.execute(args)


def _mode_dispatch(op, args):
    modes = STATE.modes
    mode = modes.pop()
    try:
        return mode.__torch_dispatch__(op, _types(args), args, {})
    finally:
        modes.append(mode)


def _tf_mode_dispatch(func, args, kwargs):
    modes = STATE.tf_modes
    mode = modes.pop()
    TF.mode_count -= 1
    _refresh_tf()
    try:
        return mode.__torch_function__(func, _types(args), args, kwargs)
    finally:
        modes.append(mode)
        TF.mode_count += 1
        _refresh_tf()


def _types(args):
    from ._tensor import Tensor
    seen = []
    for a in _flat(args):
        if isinstance(a, Tensor) and type(a) not in seen:
            seen.append(type(a))
    return tuple(seen)


def _flat(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from a
        else:
            yield a


# Ranks: a mode's place in the fixed order (lower runs first). User TorchDispatchModes,
# FakeTensorMode and recording modes have USER; a mode without `_mode_rank` has USER too.
RANK_AUTOCAST = 10
RANK_USER = 20
RANK_PROFILER = 30
RANK_DETERMINISM = 40


def _rank(mode):
    return getattr(mode, "_mode_rank", RANK_USER)


def push_mode(mode):
    """Enter `mode` at its rank: STATE.modes is sorted by descending rank (the last entry
    runs first), a new mode goes last among the modes of its rank."""
    modes = STATE.modes
    r = _rank(mode)
    i = len(modes)
    while i and _rank(modes[i - 1]) < r:
        i -= 1
    modes.insert(i, mode)


def pop_mode(mode=None):
    """Exit `mode` (default: the one that runs first). Modes of one rank must exit in the
    reverse order they were entered; modes of different ranks may exit in any order."""
    modes = STATE.modes
    if mode is None:
        return modes.pop()
    for i in range(len(modes) - 1, -1, -1):
        m = modes[i]
        if m is mode:
            del modes[i]
            return m
        if _rank(m) == _rank(mode):
            break
    raise RuntimeError("ember: modes must be exited in the reverse order they were entered")


def push_tf_mode(mode):
    STATE.tf_modes.append(mode)
    TF.mode_count += 1
    _refresh_tf()


def pop_tf_mode(mode=None):
    modes = STATE.tf_modes
    if mode is not None and (not modes or modes[-1] is not mode):
        raise RuntimeError("ember: function modes must be exited in the reverse order they "
                           "were entered")
    m = modes.pop()
    TF.mode_count -= 1
    _refresh_tf()
    return m


# ---------------------------------------------------------------- __torch_function__

_OVERRIDES = {}    # subclass -> does it override the default protocol?


def overrides_tf(cls):
    """True for Tensor subclasses whose __torch_function__ is not disabled."""
    r = _OVERRIDES.get(cls)
    if r is None:
        r = getattr(cls, "__torch_function__", None) is not _disabled_torch_function_impl
        _OVERRIDES[cls] = r
    return r


def overloaded_args(args):
    """PyTorch's order: each overriding type once, subclasses before their parents."""
    from ._tensor import Tensor
    out = []
    for a in _flat(args):
        cls = a.__class__
        if cls is Tensor or not isinstance(a, Tensor) or not overrides_tf(cls):
            continue
        if any(type(o) is cls for o in out):
            continue
        pos = len(out)
        for i, o in enumerate(out):
            if issubclass(cls, type(o)):
                pos = i
                break
        out.insert(pos, a)
    return out


def handle_torch_function(func, overloaded, args, kwargs):
    """Call each overloaded type's __torch_function__ until one handles `func`."""
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        res = type(a).__torch_function__(func, types, args, kwargs)
        if res is not NotImplemented:
            return res
    name = getattr(func, "__name__", func)
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {list(types)}")


class DisableTorchFunctionSubclass:
    """Inside: ops on Tensor subclasses run as on plain Tensors (no __torch_function__)."""

    def __enter__(self):
        self.prev = STATE.tf_disabled
        STATE.tf_disabled = True
        return self

    def __exit__(self, *exc):
        STATE.tf_disabled = self.prev


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """`__torch_function__ = _disabled_torch_function_impl` opts a subclass out
    (nn.Parameter does): ops on it return plain Tensors."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def convert(ret, cls):
    """PyTorch's _convert: results of a subclass's op become that subclass."""
    from ._tensor import Tensor
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        return type(ret)(convert(r, cls) for r in ret) if type(ret) in (tuple, list) else \
            type(ret)(*(convert(r, cls) for r in ret))
    return ret
