"""ember.jit: fork/wait task parallelism, and TorchScript-compatible names.

Note: `fork` runs the function on a thread pool (NumPy kernels release the GIL, so
two branches of large array work overlap on two cores). The forked task sees the
caller's grad mode and dispatch modes, as PyTorch propagates thread-local state.
`wait` on a task that no worker has started runs it in the waiting thread, so
nested forks cannot deadlock a bounded pool.
"""
import os
import queue
import threading

from .._dispatch import STATE
from .. import _memory
from ..futures import Future

__all__ = ["fork", "wait", "script", "trace", "ignore", "unused", "is_scripting",
           "is_tracing", "Future", "ScriptModule", "ScriptFunction", "load", "freeze",
           "optimize_for_inference", "trace_module"]


class _Task(Future):
    def __init__(self, fn, args, kwargs):
        super().__init__()
        self._fn, self._args, self._kwargs = fn, args, kwargs
        self._claim = threading.Lock()
        self._grad = STATE.grad_enabled
        self._modes = list(STATE.modes)

    def _run_inline(self):
        if self._claim.acquire(blocking=False):   # not started by a worker: run it here
            self._execute()

    def _execute(self):
        prev_grad, prev_modes = STATE.grad_enabled, STATE.modes
        STATE.grad_enabled, STATE.modes = self._grad, list(self._modes)
        try:
            result = self._fn(*self._args, **self._kwargs)
        except BaseException as e:
            self.set_exception(e)
        else:
            self.set_result(result)
        finally:
            STATE.grad_enabled, STATE.modes = prev_grad, prev_modes
            self._fn = self._args = self._kwargs = None


class _Pool:
    def __init__(self, size):
        self.size = size
        self.tasks = queue.SimpleQueue()
        self.threads = []
        self.lock = threading.Lock()

    def submit(self, task):
        with self.lock:
            if len(self.threads) < self.size:
                _memory.set_threaded(True)
                t = threading.Thread(target=self._work, name=f"ember-fork-{len(self.threads)}",
                                     daemon=True)
                self.threads.append(t)
                t.start()
        self.tasks.put(task)

    def _work(self):
        while True:
            task = self.tasks.get()
            if task._claim.acquire(blocking=False):
                task._execute()
            del task                  # don't keep the last result alive between tasks


_POOL = _Pool(max(2, os.cpu_count() or 2))


def fork(func, *args, **kwargs):
    """Start func(*args, **kwargs) asynchronously; returns a Future of its result."""
    task = _Task(func, args, kwargs)
    _POOL.submit(task)
    return task


def wait(future):
    """The forked task's result (its exception is raised here)."""
    return future.wait()


def ignore(drop=False, **kwargs):
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def is_scripting():
    return False


def is_tracing():
    return False


def _fork_captured(func, *args, **kwargs):
    """fork under ember's capture (trace/script/compile): the graph computes the task in
    line; its 'future' is the value itself, which _wait_captured hands back."""
    return func(*args, **kwargs)


def _wait_captured(future):
    return future


fork._ember_capture_as = _fork_captured
wait._ember_capture_as = _wait_captured

from ._script import (ScriptModule, ScriptFunction, trace, script, load, freeze,  # noqa: E402
                      optimize_for_inference, trace_module)
