"""One capture: interpret a segment of a frame, then turn the result into a `Segment`
the runtime can run (guards, compiled graph, input getter, state rebuilder).

Note: the graph's outputs are every tensor the rest of the frame can see (the return
value, or at a break the live locals and value stack); everything else of the frame
state is rebuilt by generated Python from sources (the same objects the frame had),
constants, and the graph's outputs."""
import logging
import time

from .._dispatch import STATE
from .._symbolic import SymInt
from .exc import Unsupported, BackendCompilerFailed
from ..fx.passes.graph_signature import graph_signature
from .output_graph import OutputGraph
from .utils import counters, dynamo_timed
from .symbolic_convert import InstructionTranslator, ReturnAt
from .calls import _Null
from .numpy_interop import _NumpyMethod
from .scope import _CellVariable
from .variables.base import ConstantVariable
from .variables.containers import (BaseListVariable, DictVariable, IteratorVariable,
                                   SliceVariable, RangeVariable)
from .variables.functions import (TensorMethod, BoundBuiltinMethod, UserMethodVariable,
                                  NestedUserFunctionVariable,
                                  BuiltinVariable, EmberFunctionVariable,
                                  UserFunctionVariable)
from .variables.objects import GradModeVariable, _Bound, SuperVariable, ContextObjectVariable
from .variables.tensor import TensorVariable

log = logging.getLogger("ember._dynamo")

__all__ = ["Segment", "capture_segment"]


class Segment:
    """A compiled piece of a frame: valid while `guard(L, S, G, C, K)` holds."""
    __slots__ = ("guard", "get_inputs", "graph_fn", "rebuild", "kind", "break_offset",
                 "consts", "gm", "reason", "guard_text", "ops", "user_stack")

    def run(self, L, S, G, C):
        K = self.consts
        inputs = self.get_inputs(L, S, G, C, K)
        out = self.graph_fn(*inputs) if self.graph_fn is not None else ()
        return self.rebuild(L, S, G, C, K, out)


def _interpret(code, f_globals, frame, offset, ctx, break_at, hint_shift=0):
    og = OutputGraph(ctx.dynamic_dims, hint_shift)
    tx = InstructionTranslator(code, f_globals, og, frame, offset, break_at, ctx)
    saved = _save_state()
    try:
        return tx, og, tx.run()
    finally:
        _restore_state(saved)


def _save_state():
    """Global state a capture may change while interpreting (grad mode, autocast, the
    dispatch mode stack): restored after it, since the graph replays the changes."""
    from ..amp import autocast_mode as am
    st = am._ST
    return (STATE.grad_enabled, list(STATE.modes), dict(st.enabled), dict(st.dtype),
            st.cache_enabled, st.depth)


def _restore_state(saved):
    from ..amp import autocast_mode as am
    st = am._ST
    STATE.grad_enabled, modes, enabled, dtype, st.cache_enabled, depth = saved
    STATE.modes[:] = modes
    st.enabled.clear()
    st.enabled.update(enabled)
    st.dtype.clear()
    st.dtype.update(dtype)
    if st.depth != depth:
        st.depth = depth
        if depth == 0:
            st.cache.clear()


def capture_segment(code, f_globals, frame, offset, ctx):
    """Interprets from `offset`; restarts with a break point when something is
    unsupported. Returns a Segment."""
    counters["frames"]["total"] += 1
    with dynamo_timed("_compile.compile_inner"):
        seg = _capture_segment(code, f_globals, frame, offset, ctx)
    counters["frames"]["ok"] += 1
    counters["stats"]["unique_graphs"] += seg.gm is not None
    counters["stats"]["calls_captured"] += seg.ops
    return seg


def _capture_segment(code, f_globals, frame, offset, ctx):
    break_at, reason, stack = None, None, None
    for _attempt in range(4):
        ctx.code = code
        t0 = time.perf_counter()
        try:
            tx, og, result = _interpret(code, f_globals, frame, offset, ctx, break_at)
            og._tx = tx
        except Unsupported as e:
            ins = getattr(e, "_ember_ins", None)
            if ctx.fullgraph or ins is None or (break_at is not None and
                                                ins.offset == break_at):
                raise
            break_at, reason, stack = ins.offset, e.msg, e.user_stack
            counters["graph_break"][reason] += 1
            ctx.record_break(reason, stack)
            continue
        og.check_marked()
        if ctx.sizes_changed(og.inputs, og.scalars) and _attempt < 3:
            continue           # automatic dynamic: capture again with those dims symbolic
        if (og.sym_source or og.sym_floats) and not _same_with_other_sizes(
                code, f_globals, frame, offset, ctx, break_at, og, result):
            ctx.pin_static([src for src, _, _ in og.inputs if src is not None])
            continue           # the program computes with sizes as Python numbers
        seg = _finish(tx, og, result, ctx, code)
        seg.reason, seg.user_stack = reason, stack
        ctx.record_compile(seg, time.perf_counter() - t0)
        from ._logs import compiled
        compiled(seg, code)
        return seg
    raise Unsupported(f"capture of {code.co_name} did not converge")


def _same_with_other_sizes(code, f_globals, frame, offset, ctx, break_at, og, result):
    """The graph captured with symbolic sizes must not depend on their example values:
    capture again with every symbolic size one larger and compare the graphs. A size that
    reached an op as a plain number (a meta or kernel computing with NumPy shapes) would
    show up as a differing constant; such inputs stay static (no stale results)."""
    try:
        tx2, og2, result2 = _interpret(code, f_globals, frame, offset, ctx, break_at,
                                       hint_shift=1)
    except Unsupported:
        return False
    if type(result) is not type(result2) or getattr(result, "offset", None) != getattr(
            result2, "offset", None):
        return False
    return graph_signature(og.graph) == graph_signature(og2.graph) and \
        _live_constants(og._tx, result) == _live_constants(tx2, result2)


def _live_constants(tx, result):
    """The Python numbers the frame state after the segment holds (they must not depend on
    the example sizes either)."""
    out = []

    def walk(v, depth=0):
        if depth > 20:
            return
        if isinstance(v, ConstantVariable) and v.source is None:
            out.append(str(v.value) if isinstance(v.value, SymInt) else repr(v.value))
        for x in getattr(v, "items", ()) if not isinstance(getattr(v, "items", None),
                                                           dict) else v.items.values():
            walk(x, depth + 1)
    if isinstance(result, ReturnAt):
        walk(result.value)
    else:
        for v in list(tx.stack) + list(tx.locals.values()):
            walk(v)
    return out


class _Rebuild:
    """Generates the Python that rebuilds frame values from sources, consts and outputs."""

    def __init__(self, og, top_cells=None):
        self.og = og
        self.top_cells = top_cells or {}    # id(_Cell) -> name of the frame's own cell
        self.outputs = []           # graph output nodes
        self.out_index = {}
        self.consts = {}

    def const(self, value):
        for k, v in self.consts.items():
            if v is value:
                return f"K[{k!r}]"
        k = f"k{len(self.consts)}"
        self.consts[k] = value
        return f"K[{k!r}]"

    def out(self, node):
        i = self.out_index.get(node)
        if i is None:
            i = self.out_index[node] = len(self.outputs)
            self.outputs.append(node)
        return f"out[{i}]"

    def expr(self, v):
        og = self.og
        if isinstance(v, TensorVariable):
            node = og.node_of[id(v.fake)]
            if v.source is not None and node.op == "placeholder" and not v.is_numpy:
                return v.source.expr()
            e = self.out(node)
            return f"{e}.numpy()" if v.is_numpy else e
        if isinstance(v, ConstantVariable):
            val = v.value
            if isinstance(val, SymInt):
                return self.out(og.sym_node(val))
            if v.source is not None:
                return v.source.expr()
            if val is None or isinstance(val, (bool, int, str)) and type(val) in (bool, int,
                                                                                    str):
                return repr(val)
            return self.const(val)
        if isinstance(v, _Null):
            return "NULL"
        if isinstance(v, BaseListVariable):
            if v.source is not None and not v.mutable_local:
                return v.source.expr()
            items = ", ".join(self.expr(x) for x in v.items)
            if v.py_type is list:
                return f"[{items}]"
            if v.py_type is tuple:
                return f"({items},)" if v.items else "()"
            if hasattr(v.py_type, "_fields"):
                return f"{self.const(v.py_type)}({items})"
            return f"{self.const(v.py_type)}([{items}])"
        if isinstance(v, DictVariable):
            if v.source is not None and not v.mutable_local:
                return v.source.expr()
            body = "{" + ", ".join(f"{self.const(k)}: {self.expr(x)}"
                                   for k, x in v.items.items()) + "}"
            return body if v.py_type is dict else f"{self.const(v.py_type)}({body})"
        if isinstance(v, IteratorVariable):
            items = ", ".join(self.expr(x) for x in v.items[v.index:])
            return f"RESUME_ITER([{items}])"
        if isinstance(v, (SliceVariable, RangeVariable)):
            return self.const(v.as_python_constant())
        if isinstance(v, (TensorMethod, BoundBuiltinMethod, _NumpyMethod)):
            owner = v.tensor if isinstance(v, TensorMethod) else v.obj if isinstance(
                v, BoundBuiltinMethod) else v.tv
            return f"getattr({self.expr(owner)}, {v.name!r})"
        if isinstance(v, UserMethodVariable):
            return f"METHOD({self.const(v.fn)}, {self.expr(v.obj)})"
        if isinstance(v, NestedUserFunctionVariable):
            cells = "".join((f"L[{self.top_cells[id(c)]!r}], " if id(c) in self.top_cells
                             else f"CELL({self.expr(c.value)}), ") for c in v.cells)
            return (f"MKFN({self.const(v.code)}, {self.const(v.fglobals)}, "
                    f"{self.const(v.defaults)}, {self.const(v.kwdefaults)}, ({cells}))")
        if isinstance(v, GradModeVariable):
            return f"GRADCTX({v.mode}, {v.prev})"
        if isinstance(v, _Bound) and isinstance(v.owner, ContextObjectVariable):
            return f"{self.const(v.owner.value)}.__{v.fn.__name__}__"
        if isinstance(v, _Bound):
            owner = v.fn.__self__
            return f"GRADCTX({owner.mode}, {owner.prev}).__{v.fn.__name__}__"
        if isinstance(v, (SuperVariable, _CellVariable)):
            raise Unsupported(f"a graph break while {type(v).__name__} is live")
        if getattr(v, "source", None) is not None:
            return v.source.expr()
        if hasattr(v, "value"):
            return self.const(v.value)
        if isinstance(v, (BuiltinVariable, EmberFunctionVariable, UserFunctionVariable)):
            return self.const(v.fn)
        raise Unsupported(f"cannot rebuild {v} after a graph break")


def _finish(tx, og, result, ctx, code):
    from . import runtime
    rb = _Rebuild(og, {id(c): n for n, c in tx.cells.items()
                       if n in code.co_cellvars})
    effects = _side_effects(rb, og)
    if isinstance(result, ReturnAt):
        body = effects + [f"return ('return', {rb.expr(result.value)})"]
        kind, boff = "return", None
    else:
        # the new locals go into N: every expression reads the segment's starting state L
        lines = effects + ["N = dict(L)"]
        for name, v in tx.locals.items():
            lines.append(f"N[{name!r}] = {rb.expr(v)}")
        for name in _deleted(tx, code):
            lines.append(f"N.pop({name!r}, None)")
        for name, c in tx.cells.items():
            if getattr(c, "dirty", False):
                lines.append(f"L[{name!r}].cell_contents = {rb.expr(c.value)}")
        lines.append("S = [" + ", ".join(rb.expr(v) for v in tx.stack) + "]")
        lines.append("return ('break', N, S)")
        body = lines
        kind, boff = "break", result.offset
    seg = Segment()
    graph = og.graph
    graph.output(tuple(rb.outputs))
    seg.ops = og.op_count
    consts = dict(rb.consts)
    consts.update(tx.extra_consts)
    inputs = []
    for source, t, is_numpy in og.inputs:
        if t is None:                              # a dynamic Python scalar
            inputs.append(source.expr())
        elif source is None:
            k = f"in{len(consts)}"
            consts[k] = t
            inputs.append(f"K[{k!r}]")
        else:
            e = source.expr()
            inputs.append(f"FROM_NUMPY({e})" if is_numpy else e)
    ns = runtime.rebuild_namespace()
    src = ("def get_inputs(L, S, G, C, K):\n    return (" + ", ".join(inputs) +
           ("," if len(inputs) == 1 else "") + ")\n"
           "def rebuild(L, S, G, C, K, out):\n    " + "\n    ".join(body) + "\n")
    exec(compile(src, f"<ember rebuild {code.co_name}>", "exec"), ns)
    seg.get_inputs, seg.rebuild = ns["get_inputs"], ns["rebuild"]
    seg.consts = consts
    seg.kind, seg.break_offset = kind, boff
    if any(n.op == "call_function" and "inplace" in getattr(n.target, "tags", ())
           for n in graph.nodes):
        og.guards.distinct([src for src, t, _ in og.inputs if src is not None and t is not None])
    seg.guard = og.guards.compile()
    seg.guard_text = seg.guard.text
    seg.gm = None
    if not graph_is_empty(graph):
        from ..fx import GraphModule
        from ..nn import Module
        gm = GraphModule(Module(), graph)
        seg.gm = gm
        example = [t if t is not None else og.scalar_values[src.expr()]
                   for src, t, _ in og.inputs]
        backend = _ddp_split(ctx.backend)
        try:
            with dynamo_timed("OutputGraph.call_user_compiler"):
                seg.graph_fn = backend(gm, example)
        except Exception as e:       # noqa: BLE001
            raise BackendCompilerFailed(ctx.backend, e) from e
    else:
        seg.graph_fn = None
    return seg


def _side_effects(rb, og):
    """Statements replaying the region's mutations of real objects, in program order."""
    lines = []
    for eff in og.side_effects.values():
        if eff[0] == "container":
            v = eff[1]
            tgt = v.source.expr()
            if isinstance(v, DictVariable):
                items = ", ".join(f"{rb.const(k)}: {rb.expr(x)}" for k, x in v.items.items())
                lines += [f"_t = {tgt}", "_t.clear()", f"_t.update({{{items}}})"]
            elif v.python_type() is set:
                lines += [f"_t = {tgt}", "_t.clear()",
                          f"_t.update([{', '.join(rb.expr(x) for x in v.items)}])"]
            else:
                lines.append(f"{tgt}[:] = [{', '.join(rb.expr(x) for x in v.items)}]")
        else:
            _, obj, name, val = eff
            lines.append(f"setattr({obj.source.expr()}, {name!r}, {rb.expr(val)})")
    return lines


def _ddp_split(backend):
    """Inside a DDP forward, graphs are split at its bucket boundaries (config.optimize_ddp)."""
    from . import config
    if not config.optimize_ddp:
        return backend
    from ..nn.parallel.distributed import DistributedDataParallel
    ddp = DistributedDataParallel._get_active_ddp_module()
    if ddp is None:
        return backend
    from .backends.distributed import DDPOptimizer
    return DDPOptimizer(ddp.bucket_bytes_cap, backend).compile_fn


def graph_is_empty(graph):
    return all(n.op in ("placeholder", "output") for n in graph.nodes) and not any(
        n.op == "output" and n.args[0] for n in graph.nodes)


def _deleted(tx, code):
    return sorted(tx.deleted)

