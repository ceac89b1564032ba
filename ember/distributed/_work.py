"""Work (the handle `async_op=True` returns) and the per-group thread that runs queued work.

Note: every collective of a group runs on that group's one worker thread, in the order
the program issued them, so all ranks execute the same sequence and `async_op=True`
returns at once while Python keeps going (DDP overlaps bucket all-reduces with backward).
A failed collective breaks the group: later ones fail at once with the first error.
"""
import queue
import threading
import time

from ..futures import Future
from ._errors import DistBackendError

__all__ = ["Work", "Worker"]


class Work:
    """torch.distributed.Work: wait / is_completed / is_success / exception / get_future."""

    def __init__(self, name="", outputs=None, seq=-1):
        self._name, self._seq = name, seq
        self._outputs = outputs if outputs is not None else []
        self._event = threading.Event()
        self._exc = None
        self._fut = Future()
        self._source_rank = -1
        self._timeout = None

    def _finish(self, exc=None, completer=None):
        self._exc = exc
        self._event.set()
        if completer is not None:       # Future callbacks run off the worker thread
            completer.put(self)
        else:
            self._complete_future()

    def _complete_future(self):
        if self._exc is None:
            self._fut.set_result(self._outputs)
        else:
            self._fut.set_exception(self._exc)

    def wait(self, timeout=None):
        secs = None
        if timeout is None:
            timeout = self._timeout          # recv: the group's timeout
        if timeout is not None:
            secs = timeout.total_seconds() if hasattr(timeout, "total_seconds") else timeout
        if not self._event.wait(secs):
            raise DistBackendError(f"Work.wait timed out after {int(secs * 1000)} ms for "
                                   f"{self._name} (sequence number {self._seq})")
        if self._exc is not None:
            raise self._exc
        return True

    def is_completed(self):
        return self._event.is_set()

    def is_success(self):
        return self._event.is_set() and self._exc is None

    def exception(self):
        return self._exc

    def get_future(self):
        return self._fut

    def result(self):
        self.wait()
        return self._outputs

    def source_rank(self):
        return self._source_rank

    def synchronize(self):
        self.wait()

    def __repr__(self):
        state = "completed" if self.is_completed() else "pending"
        return f"<Work {self._name} seq={self._seq} {state}>"


def completed_work(outputs=None, name=""):
    w = Work(name, outputs)
    w._finish()
    return w


class Worker:
    """One daemon thread running `fn()` for each queued Work, in order.

    A second thread completes the Works' Futures, so a `then` callback may itself issue
    a collective and wait for it (as comm hooks do) without blocking the worker.
    """

    def __init__(self, name):
        self._q = queue.Queue()
        self._done = queue.Queue()
        self.broken = None
        self._thread = threading.Thread(target=self._loop, daemon=True, name=name)
        self._thread.start()
        threading.Thread(target=self._complete, daemon=True, name=name + "-futures").start()

    def _complete(self):
        while True:
            work = self._done.get()
            if work is None:
                return
            work._complete_future()

    def submit(self, work, fn):
        self._q.put((work, fn))
        return work

    def _loop(self):
        while True:
            item = self._q.get()
            if item is None:
                return
            work, fn = item
            if self.broken is not None:
                work._finish(DistBackendError(
                    f"{work._name} (sequence number {work._seq}) not run: the process group "
                    f"is broken by an earlier error: {self.broken}"), self._done)
                continue
            try:
                fn()
            except BaseException as e:       # delivered to whoever waits on the Work
                if isinstance(e, DistBackendError):
                    self.broken = e
                work._finish(e, self._done)
                continue
            work._finish(None, self._done)

    def stop(self, timeout=5.0):
        self._q.put(None)
        self._done.put(None)
        deadline = time.monotonic() + timeout
        self._thread.join(max(0.0, deadline - time.monotonic()))
