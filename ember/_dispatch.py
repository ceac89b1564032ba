"""dispatch(op, args): the one path every operator call takes.

Note: the path is  mode stack (outermost first) -> autograd recording -> kernel.
A mode is an object with `__torch_dispatch__(func, types, args, kwargs)`; while it
runs it is popped off the stack, so calling `func(*args)` inside it goes on to the
next inner mode and finally to `execute`. With no mode and no input that requires
grad, the cost is one truthiness test, the kernel and one Tensor wrapper.
"""
import threading


class _State(threading.local):
    def __init__(self):
        self.modes = []          # innermost last
        self.grad_enabled = True
        self.inference = False


STATE = _State()


def dispatch(op, args):
    if STATE.modes:
        return _mode_dispatch(op, args)
    return op.execute(args)


def _mode_dispatch(op, args):
    modes = STATE.modes
    mode = modes.pop()
    try:
        return mode.__torch_dispatch__(op, _types(args), args, {})
    finally:
        modes.append(mode)


def _types(args):
    from ._tensor import Tensor
    seen = []
    for a in args:
        if isinstance(a, Tensor) and type(a) not in seen:
            seen.append(type(a))
    return tuple(seen)


def push_mode(mode):
    STATE.modes.append(mode)


def pop_mode(mode=None):
    m = STATE.modes.pop()
    if mode is not None and m is not mode:
        STATE.modes.append(m)
        raise RuntimeError("ember: modes must be exited in the reverse order they were entered")
    return m


def active_modes():
    return tuple(STATE.modes)
