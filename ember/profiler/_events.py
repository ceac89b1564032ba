"""Profiler events, their averages, PyTorch's table, and trace/stack export.

Note: times are kept in microseconds (PyTorch's unit). An event's self time is its
total minus its direct children's totals; its self memory is the net bytes it
allocated (allocations minus frees, from ember's memory counters) minus its
children's. Files are written atomically (temporary file, then rename).
"""
import json
import os
import tempfile
from collections import OrderedDict

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList"]


class FunctionEvent:
    """One recorded op, record_function range or autograd node."""
    node_id = -1        # the RPC worker that ran it (-1: this process), as PyTorch's

    def __init__(self, id, name, thread, start_us, input_shapes=None, stack=None,
                 module=None, flops=0, mem_start=0):
        self.id = id
        self.name = name
        self.thread = thread
        self.start_us = start_us
        self.end_us = start_us
        self.input_shapes = input_shapes or []
        self.stack = stack or []
        self.module_hierarchy = module
        self.flops = flops
        self._mem_start = mem_start
        self.cpu_memory_usage = 0
        self.allocated_bytes = 0        # bytes allocated inside the event (children included)
        self.freed_bytes = 0            # bytes freed inside the event
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_allocated_bytes(self):
        return self.allocated_bytes - sum(c.allocated_bytes for c in self.cpu_children)

    @property
    def self_freed_bytes(self):
        return self.freed_bytes - sum(c.freed_bytes for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def time_range(self):
        return (self.start_us, self.end_us)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time="
                f"{_format_time(self.cpu_time_total)} self_cpu_time="
                f"{_format_time(self.self_cpu_time_total)} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg:
    """Events grouped under one key (name, and optionally shapes or stack)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.flops = 0
        self.is_top_level = False

    def add(self, ev):
        if self.key is None:
            self.key = ev.key
            self.input_shapes = ev.input_shapes
            self.stack = ev.stack
        self.count += ev.count
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        self.cpu_memory_usage += ev.cpu_memory_usage
        self.self_cpu_memory_usage += ev.self_cpu_memory_usage
        self.flops += ev.flops
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time="
                f"{_format_time(self.self_cpu_time_total)} cpu_time="
                f"{_format_time(self.cpu_time_total)} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of events with PyTorch's reporting methods."""

    def __init__(self, events=(), profile_memory=False, with_stack=False, with_flops=False,
                 show_shapes=False):
        super().__init__(events)
        self._profile_memory = profile_memory
        self._with_stack = with_stack
        self._with_flops = with_flops
        self._show_shapes = show_shapes

    def _like(self, items, show_shapes=None):
        return EventList(items, self._profile_memory, self._with_stack, self._with_flops,
                         self._show_shapes if show_shapes is None else show_shapes)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        groups = OrderedDict()
        for ev in self:
            key = [ev.key]
            if group_by_input_shape:
                key.append(str(ev.input_shapes))
            if group_by_stack_n > 0:
                key += ev.stack[:group_by_stack_n]
            avg = groups.get(tuple(key))
            if avg is None:
                avg = groups[tuple(key)] = FunctionEventAvg()
                avg.is_top_level = ev.cpu_parent is None
            avg.add(ev)
        return self._like(groups.values(), show_shapes=group_by_input_shape)

    def total_average(self):
        total = FunctionEventAvg()
        for ev in self:
            total.add(ev)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        return _table(self, sort_by, row_limit, max_src_column_width, max_name_column_width,
                      max_shapes_column_width, header, top_level_events_only)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Trace Event Format JSON (opens in Perfetto and chrome://tracing)."""
        pid = os.getpid()
        events = []
        for ev in self:
            args = {"External id": ev.id}
            if ev.input_shapes:
                args["Input Dims"] = ev.input_shapes
            if ev.stack:
                args["Call stack"] = ";".join(ev.stack)
            if ev.flops:
                args["flops"] = ev.flops
            if ev.node_id >= 0:
                args["Node Id"] = ev.node_id
            events.append({"ph": "X", "cat": "cpu_op", "name": ev.name, "pid": pid,
                           "tid": ev.thread, "ts": ev.start_us, "dur": ev.cpu_time_total,
                           "args": args})
            if self._profile_memory and (ev.self_allocated_bytes or ev.self_freed_bytes):
                for nbytes in (ev.self_allocated_bytes, -ev.self_freed_bytes):
                    if nbytes:
                        events.append({"ph": "i", "s": "t", "cat": "cpu_instant_event",
                                       "name": "[memory]", "pid": pid, "tid": ev.thread,
                                       "ts": ev.end_us, "args": {"Bytes": nbytes,
                                                                 "Device Type": 0}})
        _atomic_write(path, json.dumps({"traceEvents": events, "displayTimeUnit": "ms",
                                        "schemaVersion": 1}))

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Flame-graph input: one line `frame;frame;...;op value` per event with a stack."""
        if metric not in ("self_cpu_time_total", "self_cpu_memory_usage"):
            raise ValueError(f"export_stacks: metric must be self_cpu_time_total or "
                             f"self_cpu_memory_usage, got {metric!r}")
        lines = []
        for ev in self:
            if not ev.stack:
                continue
            value = int(getattr(ev, metric))
            frames = [f.replace(";", ",") for f in reversed(ev.stack)]
            lines.append(";".join(frames + [ev.name]) + f" {value}")
        _atomic_write(path, "\n".join(lines) + ("\n" if lines else ""))


def _atomic_write(path, text):
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---------------------------------------------------------------- PyTorch's table

def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_memory(nbytes):
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} Gb"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} Mb"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} Kb"
    return f"{int(nbytes)} b"


def _flops_unit(max_flops):
    """PyTorch scales the FLOPs column by its largest value and names the unit."""
    for unit, scale in (("PFLOPs", 1e15), ("TFLOPs", 1e12), ("GFLOPs", 1e9),
                        ("MFLOPs", 1e6), ("KFLOPs", 1e3)):
        if max_flops >= scale:
            return unit, scale
    return "FLOPs", 1.0


_SORT_KEYS = {"self_cpu_time_total", "cpu_time_total", "self_cpu_memory_usage",
              "cpu_memory_usage", "count", "cpu_time", "flops"}


def _table(events, sort_by, row_limit, max_src, max_name, max_shapes, header, top_only):
    show_shapes = getattr(events, "_show_shapes", False)
    show_flops = getattr(events, "_with_flops", False)
    profile_memory = getattr(events, "_profile_memory", False)
    if sort_by is not None:
        if sort_by not in _SORT_KEYS:
            raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'")
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)
    if top_only:
        events = [e for e in events if getattr(e, "is_top_level", e.cpu_parent is None
                                              if hasattr(e, "cpu_parent") else True)]
    rows = list(events)[:row_limit] if row_limit and row_limit > 0 else list(events)
    total_self = sum(e.self_cpu_time_total for e in events) or 1.0
    show_mem = profile_memory or any(e.cpu_memory_usage for e in rows)
    show_stack = any(e.stack for e in rows)

    name_w = min(max([len(e.key) for e in rows] + [4]) + 4, max_name)
    cols = [("Name", name_w)]
    nw = 12
    cols += [("Self CPU %", nw), ("Self CPU", nw), ("CPU total %", nw), ("CPU total", nw),
             ("CPU time avg", nw)]
    if show_mem:
        cols += [("CPU Mem", nw), ("Self CPU Mem", nw)]
    cols.append(("# of Calls", nw))
    if show_shapes:
        shape_w = min(max([len(str(e.input_shapes)) for e in rows] + [12]) + 4, max_shapes)
        cols.append(("Input Shapes", shape_w))
    if show_stack:
        src_w = min(max([len(s) for e in rows for s in (e.stack or [""])] + [15]) + 4, max_src)
        cols.append(("Source Location", src_w))
    if show_flops:
        unit, scale = _flops_unit(max([e.flops for e in rows] + [0]))
        cols.append((f"Total {unit}", nw))

    fmt = "".join("{:>%d}  " % w if i else "{:>%d}  " % w for i, (_, w) in enumerate(cols))
    line = "".join("-" * w + "  " for _, w in cols)
    out = []
    if header:
        out += ["=" * len(line), header]
    out += [line, fmt.format(*[c for c, _ in cols]), line]

    def clip(s, w):
        return s if len(s) <= w else s[:w - 3] + "..."

    for e in rows:
        vals = [clip(e.key, name_w), f"{e.self_cpu_time_total / total_self * 100:.2f}%",
                _format_time(e.self_cpu_time_total),
                f"{e.cpu_time_total / total_self * 100:.2f}%", _format_time(e.cpu_time_total),
                _format_time(e.cpu_time_total / max(e.count, 1))]
        if show_mem:
            vals += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        vals.append(str(e.count))
        if show_shapes:
            vals.append(clip(str(e.input_shapes), shape_w))
        stack = e.stack or [""]
        if show_stack:
            vals.append(clip(stack[0], src_w))
        if show_flops:
            vals.append(f"{e.flops / scale:.3f}" if e.flops else "--")
        out.append(fmt.format(*vals))
        if show_stack:
            for s in stack[1:]:
                extra = [""] * len(vals)
                extra[[c for c, _ in cols].index("Source Location")] = clip(s, src_w)
                out.append(fmt.format(*extra))
    out.append(line)
    out.append(f"Self CPU time total: {_format_time(sum(e.self_cpu_time_total for e in events))}")
    return "\n".join(out) + "\n"
