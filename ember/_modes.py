"""TorchDispatchMode and the mode-stack API: the core of torch.utils._python_dispatch.

Note: entering a mode puts it on ember's dispatch mode stack (ember/_dispatch.py) at
its rank (DESIGN §6): autocast runs before user modes, user / fake / recording modes
before the profiler, the profiler before the determinism check. Among user modes the
most recently entered runs first, as in PyTorch. Every registry op called while a
mode is active reaches `__torch_dispatch__(func, types, args, kwargs)` with `func` the
op's registry entry (`func.name`, `func.tags`, `func.__name__`, `func.overloadpacket`);
the mode is popped while its handler runs, so `func(*args, **kwargs)` inside it goes
on to the next mode in the fixed order and finally to autograd and the kernel.
Backward formulas are ember ops, so a mode active during `.backward()` sees the
backward ops too. The stack API below (`_get_current_dispatch_mode`, `_push_mode`,
`_pop_mode_temporarily`, ...) sees only TorchDispatchModes, as PyTorch's: autocast
and the profiler are ember's built-in modes, not Python modes.
"""
import contextlib

from . import _dispatch

__all__ = ["TorchDispatchMode", "_get_current_dispatch_mode", "_get_current_dispatch_mode_stack",
           "is_in_torch_dispatch_mode", "_disable_current_modes", "_push_mode", "_pop_mode",
           "_pop_mode_temporarily", "_len_torch_dispatch_stack"]


class TorchDispatchMode:
    """Base class: override `__torch_dispatch__`; use as a context manager."""
    _mode_rank = _dispatch.RANK_USER

    def __init__(self, _dispatch_key=None):
        pass

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"{type(self).__name__} must override __torch_dispatch__")

    def __enter__(self):
        _dispatch.push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _dispatch.pop_mode(self)

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls):
        return False


def _user_modes():
    return [m for m in _dispatch.STATE.modes if isinstance(m, TorchDispatchMode)]


def _get_current_dispatch_mode():
    """The TorchDispatchMode that runs first (None when none is active)."""
    for m in reversed(_dispatch.STATE.modes):
        if isinstance(m, TorchDispatchMode):
            return m
    return None


def _get_current_dispatch_mode_stack():
    """The active TorchDispatchModes, outermost first (the last one runs first)."""
    return _user_modes()


def _len_torch_dispatch_stack():
    return len(_user_modes())


def is_in_torch_dispatch_mode():
    return _get_current_dispatch_mode() is not None


def _push_mode(mode):
    _dispatch.push_mode(mode)


def _pop_mode(k=None):
    """Take the current TorchDispatchMode off the stack and return it."""
    mode = _get_current_dispatch_mode()
    if mode is None:
        raise AssertionError("Trying to pop from an empty mode stack")
    return _dispatch.pop_mode(mode)


@contextlib.contextmanager
def _pop_mode_temporarily(k=None):
    """Run the body without the current TorchDispatchMode; it comes back after."""
    old = _pop_mode(k)
    try:
        yield old
    finally:
        _dispatch.push_mode(old)


@contextlib.contextmanager
def _disable_current_modes():
    """Run the body with no TorchDispatchMode active (they come back after); ember's
    built-in modes (autocast, profiler) stay, as in PyTorch."""
    st = _dispatch.STATE
    saved = _user_modes()
    st.modes = [m for m in st.modes if not isinstance(m, TorchDispatchMode)]
    try:
        yield saved
    finally:
        keep = [m for m in st.modes if not isinstance(m, TorchDispatchMode)]
        st.modes = []
        for m in saved + keep:
            _dispatch.push_mode(m)
