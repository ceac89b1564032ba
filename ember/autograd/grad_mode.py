"""Grad-mode switches: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each works as a context manager and as a decorator, and is thread-local (the
flag lives in the dispatcher's thread-local state)."""
import functools

from .._dispatch import STATE


class _GradSwitch:
    _value = True

    def __enter__(self):
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = self._value

    def __exit__(self, *exc):
        STATE.grad_enabled = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)
        return wrapper

    def _args(self):
        return ()

    def clone(self):
        return self.__class__(*self._args())


class no_grad(_GradSwitch):
    _value = False

    def __init__(self, orig_func=None):
        self._func = orig_func


class enable_grad(_GradSwitch):
    _value = True


class set_grad_enabled(_GradSwitch):
    """Takes effect immediately (function form) and also works as a context manager."""

    def __init__(self, mode):
        self._prev = STATE.grad_enabled
        self._value = bool(mode)
        STATE.grad_enabled = self._value

    def __enter__(self):
        pass

    def _args(self):
        return (self._value,)


class inference_mode(_GradSwitch):
    def __init__(self, mode=True):
        self.mode = mode
        self._value = not mode

    def __enter__(self):
        self._prev = STATE.grad_enabled
        self._prev_inf = STATE.inference
        if self.mode:
            STATE.grad_enabled = False
            STATE.inference = True

    def __exit__(self, *exc):
        STATE.grad_enabled = self._prev
        STATE.inference = self._prev_inf
        return False

    def _args(self):
        return (self.mode,)


def is_grad_enabled():
    return STATE.grad_enabled


def is_inference_mode_enabled():
    return STATE.inference
