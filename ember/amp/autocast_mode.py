"""autocast: run each op in the precision its `amp_policy` asks for (PyTorch's CPU lists).

Note: the state (enabled, dtype, cache) is thread-local; one dispatch mode is pushed
when the outermost autocast region opens and popped when it closes, and it reads
that state, so an inner `autocast(enabled=False)` really turns casting off. Policies:
lower_precision casts floating inputs (not float64, as PyTorch) to the autocast
dtype; fp32 casts them to float32; promote casts them to the widest floating type
among the inputs. Casts of leaf tensors that require grad (weights) are cached for
the region. The autograd engine hides this mode while it runs backward, so backward
ops run in the dtypes the forward ops produced.
"""
import functools
import threading

from .. import _dtype as D
from .._dispatch import RANK_AUTOCAST, STATE as _DSTATE, push_mode, pop_mode
from .._tensor import Tensor

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled",
           "set_autocast_dtype", "custom_fwd", "custom_bwd", "is_autocast_available"]

_DEFAULT_DTYPE = {"cpu": D.bfloat16, "cuda": D.float16}
_ALLOWED = {"cpu": (D.bfloat16, D.float16)}


class _State(threading.local):
    def __init__(self):
        self.enabled = {"cpu": False}
        self.dtype = dict(_DEFAULT_DTYPE)
        self.cache_enabled = True
        self.depth = 0
        self.cache = {}


_ST = _State()


class _AutocastMode:
    _off_in_backward = True        # the engine hides it while backward runs
    _mode_rank = RANK_AUTOCAST     # first of the dispatch modes: the others see its casts

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        policy = func.amp_policy
        if policy == "none" or not _ST.enabled["cpu"]:
            return func(*args, **kwargs)
        if policy == "lower_precision":
            target = _ST.dtype["cpu"]
        elif policy == "fp32":
            target = D.float32
        else:
            target = _widest(args)
            if target is None:
                return func(*args, **kwargs)
        return func(*[_cast_arg(a, target, policy) for a in args], **kwargs)


_MODE = _AutocastMode()


def _eligible(t):
    d = t._dtype
    return d.is_floating_point and d is not D.float64


def _widest(args):
    out = None
    for a in args:
        for t in (a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(t, Tensor) and _eligible(t):
                out = t._dtype if out is None else D.promote_types(out, t._dtype)
    return out


def _cast_arg(a, target, policy):
    if isinstance(a, Tensor):
        return _cached_cast(a, target, policy)
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
        return type(a)(_cached_cast(t, target, policy) for t in a)
    return a


def _cached_cast(t, target, policy):
    if not _eligible(t) or t._dtype is target:
        return t
    from ..ops.copy import cast
    use_cache = (_ST.cache_enabled and policy == "lower_precision" and t._grad_fn is None
                 and t._rg)
    if use_cache:
        hit = _ST.cache.get(id(t))
        if hit is not None and hit[0] is t and hit[1]._dtype is target and \
                hit[2] == t._storage.version:
            return hit[1]
    out = cast(t, target)
    if use_cache:
        _ST.cache[id(t)] = (t, out, t._storage.version)
    return out


class autocast:
    """ember.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        if device_type != "cpu":
            import warnings
            warnings.warn(f"In ember autocast, but the target device type '{device_type}' is "
                          "not available; disabling autocast.")
            enabled = False
            dtype = dtype or D.float16
        dtype = dtype or _ST.dtype.get("cpu", D.bfloat16)
        if device_type == "cpu" and enabled and dtype not in _ALLOWED["cpu"]:
            import warnings
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCPU Autocast only supports dtype of torch.bfloat16, "
                          "torch.float16 currently.")
            enabled = False
        self.fast_dtype = dtype
        self._enabled = enabled
        self._cache_enabled = _ST.cache_enabled if cache_enabled is None else cache_enabled

    def __enter__(self):
        if self.device != "cpu":
            return self
        self._prev = (_ST.enabled["cpu"], _ST.dtype["cpu"], _ST.cache_enabled)
        _ST.enabled["cpu"] = self._enabled
        _ST.dtype["cpu"] = self.fast_dtype
        _ST.cache_enabled = self._cache_enabled
        _ST.depth += 1
        self._pushed = not any(m is _MODE for m in _DSTATE.modes)
        if self._pushed:
            push_mode(_MODE)
        return self

    def __exit__(self, *exc):
        if self.device != "cpu":
            return False
        _ST.depth -= 1
        if self._pushed:
            pop_mode(_MODE)
        if _ST.depth == 0:
            _ST.cache.clear()             # weight casts live for one region
        _ST.enabled["cpu"], _ST.dtype["cpu"], _ST.cache_enabled = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*a, **k)
        return wrapper


def is_autocast_available(device_type):
    return device_type == "cpu"


def is_autocast_enabled(device_type=None):
    """With no argument, PyTorch asks about cuda; ember has only the cpu."""
    return _ST.enabled.get(device_type or "cuda", False)


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:                 # legacy one-argument form targets cuda
        return
    _ST.enabled[device_type] = bool(enabled)


def get_autocast_dtype(device_type):
    return _ST.dtype.get(device_type, _DEFAULT_DTYPE.get(device_type))


def set_autocast_dtype(device_type, dtype):
    _ST.dtype[device_type] = dtype


def get_autocast_cpu_dtype():
    return _ST.dtype["cpu"]


def is_autocast_cpu_enabled():
    return _ST.enabled["cpu"]


def clear_autocast_cache():
    _ST.cache.clear()


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate a Function.forward: with cast_inputs, run it autocast-off on inputs cast
    to that dtype (when autocast is on); remember the state for custom_bwd."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False       # backward then runs without autocast
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        cast = [a.to(cast_inputs) if isinstance(a, Tensor) and _eligible(a) else a
                for a in args[1:]]
        kw = {k: v.to(cast_inputs) if isinstance(v, Tensor) and _eligible(v) else v
              for k, v in kwargs.items()}
        with autocast(device_type, enabled=False):
            return fwd(ctx, *cast, **kw)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorate a Function.backward: run it with the autocast state forward saw."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
