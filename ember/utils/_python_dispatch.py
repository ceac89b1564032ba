"""TorchDispatchMode: user hooks around every dispatched op (torch.utils._python_dispatch).

Note: entering a mode pushes it on ember's dispatch mode stack (ember/_dispatch.py).
Every registry op called while it is active reaches `__torch_dispatch__(func,
types, args, kwargs)` with `func` the op's registry entry (`func.name`,
`func.tags`, `func.__name__`, `func.overloadpacket`); the mode is popped while its
handler runs, so `func(*args, **kwargs)` inside it goes on to the mode entered
before it and finally to autograd and the kernel. Backward formulas are ember
ops, so a mode active during `.backward()` sees the backward ops too.
"""
import contextlib

from .. import _dispatch


class TorchDispatchMode:
    """Base class: override `__torch_dispatch__`; use as a context manager."""

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


def _get_current_dispatch_mode():
    modes = _dispatch.STATE.modes
    return modes[-1] if modes else None


def _get_current_dispatch_mode_stack():
    return list(_dispatch.STATE.modes)


def is_in_torch_dispatch_mode():
    return bool(_dispatch.STATE.modes)


@contextlib.contextmanager
def _disable_current_modes():
    """Run the body with no dispatch mode active (the modes come back after)."""
    st = _dispatch.STATE
    saved, st.modes = st.modes, []
    try:
        yield saved
    finally:
        st.modes = saved
