"""ember.onnx.export: the captured graph of registry ops translated into an ONNX ModelProto.

Note: the walk is one pass over the graph in order. Each node becomes ONNX operators by the
op's translation in _symbolics.py; an op without one (or whose translation declines the
case, returning None) is replaced by its registry decomposition traced on stand-in tensors,
and the decomposition's nodes are translated the same way. Parameters and buffers become
initializers named as in the model's state_dict; sizes that are symbolic (dynamic_axes)
are computed in the graph from Shape.
"""
import io
import operator
import os
import tempfile

import numpy as np

from .._tensor import Tensor
from ..fx.node import map_aggregate
from . import _capture
from ._builder import GraphBuilder, is_static, onnx_dtype
from ._symbolics import SYMBOLICS
from .errors import (CheckerError, OnnxExporterError, SymbolicValueError,
                     UnsupportedOperatorError)

__all__ = ["export_model"]

_MAX_DECOMP_DEPTH = 8


class _Sym:
    """A symbolic int in the graph: `name` is a 1-D int64 ONNX value of length 1, or None
    when ONNX cannot compute it (a size derived in Python by sym_eval)."""

    def __init__(self, name, node):
        self.name = name
        self.node = node


class _Ctx:
    def __init__(self, builder):
        self.b = builder
        self.env = {}
        self.depth = 0

    def v(self, a):
        val = self.env.get(a)
        if isinstance(val, str):
            return val
        if val is None and a in self.env:
            raise OnnxExporterError(f"ember.onnx.export: the graph reads '{a.name}', an "
                                    "output ONNX has no equivalent for (e.g. max_pool's "
                                    "indices)")
        raise OnnxExporterError(f"ember.onnx.export: '{getattr(a, 'name', a)}' is not a "
                                "tensor value of the graph")

    def val(self, a):
        return a.meta["val"]

    def shape_of(self, a):
        return self.b.op("Shape", [self.v(a)])

    def _sym_entry(self, s):
        val = self.env.get(s)
        if isinstance(val, _Sym):
            return val.name
        raise SymbolicValueError(f"ember.onnx.export: a size argument '{s}' is not an int "
                                 "or a symbolic size")

    def sizes(self, values, reshape=False):
        """A 1-D int64 ONNX value for a list of ints and symbolic sizes."""
        values = list(values)
        if all(isinstance(x, int) for x in values):
            return self.b.ints(values)
        parts = [None if not isinstance(x, int) else x for x in values]
        names = [None] * len(values)
        unknown = []
        for i, x in enumerate(values):
            if not isinstance(x, int):
                names[i] = self._sym_entry(x)
                if names[i] is None:
                    unknown.append(i)
        if unknown:
            if reshape and len(unknown) == 1 and -1 not in parts:
                names[unknown[0]] = None
                parts[unknown[0]] = -1
            else:
                raise SymbolicValueError(
                    "ember.onnx.export: a shape argument holds sizes computed in Python "
                    f"from symbolic sizes ({values}); ONNX export cannot express it")
        pieces = [self.b.ints([parts[i]]) if names[i] is None else names[i]
                  for i in range(len(values))]
        return self.b.op("Concat", pieces, axis=0)

    def scalar_int(self, x):
        if isinstance(x, int):
            return self.b.const(np.asarray(x, dtype=np.int64))
        return self.b.op("Squeeze", [self.sizes([x]), self.b.ints([0])])


def _is_tensor_node(a):
    return hasattr(a, "meta") and isinstance(a.meta.get("val"), Tensor)


def _bound_args(node):
    op = node.target
    args, kwargs = tuple(node.args), dict(node.kwargs)
    if getattr(op, "_schema_text", None) is not None and (kwargs or len(args) !=
                                                          op._nparams):
        args = op._bind(args, kwargs)
    elif kwargs:
        args = args + tuple(kwargs.values())
    return args


def _stand_in(fake):
    """A real tensor with `fake`'s shape and dtype (only its graph matters)."""
    from .. import ones, zeros
    if not all(is_static(s) for s in fake.shape):
        raise SymbolicValueError("symbolic sizes")
    make = ones if fake.dtype.is_floating_point else zeros
    return make(tuple(fake.shape), dtype=fake.dtype)


def _decompose(ctx, node, args, opset):
    """Translates `node` through its op's decomposition; False when it has none."""
    op = node.target
    if getattr(op, "decomp", None) is None or ctx.depth >= _MAX_DECOMP_DEPTH:
        return False
    from ..fx.experimental.proxy_tensor import make_fx
    tensor_nodes = []

    def collect(a):
        if _is_tensor_node(a):
            tensor_nodes.append(a)
        elif hasattr(a, "meta"):
            raise SymbolicValueError("symbolic size argument")
        return a
    try:
        map_aggregate(args, collect)
        stand = [_stand_in(ctx.val(n)) for n in tensor_nodes]
    except SymbolicValueError:
        return False
    pos = {n: i for i, n in enumerate(tensor_nodes)}

    def run(*ts):
        real = map_aggregate(args, lambda a: ts[pos[a]] if a in pos else a)
        return op.decomp(*real)
    from .. import no_grad
    with no_grad():
        sub = make_fx(run)(*stand)
    ph = [n for n in sub.graph.nodes if n.op == "placeholder"]
    for p, n in zip(ph, tensor_nodes):
        ctx.env[p] = ctx.env[n]
    ctx.depth += 1
    try:
        out = _convert_nodes(ctx, sub, sub.graph.nodes, opset)
    finally:
        ctx.depth -= 1
    if isinstance(out, (tuple, list)):
        ctx.env[node] = [ctx.env.get(o) if hasattr(o, "op") else None for o in out]
    else:
        ctx.env[node] = ctx.env[out]
    return True


def _convert_nodes(ctx, gm, nodes, opset):
    """Translates call_function/get_attr nodes into ctx; returns the output node's args.
    Nodes no output depends on are skipped (e.g. a decomposition's unused indices)."""
    nodes = list(nodes)
    live = set()
    for n in reversed(nodes):
        if n.op == "output" or n in live:
            live.add(n)
            map_aggregate((n.args, n.kwargs), lambda a: live.add(a) if hasattr(a, "op") else a)
    for n in nodes:
        if n.op == "placeholder" or n not in live:
            continue
        if n.op == "get_attr":
            t = getattr(gm, n.target)
            ctx.env[n] = ctx.b.initializer(t.detach().numpy(), n.target)
            continue
        if n.op == "output":
            return n.args[0]
        if n.op != "call_function":
            raise OnnxExporterError(f"ember.onnx.export: graph node kind '{n.op}' "
                                    "(call_module/call_method) is not supported")
        t = n.target
        if t is operator.getitem:
            ctx.env[n] = ctx.env[n.args[0]][n.args[1]]
            continue
        fname = getattr(t, "__name__", "")
        if fname == "sym_size":
            src, d = n.args[0], n.args[1]
            ctx.env[n] = _Sym(ctx.b.op("Gather", [ctx.shape_of(src), ctx.b.ints([d])],
                                       axis=0), n)
            continue
        if fname == "sym_eval":
            ctx.env[n] = _Sym(None, n)
            continue
        name = getattr(t, "name", None)
        if name is None:
            raise UnsupportedOperatorError(getattr(t, "__name__", str(t)), opset)
        args = _bound_args(n)
        sym = SYMBOLICS.get(str(name))
        out = sym(ctx, n, args) if sym is not None else None
        if out is None:
            if not _decompose(ctx, n, args, opset):
                raise UnsupportedOperatorError(str(name), opset)
            continue
        ctx.env[n] = out
    return None


def _flatten_outputs(out):
    if isinstance(out, (tuple, list)):
        flat = []
        for o in out:
            flat += _flatten_outputs(o)
        return flat
    return [out]


def _param_names(model):
    names = {}
    if hasattr(model, "named_parameters"):
        for k, v in model.named_buffers(remove_duplicate=False):
            names.setdefault(id(v), k)
        for k, v in model.named_parameters(remove_duplicate=False):
            names.setdefault(id(v), k)
    return names


def _dynamic_axes(dynamic_axes, name):
    spec = (dynamic_axes or {}).get(name)
    if spec is None:
        return {}
    if isinstance(spec, dict):
        return {int(k): str(v) for k, v in spec.items()}
    return {int(d): f"{name}_dynamic_axes_{i + 1}" for i, d in enumerate(spec)}


def _value_info(name, fake, dims_named, sym_names):
    from onnx import helper
    shape = []
    for i, s in enumerate(fake.shape):
        if i in dims_named:
            shape.append(dims_named[i])
        elif is_static(s):
            shape.append(int(s))
        else:
            shape.append(sym_names.get(str(s), str(s)))
    return helper.make_tensor_value_info(name, onnx_dtype(fake.dtype), shape)


def export_model(model, args, *, input_names=None, output_names=None, dynamic_axes=None,
                 opset_version=17, export_params=True, verbose=False):
    """The ONNX ModelProto of `model(*args)` (see ember.onnx.export)."""
    import onnx
    from onnx import helper
    if opset_version < 13:
        raise ValueError(f"ember.onnx.export: opset_version {opset_version} is not "
                         "supported (ember exports opset 13 or later)")
    if isinstance(args, Tensor) or not isinstance(args, tuple):
        args = (args,)
    flat, _ = _capture.flatten_args(args)
    input_names = list(input_names or [])
    in_names = [input_names[i] if i < len(input_names) else f"input_{i}"
                for i in range(len(flat))]
    dyn_in = {i: _dynamic_axes(dynamic_axes, nm) for i, nm in enumerate(in_names)}
    gm, examples, index, n_flat = _capture.capture(
        model, args, {i: sorted(d) for i, d in dyn_in.items() if d})
    b = GraphBuilder(opset_version)
    ctx = _Ctx(b)
    for nm in in_names:
        b.names.add(nm)
    params = _param_names(model)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    graph_inputs, sym_names = [], {}
    for p, real in zip(placeholders, examples):
        i = index.get(p.name)
        fake = ctx.val(p)
        if i is not None:
            ctx.env[p] = in_names[i]
            for d, s in enumerate(fake.shape):
                if d not in dyn_in[i]:
                    continue
                if is_static(s):
                    raise SymbolicValueError(
                        f"ember.onnx.export: dynamic_axes makes dim {d} of input "
                        f"'{in_names[i]}' dynamic, but the model computes with that size as "
                        f"a Python number (the capture kept it static at {s}); a graph for "
                        "other sizes would be wrong. Export without that dynamic axis.")
                sym_names.setdefault(str(s), dyn_in[i][d])
            continue
        pname = params.get(id(real), p.name)
        if export_params:
            ctx.env[p] = b.initializer(real.detach().numpy(), pname)
        else:
            ctx.env[p] = b.fresh(pname)
            graph_inputs.append((ctx.env[p], fake, {}))
    by_index = {i: p for p in placeholders for i in [index.get(p.name)] if i is not None}
    user_inputs = []
    for i in range(n_flat):
        p = by_index.get(i)
        fake = ctx.val(p) if p is not None else flat[i]
        user_inputs.append((in_names[i], fake, dyn_in[i]))
    out = _convert_nodes(ctx, gm, gm.graph.nodes, opset_version)
    outs = _flatten_outputs(out)
    output_names = list(output_names or [])
    graph_outputs = []
    for k, o in enumerate(outs):
        if not _is_tensor_node(o):
            raise OnnxExporterError(f"ember.onnx.export: output {k} of the model is not a "
                                    f"tensor ({type(o).__name__}); ONNX outputs are tensors")
        nm = output_names[k] if k < len(output_names) else (
            "output" if len(outs) == 1 else f"output_{k}")
        b.names.add(nm)
        b.op("Identity", [ctx.v(o)], outputs=[nm])
        graph_outputs.append((nm, ctx.val(o), _dynamic_axes(dynamic_axes, nm)))
    graph = helper.make_graph(
        b.nodes, "main_graph",
        [_value_info(nm, f, d, sym_names) for nm, f, d in user_inputs + graph_inputs],
        [_value_info(nm, f, d, sym_names) for nm, f, d in graph_outputs],
        initializer=b.initializers)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset_version)],
                              producer_name="ember")
    proto.ir_version = min(proto.ir_version, 8 if opset_version <= 17 else 9)
    try:
        onnx.checker.check_model(proto)
    except onnx.checker.ValidationError as e:
        raise CheckerError(f"ember.onnx.export: the exported model fails onnx.checker: "
                           f"{e}") from e
    if verbose:
        print(helper.printable_graph(proto.graph))
    return proto


def save_model(proto, f):
    """Writes `proto` to a path (atomically: a temp file, then os.replace) or a file object."""
    data = proto.SerializeToString()
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        d = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".onnx-", dir=d)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    elif isinstance(f, io.IOBase) or hasattr(f, "write"):
        f.write(data)
    else:
        raise TypeError(f"ember.onnx.export: f must be a path or a binary file object, not "
                        f"{type(f).__name__}")
