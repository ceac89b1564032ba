"""Captures a model's forward as one graph of registry ops for the ONNX exporter.

Note: the capture is ember.compile's (fullgraph=True, a backend that keeps the GraphModule);
user inputs are flattened to positional tensors first, so each graph input's source is
"L['flat'][i]". Dims named in dynamic_axes are mark_dynamic'd on detached aliases of the
inputs (the user's tensors are left unmarked); each export compiles a fresh copy of the
forward's code object, so no automatic-dynamic state carries over between exports.
"""
import re
import types

from .. import _dynamo
from .._tensor import Tensor
from .errors import OnnxExporterError

__all__ = ["flatten_args", "capture"]

_COUNTER = [0]
_INPUT = re.compile(r"^L\['flat'\]\[(\d+)\]$")


def flatten_args(args):
    """Tensors of a nested tuple/list/dict argument structure, in order, and a function that
    rebuilds the structure from a list of tensors."""
    flat = []

    def walk(a):
        if isinstance(a, Tensor):
            flat.append(a)
            i = len(flat) - 1
            return lambda ts: ts[i]
        if isinstance(a, (tuple, list)):
            parts = [walk(x) for x in a]
            kind = type(a)
            return lambda ts: kind(p(ts) for p in parts)
        if isinstance(a, dict):
            parts = {k: walk(v) for k, v in a.items()}
            return lambda ts: {k: p(ts) for k, p in parts.items()}
        return lambda ts: a

    return flat, walk(args)


def _forward(model, rebuild):
    def fwd(*flat):
        args = rebuild(flat)
        if isinstance(args, tuple) and args and isinstance(args[-1], dict):
            return model(*args[:-1], **args[-1])
        return model(*args)
    # a code object of its own (code objects compare by value, so a unique name): compile
    # caches and automatic-dynamic state are kept per code object
    _COUNTER[0] += 1
    code = fwd.__code__.replace(co_name=f"onnx_export_forward_{_COUNTER[0]}")
    return types.FunctionType(code, fwd.__globals__, code.co_name, None, fwd.__closure__)


def capture(model, args, dynamic_dims):
    """(GraphModule, example_inputs, input_index) for `model(*args)`: input_index maps a
    placeholder's name to the position of the user input it reads (None for parameters,
    buffers and other captured tensors). dynamic_dims: {flat input index: [dims]}."""
    from .. import no_grad
    flat, rebuild = flatten_args(args)
    run_flat = []
    for i, t in enumerate(flat):
        t = t.detach()
        for d in dynamic_dims.get(i, ()):
            _dynamo.mark_dynamic(t, d)
        run_flat.append(t)
    got = []

    def keep(gm, example_inputs):
        got.append((gm, list(example_inputs)))
        return gm.forward

    fn = _dynamo.compile(_forward(model, rebuild), backend=keep, fullgraph=True)
    try:
        with no_grad():
            fn(*run_flat)
    except Exception as e:
        raise OnnxExporterError(
            f"ember.onnx.export: capturing the model's forward failed "
            f"({type(e).__name__}: {e})") from e
    if len(got) != 1:
        raise OnnxExporterError(f"ember.onnx.export: the forward was captured as {len(got)} "
                                "graphs; ONNX export needs exactly one")
    gm, examples = got[0]
    index = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            m = _INPUT.match(n.meta.get("source") or "")
            index[n.name] = int(m.group(1)) if m else None
    return gm, examples, index, len(flat)
