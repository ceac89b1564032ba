"""ember.profiler: what ran, for how long, with how much memory (PyTorch's profiler API).

Note: the profiler is a dispatch mode (DESIGN §6): while it is entered, every op
dispatched on this thread (and in tasks it forks) becomes a FunctionEvent named
`aten::<op>`; the autograd engine adds one event per backward node
(`autograd::engine::evaluate_function: MulBackward0` around the node's own ops);
`record_function` adds user ranges. Nothing is installed when no profiler runs, so
dispatch pays nothing for it. Memory columns are the net bytes ember's counters saw
allocated inside each event.
"""
import enum
import functools
import inspect
import itertools
import os
import socket
import threading
import time

from .. import _memory
from .._dispatch import RANK_PROFILER, push_mode, pop_mode
from . import _state
from ._events import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "ProfilerActivity", "ProfilerAction", "schedule", "record_function",
           "tensorboard_trace_handler", "supported_activities", "EventList",
           "FunctionEvent", "FunctionEventAvg"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1
    XPU = 2
    MTIA = 3


def supported_activities():
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """step number -> ProfilerAction, as torch.profiler.schedule."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")

    def fn(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return fn


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """on_trace_ready handler: writes `<dir>/<worker>.<ms>.pt.trace.json`."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{name}.{int(time.time() * 1000)}.pt.trace.json")
        if use_gzip:
            raise NotImplementedError("tensorboard_trace_handler: use_gzip=True is not "
                                      "supported by ember")
        prof.export_chrome_trace(path)
    return handler


class _Recorder:
    """The dispatch mode that turns each op into an event (after autocast and user modes,
    so it records the ops that really run, casts included)."""
    _mode_rank = RANK_PROFILER

    def __init__(self, prof):
        self.prof = prof

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        prof = self.prof
        if not prof._recording:
            return func(*args, **(kwargs or {}))
        ev = prof._begin("aten::" + func.name, args, flops_of=func.name)
        try:
            return func(*args, **(kwargs or {}))
        finally:
            prof._end(ev)


def _backward_events(node, gin, call):
    """Engine node wrapper: backward work shows up under autograd names, as in PyTorch's
    profiler (the innermost running profiler records it)."""
    prof = _state.current()
    if prof is None or not prof._recording:
        return call(gin)
    name = node.name()
    outer = prof._begin("autograd::engine::evaluate_function: " + name)
    try:
        inner = prof._begin(name)
        try:
            return call(gin)
        finally:
            prof._end(inner)
    finally:
        prof._end(outer)


class profile:
    """torch.profiler.profile for the cpu: context manager, `step()`, reports."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None,
                 execution_trace_observer=None, acc_events=False, use_cuda=None,
                 enabled=True):
        acts = set(activities) if activities is not None else {ProfilerActivity.CPU}
        unsupported = acts - supported_activities()
        if unsupported:
            import warnings
            warnings.warn(f"ember.profiler: activities {sorted(a.name for a in unsupported)} "
                          "are not available (ember has only the cpu); ignoring them")
        self.enabled = enabled
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.step_num = 0
        self._events = []
        self._saved = None
        self._ids = itertools.count()
        self._local = threading.local()
        self._recording = False
        self._mode = _Recorder(self)
        self._action = ProfilerAction.RECORD if schedule is None else schedule(0)

    # -- lifecycle ------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        if not self.enabled:
            return
        from ..autograd import engine
        push_mode(self._mode)
        _state.push(self)
        engine.add_node_wrapper(RANK_PROFILER, _backward_events)
        if self.profile_memory:
            _memory.track_totals(True)
        self._apply_action(self._action)

    def stop(self):
        if not self.enabled:
            return
        if self._action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._finish_window()
        self._recording = False
        if self.profile_memory:
            _memory.track_totals(False)
        from ..autograd import engine
        engine.remove_node_wrapper(_backward_events)
        _state.pop(self)
        pop_mode(self._mode)

    def step(self):
        """Advance the schedule by one step (call once per training iteration)."""
        self.step_num += 1
        if self.schedule is None:
            return
        prev, nxt = self._action, self.schedule(self.step_num)
        if prev == ProfilerAction.RECORD_AND_SAVE:
            self._finish_window()
        elif prev == ProfilerAction.WARMUP and nxt != ProfilerAction.WARMUP:
            self._events = []               # warmup events are discarded
        elif prev == ProfilerAction.RECORD and nxt in (ProfilerAction.NONE,
                                                       ProfilerAction.WARMUP):
            self._events = []               # an unfinished window is dropped
        self._action = nxt
        self._apply_action(nxt)

    def _apply_action(self, action):
        self._recording = action != ProfilerAction.NONE

    def _finish_window(self):
        self._saved = self._events
        self._events = []
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # -- recording --------------------------------------------------------------
    def _stack(self):
        st = getattr(self._local, "stack", None)
        if st is None:
            st = self._local.stack = []
        return st

    def _begin(self, name, args=(), flops_of=None):
        st = self._stack()
        shapes = _shapes(args) if self.record_shapes else None
        ev = FunctionEvent(next(self._ids), name, threading.get_ident(),
                           time.perf_counter_ns() / 1000.0, shapes,
                           _user_stack() if self.with_stack else None,
                           _state.module_path() if self.with_modules else None,
                           _flops(flops_of, args) if self.with_flops and flops_of else 0,
                           _memory.COUNT[0] if self.profile_memory else 0)
        if self.profile_memory:
            ev._alloc_start, ev._freed_start = _memory.COUNT[2], _memory.COUNT[3]
        if st:
            ev.cpu_parent = st[-1]
        st.append(ev)
        return ev

    def _end(self, ev):
        ev.end_us = time.perf_counter_ns() / 1000.0
        if self.profile_memory:
            ev.cpu_memory_usage = _memory.COUNT[0] - ev._mem_start
            ev.allocated_bytes = _memory.COUNT[2] - ev._alloc_start
            ev.freed_bytes = _memory.COUNT[3] - ev._freed_start
        st = self._stack()
        if st and st[-1] is ev:
            st.pop()
        if ev.cpu_parent is not None:
            ev.cpu_parent.cpu_children.append(ev)
        if self._recording:
            self._events.append(ev)

    # -- reports ----------------------------------------------------------------
    def events(self):
        evs = sorted(self._saved if self._saved is not None else self._events,
                     key=lambda e: e.start_us)
        return EventList(evs, self.profile_memory, self.with_stack, self.with_flops,
                         self.record_shapes)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self):
        return self.events().total_average()

    def table(self, *args, **kwargs):
        return self.key_averages().table(*args, **kwargs)

    def export_chrome_trace(self, path):
        self.events().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        if not self.with_stack:
            raise RuntimeError("export_stacks() requires profile(with_stack=True)")
        self.events().export_stacks(path, metric)

    @property
    def profiler(self):
        return self


class record_function:
    """A named range in the profile; a context manager and a decorator."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._ev = None
        self._prof = None

    def __enter__(self):
        self._prof = _state.current()
        if self._prof is not None and self._prof._recording:
            self._ev = self._prof._begin(self.name)
        return self

    def __exit__(self, *exc):
        if self._ev is not None:
            self._prof._end(self._ev)
            self._ev = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with record_function(self.name, self.args):
                return fn(*a, **k)
        return wrapper


def _shapes(args):
    from .._tensor import Tensor
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(list(a.shape))
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            out.append([list(x.shape) for x in a])
        else:
            out.append([])
    return out


_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_stack(limit=16):
    """The Python frames outside ember, innermost first, as 'file(line): function'."""
    frames = []
    f = inspect.currentframe()
    while f is not None and len(frames) < limit:
        path = f.f_code.co_filename
        if not path.startswith(_EMBER_DIR):
            frames.append(f"{path}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return frames


def _flops(name, args):
    """Multiply-adds ×2 for the matmul family (PyTorch counts these ops' FLOPs)."""
    from .._tensor import Tensor
    ts = [a for a in args if isinstance(a, Tensor)]
    if name in ("mm", "matmul", "bmm") and len(ts) >= 2:
        a, b = ts[0].shape, ts[1].shape
        if len(a) >= 1 and len(b) >= 1:
            k = a[-1]
            n_out = 1
            for s in _matmul_out_shape(a, b):
                n_out *= s
            return 2 * n_out * k
    if name in ("addmm", "baddbmm") and len(ts) >= 3:
        a, b = ts[1].shape, ts[2].shape
        n_out = 1
        for s in _matmul_out_shape(a, b):
            n_out *= s
        return 2 * n_out * a[-1]
    return 0


def _matmul_out_shape(a, b):
    a2 = a if len(a) > 1 else (1,) + tuple(a)
    b2 = b if len(b) > 1 else tuple(b) + (1,)
    return tuple(a2[:-1]) + (b2[-1],)
