"""RPC events for the profiler: `rpc_async#fn(worker0 -> worker1)` on the caller, and the
ops the callee ran for it, recorded there and shipped back with the response.

Note: remote timestamps come from another clock; they are placed relative to the start
of the caller's RPC event (offset from the callee's own start), and carry the callee's
rank as `node_id` (local events have node_id -1, as in PyTorch).
"""
import threading
import time

from ...profiler import _state
from ...profiler._events import FunctionEvent

__all__ = ["begin_call", "end_call", "start_remote", "stop_remote", "add_remote_events"]

_lock = threading.Lock()


class _Call:
    __slots__ = ("prof", "ev", "key")


def _fn_name(func):
    from ._wire import _public_name
    where = _public_name(func) if callable(func) else None
    if where is not None and where[0] == "ember":
        return f"aten::{where[1]}"            # builtin ops are named as PyTorch names them
    mod = getattr(func, "__module__", "") or ""
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    return f"{mod}.{name}" if mod.startswith("ember") else name


def begin_call(kind, func, agent, dst):
    prof = _state.current()
    if prof is None or not prof._recording:
        return None
    c = _Call()
    c.prof = prof
    c.key = f"{kind}#{_fn_name(func)}({agent.name} -> {agent.names[dst]})"
    c.ev = FunctionEvent(next(prof._ids), c.key, threading.get_ident(),
                         time.perf_counter_ns() / 1000.0)
    return c


def end_call(c):
    c.ev.end_us = time.perf_counter_ns() / 1000.0
    with _lock:
        if c.prof._recording:
            c.prof._events.append(c.ev)


def start_remote(key):
    if key is None:
        return None
    from ...profiler import profile
    p = profile(record_shapes=True)
    p._rpc_t0 = time.perf_counter_ns() / 1000.0
    p.start()
    return p


def stop_remote(p):
    if p is None:
        return None
    p.stop()
    t0 = p._rpc_t0
    from .api import _agent
    rank = _agent.rank if _agent is not None else -1
    return [(e.name, e.start_us - t0, e.end_us - e.start_us, e.input_shapes, rank)
            for e in p.events()]


def add_remote_events(c, events):
    base = c.ev.start_us
    out = []
    for name, rel, dur, shapes, rank in events:
        ev = FunctionEvent(next(c.prof._ids), f"{c.key}#remote_op: {name}", c.ev.thread,
                           base + rel, shapes)
        ev.end_us = base + rel + dur
        ev.node_id = rank
        out.append(ev)
    with _lock:
        if c.prof._recording:
            c.prof._events.extend(out)
