"""Grad-mode switches: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each works as a context manager and as a decorator (also on generator functions,
and `@no_grad` without parentheses), and is thread-local (the flags live in the
dispatcher's thread-local state). While inference_mode is on, a mode on the
dispatch stack marks every new (non-view) op output as an inference tensor.
"""
import functools
import inspect
import sys

from .._dispatch import STATE, push_mode, pop_mode

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


class _DecoratorContextManager:
    """Context manager usable as a decorator; each call of the function re-enters it."""

    def __call__(self, fn):
        if inspect.isclass(fn):
            raise RuntimeError("Torch function decorators cannot be used on classes")
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def _wrap_generator(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with self.clone():
                    resp = gen.send(None)
                while True:
                    try:
                        request = yield resp
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException:
                        with self.clone():
                            resp = gen.throw(*sys.exc_info())
                    else:
                        with self.clone():
                            resp = gen.send(request)
            except StopIteration as e:
                return e.value
        return wrapper

    def clone(self):
        return self.__class__()


class _NoParamDecorator(_DecoratorContextManager):
    """Allows `@no_grad` as well as `@no_grad()`."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecorator):
    """Ops inside record no autograd history."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = STATE.grad_enabled
        STATE.grad_enabled = False

    def __exit__(self, *exc):
        STATE.grad_enabled = self.prev
        return False


class enable_grad(_NoParamDecorator):
    """Turns recording back on inside no_grad."""

    def __enter__(self):
        self.prev = STATE.grad_enabled
        STATE.grad_enabled = True

    def __exit__(self, *exc):
        STATE.grad_enabled = self.prev
        return False


class set_grad_enabled(_DecoratorContextManager):
    """Takes effect immediately (function form); as a context manager, restores on exit."""

    def __init__(self, mode):
        self.prev = STATE.grad_enabled
        self.mode = bool(mode)
        STATE.grad_enabled = self.mode

    def __call__(self, fn):
        STATE.grad_enabled = self.prev
        return super().__call__(fn)

    def __enter__(self):
        STATE.grad_enabled = self.mode

    def __exit__(self, *exc):
        STATE.grad_enabled = self.prev
        return False

    def clone(self):
        return self.__class__(self.mode)


class _InferenceMarker:
    """Dispatch mode: outputs made while inference mode is on are inference tensors."""

    def __torch_dispatch__(self, func, types, args, kwargs):
        res = func(*args, **(kwargs or {}))
        if STATE.inference:
            for o in (res if isinstance(res, tuple) else (res,)):
                if getattr(o, "_base", 0) is None:
                    o._inference = True
        return res


class inference_mode(_DecoratorContextManager):
    """no_grad that also marks new tensors as inference tensors (torch.inference_mode)."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self._prev = (STATE.grad_enabled, STATE.inference)
        STATE.grad_enabled = not self.mode
        STATE.inference = self.mode
        self._marker = None
        if self.mode:
            self._marker = _InferenceMarker()
            push_mode(self._marker)

    def __exit__(self, *exc):
        STATE.grad_enabled, STATE.inference = self._prev
        if self._marker is not None:
            pop_mode(self._marker)
        return False

    def clone(self):
        return self.__class__(self.mode)


def is_grad_enabled():
    return STATE.grad_enabled


def is_inference_mode_enabled():
    return STATE.inference

