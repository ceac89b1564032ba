"""ember.futures: the Future that fork/wait (and later RPC) hand out.

Note: a Future is completed once, with a value or an exception; callbacks added
before completion run in the completing thread, callbacks added after run at once
(PyTorch's semantics). `then` chains a callback whose return value (or exception)
completes a new Future.
"""
import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    def __init__(self, *, devices=None):
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._exc = None
        self._callbacks = []

    # -- completion ---------------------------------------------------------
    def set_result(self, result):
        self._complete(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expects an exception, got {type(result).__name__}")
        self._complete(None, result)

    def _complete(self, value, exc):
        with self._cond:
            if self._done:
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._exc, self._done = value, exc, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            _run_callback(cb, self)

    # -- reading ------------------------------------------------------------
    def done(self):
        return self._done

    def wait(self):
        """Block until complete; returns the value or raises the stored exception."""
        if not self._done:
            _help_while_waiting(self)
            with self._cond:
                while not self._done:
                    self._cond.wait()
        if self._exc is not None:
            raise self._exc
        return self._value

    def value(self):
        if not self._done:
            raise RuntimeError("Future.value() called on a Future that is not completed")
        if self._exc is not None:
            raise self._exc
        return self._value

    # -- chaining -----------------------------------------------------------
    def add_done_callback(self, callback):
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        _run_callback(callback, self)

    def then(self, callback):
        nxt = Future()

        def run(fut):
            try:
                nxt.set_result(callback(fut))
            except Exception as e:      # the callback's error completes `nxt`, wrapped as
                nxt.set_exception(RuntimeError(  # PyTorch wraps it
                    f"Got the following error when running the callback: "
                    f"{type(e).__name__}: {e}"))
        self.add_done_callback(run)
        return nxt

    def __repr__(self):
        state = "done" if self._done else "pending"
        return f"<ember.futures.Future ({state})>"


def _run_callback(cb, fut):
    try:
        cb(fut)
    except Exception as e:      # PyTorch logs and swallows errors of plain callbacks
        import warnings
        warnings.warn(f"Future callback raised {type(e).__name__}: {e}", UserWarning)


def _help_while_waiting(fut):
    """Hook for the fork pool: run the awaited task here instead of blocking a worker."""
    run = getattr(fut, "_run_inline", None)
    if run is not None:
        run()


def collect_all(futures):
    """A Future completed (with the list of futures) when all of them are."""
    futures = list(futures)
    out = Future()
    if not futures:
        out.set_result([])
        return out
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(futures)
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures):
    """Wait for all; returns their values, raising the first error encountered."""
    return [f.wait() for f in futures]
