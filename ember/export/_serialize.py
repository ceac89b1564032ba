"""save / load of an ExportedProgram: one zip file, runnable without the model's code.

Why: deployment needs the program as data. The archive holds

  ember_export/version             "1"
  ember_export/program.json        the graph and its signature (schema below)
  ember_export/weights.safetensors parameters, buffers and constants (or weights.pt,
                                   ember.save's format, when safetensors is missing)

program.json (schema_version 1):
  graph.nodes: [{"name", "op": placeholder|call_function|output, "target", "args",
                 "kwargs", "val": {"shape": [int | symbol name], "dtype"} | null}]
     target: {"op": registry name} | {"aten": [op, overload]} |
             {"fn": "module:qualname"} (operator, math and ember functions only) |
             {"sym_expr": [[symbol names], "arithmetic text"]} (a size expression)
     argument values: JSON numbers/strings/bools/null, and tagged objects
             {"node": name}, {"list": [...]}, {"tuple": [...]}, {"dict": [[k, v]]},
             {"float": "inf"|"-inf"|"nan"}, {"complex": [re, im]}, {"dtype": name},
             {"device": str}, {"memory_format": name}, {"layout": name},
             {"slice": [start, stop, step]}, {"ellipsis": null},
             {"generator": "default"} (random ops: the default CPU generator),
             {"tensor_constant": key in the weights}
  signature: {"inputs": [{"kind", "name", "target", "persistent", "value"}],
              "outputs": [{"kind", "name", "target", "value"}]}  (kind: InputKind name)
  range_constraints: {symbol: [min, max | null]}
  in_spec / out_spec: nesting of the user inputs (args, kwargs) and outputs
  input_shapes: per user input leaf [dtype, [int | symbol]] or null (a constant)
  weights: {"format": "safetensors"|"pt", "state_dict": [fqn], "constants": [fqn],
            "parameters_requires_grad": {fqn: bool}}
Loading never unpickles code: ops are looked up in ember's registry, Python functions
only in an allowed list of modules, and size expressions are parsed, not eval'd.
"""
import ast
import importlib
import io
import json
import math
import operator
import os
import zipfile

from .. import nn
from .._tensor import Tensor
from ..fx import Graph, GraphModule
from ..ops._registry import OpDef, REGISTRY
from ._program import (ExportedProgram, ExportGraphSignature, InputKind, OutputKind,
                       InputSpec, OutputSpec, TensorArgument, ConstantArgument, ValueRange)

__all__ = ["save", "load", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
_PREFIX = "ember_export/"
_ALLOWED_FN_MODULES = ("operator", "math", "builtins", "ember.")


# -- values -----------------------------------------------------------------------------

def _encoder(consts):
    from .._dtype import dtype as Dtype
    from .._device import device as Device
    from ..fx.node import Node
    from .._symbolic import SymInt

    def enc(v):
        if isinstance(v, Node):
            return {"node": v.name}
        if isinstance(v, SymInt):
            raise NotImplementedError(f"export.save: a symbolic size {v} held as a constant "
                                      "in the graph")
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return int(v)
        if isinstance(v, float):
            return v if math.isfinite(v) else {"float": repr(v)}
        if isinstance(v, complex):
            return {"complex": [v.real, v.imag]}
        if isinstance(v, tuple):
            return {"tuple": [enc(x) for x in v]}
        if isinstance(v, list):
            return {"list": [enc(x) for x in v]}
        if isinstance(v, dict):
            return {"dict": [[k, enc(x)] for k, x in v.items()]}
        if isinstance(v, Dtype):
            return {"dtype": str(v).split(".")[-1]}
        if isinstance(v, Device):
            return {"device": str(v)}
        if isinstance(v, slice):
            return {"slice": [enc(v.start), enc(v.stop), enc(v.step)]}
        if v is Ellipsis:
            return {"ellipsis": None}
        if isinstance(v, Tensor):
            key = f"__constant__{len(consts)}"
            consts[key] = v.detach()
            return {"tensor_constant": key}
        from .. import _random
        if v is _random.default_generator:
            return {"generator": "default"}     # random ops draw from the loader's default
        kind = type(v).__name__
        if kind in ("memory_format", "layout"):
            return {kind: str(v).split(".")[-1]}
        raise NotImplementedError(f"export.save: cannot serialize a graph argument of type "
                                  f"{type(v).__name__} ({v!r})")
    return enc


def _decoder(env, weights):
    import ember

    def dec(v):
        if not isinstance(v, dict):
            return v
        (tag, x), = v.items()
        if tag == "node":
            return env[x]
        if tag == "float":
            return float(x)
        if tag == "complex":
            return complex(*x)
        if tag == "tuple":
            return tuple(dec(a) for a in x)
        if tag == "list":
            return [dec(a) for a in x]
        if tag == "dict":
            return {k: dec(a) for k, a in x}
        if tag == "dtype":
            return getattr(ember, x)
        if tag == "device":
            return ember.device(x)
        if tag in ("memory_format", "layout"):
            return getattr(ember, x)
        if tag == "slice":
            return slice(*(dec(a) for a in x))
        if tag == "ellipsis":
            return Ellipsis
        if tag == "generator":
            from .. import _random
            return _random.default_generator
        if tag == "tensor_constant":
            return weights[x]
        raise ValueError(f"export.load: unknown argument tag {tag!r}")
    return dec


# -- targets ----------------------------------------------------------------------------

class _Sym:
    """Records arithmetic on size symbols as text (to save a sym_eval size expression)."""

    def __init__(self, text):
        self.text = text

    def _bin(op, rev=False):
        def f(self, o):
            a, b = (o, self) if rev else (self, o)
            return _Sym(f"({_t(a)} {op} {_t(b)})")
        return f
    __add__, __radd__ = _bin("+"), _bin("+", True)
    __sub__, __rsub__ = _bin("-"), _bin("-", True)
    __mul__, __rmul__ = _bin("*"), _bin("*", True)
    __floordiv__, __rfloordiv__ = _bin("//"), _bin("//", True)
    __mod__, __rmod__ = _bin("%"), _bin("%", True)

    def __neg__(self):
        return _Sym(f"(-{self.text})")


def _t(x):
    return x.text if isinstance(x, _Sym) else repr(int(x))


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def _sym_fn(names, text):
    """A function of the named sizes computing `text` (parsed; only + - * // % and ints)."""
    tree = ast.parse(text, mode="eval").body

    def ev(n, env):
        if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
            return _BINOPS[type(n.op)](ev(n.left, env), ev(n.right, env))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand, env)
        if isinstance(n, ast.Name) and n.id in env:
            return env[n.id]
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return n.value
        raise ValueError(f"export.load: not a size expression: {text!r}")

    def fn(*sizes):
        return ev(tree, dict(zip(names, sizes)))
    fn._sym_expr = (list(names), text)
    return fn


def _enc_target(node):
    from .._dynamo.output_graph import sym_eval
    t = node.target
    if isinstance(t, OpDef):
        if REGISTRY.get(t.name) is t:
            return {"op": t.name}
        return {"aten": [t._opname, t._overloadname]}
    if t is sym_eval:
        fn = node.args[0]
        if hasattr(fn, "_sym_expr"):
            return {"sym_expr": fn._sym_expr}
        names = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
        return {"sym_expr": [names, _t(fn(*[_Sym(n) for n in names]))]}
    mod, qual = getattr(t, "__module__", None), getattr(t, "__qualname__", None)
    if mod in ("_operator",):
        mod = "operator"
    if mod and qual and (mod in _ALLOWED_FN_MODULES or mod.startswith("ember.")) \
            and "<" not in qual and _resolve(mod, qual) is t:
        return {"fn": f"{mod}:{qual}"}
    raise NotImplementedError(f"export.save: cannot serialize the graph target {t!r} of node "
                              f"{node.name}")


def _resolve(mod, qual):
    obj = importlib.import_module(mod)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def _dec_target(t):
    import ember
    (tag, x), = t.items()
    if tag == "op":
        return REGISTRY[x]
    if tag == "aten":
        return getattr(getattr(ember.ops.aten, x[0]), x[1])
    if tag == "fn":
        mod, qual = x.split(":")
        if not (mod in _ALLOWED_FN_MODULES or mod.startswith("ember.")):
            raise ValueError(f"export.load: function {x} is outside the allowed modules")
        return _resolve(mod, qual)
    raise ValueError(f"export.load: unknown target {t!r}")


# -- the archive ------------------------------------------------------------------------

def _val(node):
    v = node.meta.get("val")
    if not isinstance(v, Tensor):
        return None
    from .._symbolic import sym_expr
    return {"shape": [int(s) if type(s) is int else str(sym_expr(s)) for s in v.shape],
            "dtype": str(v.dtype).split(".")[-1]}


def _graph_json(gm, consts):
    from .._dynamo.output_graph import sym_eval
    enc = _encoder(consts)
    nodes = []
    for n in gm.graph.nodes:
        item = {"name": n.name, "op": n.op}
        if n.op == "call_function":
            item["target"] = _enc_target(n)
            args = n.args[1:] if n.target is sym_eval else n.args
            item["args"] = [enc(a) for a in args]
            item["kwargs"] = {k: enc(v) for k, v in n.kwargs.items()}
        elif n.op == "output":
            item["args"] = [enc(a) for a in n.args]
        elif n.op != "placeholder":
            raise NotImplementedError(f"export.save: graph node {n.name} of kind {n.op}")
        item["val"] = _val(n)
        nodes.append(item)
    return {"nodes": nodes}


def _spec_json(s):
    val = s.arg.value if isinstance(s.arg, ConstantArgument) else None
    out = {"kind": s.kind.name, "name": s.arg.name, "target": s.target, "value": val,
           "constant": isinstance(s.arg, ConstantArgument)}
    if hasattr(s, "persistent"):
        out["persistent"] = s.persistent
    return out


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=None):
    """Writes `ep` to `f` (a path, written atomically, or a binary file object)."""
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"ember.export.save() expects an ExportedProgram but got {type(ep)}")
    consts = {}
    graph = _graph_json(ep.graph_module, consts)
    weights = {**ep.state_dict, **ep.constants, **consts}
    try:
        from ..utils import safetensors as st
        blob, fmt = st.save({k: v.detach().contiguous() for k, v in weights.items()}), \
            "safetensors"
    except ImportError:
        from .. import save as ember_save
        buf = io.BytesIO()
        ember_save({k: v.detach() for k, v in weights.items()}, buf)
        blob, fmt = buf.getvalue(), "pt"
    program = {
        "schema_version": SCHEMA_VERSION,
        "graph": graph,
        "signature": {"inputs": [_spec_json(s) for s in ep.graph_signature.input_specs],
                      "outputs": [_spec_json(s) for s in ep.graph_signature.output_specs]},
        "range_constraints": {k: [v.lower, None if v.upper == float("inf") else v.upper]
                              for k, v in ep.range_constraints.items()},
        "in_spec": ep._in_spec, "out_spec": ep._out_spec, "input_shapes": ep._input_shapes,
        "weights": {"format": fmt, "state_dict": list(ep.state_dict),
                    "constants": list(ep.constants),
                    "parameters_requires_grad": {k: bool(v.requires_grad)
                                                 for k, v in ep.state_dict.items()}},
    }
    try:
        text = json.dumps(program, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise NotImplementedError(f"export.save: the program holds a value JSON cannot "
                                  f"store ({e})") from e
    wname = "weights.safetensors" if fmt == "safetensors" else "weights.pt"

    def write(out):
        with zipfile.ZipFile(out, "w") as z:
            z.writestr(_PREFIX + "version", str(SCHEMA_VERSION))
            z.writestr(_PREFIX + "program.json", text)
            z.writestr(_PREFIX + wname, blob)
            for k, v in (extra_files or {}).items():
                z.writestr(_PREFIX + "extra/" + k, v)

    if isinstance(f, (str, os.PathLike)):
        from .._atomic_file import atomic_write
        with atomic_write(os.fspath(f), 0o644) as out:
            write(out)
    else:
        write(f)


def load(f, *, extra_files=None, expected_opset_version=None):
    """Reads a program written by save (a path or a binary file object)."""
    try:
        z = zipfile.ZipFile(f)
    except zipfile.BadZipFile as e:
        raise RuntimeError(f"ember.export.load: {f!r} is not an exported program (not a zip "
                           f"archive: {e})") from e
    with z:
        names = set(z.namelist())
        if _PREFIX + "program.json" not in names:
            raise RuntimeError(f"ember.export.load: {f!r} is not an exported program "
                               f"(no {_PREFIX}program.json)")
        program = json.loads(z.read(_PREFIX + "program.json"))
        if program.get("schema_version") != SCHEMA_VERSION:
            raise RuntimeError(f"ember.export.load: schema version "
                               f"{program.get('schema_version')} is not {SCHEMA_VERSION}")
        fmt = program["weights"]["format"]
        blob = z.read(_PREFIX + ("weights.safetensors" if fmt == "safetensors"
                                 else "weights.pt"))
        if extra_files is not None:
            for k in list(extra_files):
                p = _PREFIX + "extra/" + k
                extra_files[k] = z.read(p).decode() if p in names else ""
    if fmt == "safetensors":
        from ..utils import safetensors as st
        weights = st.load(blob)
    else:
        from .. import load as ember_load
        weights = ember_load(io.BytesIO(blob), weights_only=True)
    return _program(program, weights)


def _program(program, weights):
    g = Graph()
    env = {}
    dec = _decoder(env, weights)
    for item in program["graph"]["nodes"]:
        op = item["op"]
        if op == "placeholder":
            n = g.placeholder(item["name"])
        elif op == "call_function":
            t = item["target"]
            args = tuple(dec(a) for a in item["args"])
            if "sym_expr" in t:
                from .._dynamo.output_graph import sym_eval
                n = g.call_function(sym_eval, (_sym_fn(*t["sym_expr"]), *args))
            else:
                n = g.call_function(_dec_target(t), args,
                                    {k: dec(v) for k, v in item["kwargs"].items()})
        elif op == "output":
            n = g.output(dec(item["args"][0]))
        else:
            raise ValueError(f"export.load: unknown node kind {op!r}")
        if item.get("val") is not None:
            n.meta["tensor_meta"] = item["val"]
        env[item["name"]] = n
    gm = GraphModule(nn.Module(), g)
    w = program["weights"]
    rg = w.get("parameters_requires_grad", {})
    state_dict = {}
    sig_in = program["signature"]["inputs"]
    param_names = {s["target"] for s in sig_in if s["kind"] == "PARAMETER"}
    for k in w["state_dict"]:
        t = weights[k]
        state_dict[k] = nn.Parameter(t, requires_grad=rg.get(k, True)) \
            if k in param_names else t
    constants = {k: weights[k] for k in w["constants"]}

    def arg(s, out=False):
        if s.get("constant"):
            return ConstantArgument(s["name"], s["value"])
        return TensorArgument(s["name"])

    input_specs = [InputSpec(InputKind[s["kind"]], arg(s), s["target"], s.get("persistent"))
                   for s in sig_in]
    output_specs = [OutputSpec(OutputKind[s["kind"]], arg(s, True), s["target"])
                    for s in program["signature"]["outputs"]]
    ranges = {k: ValueRange(lo, float("inf") if hi is None else hi)
              for k, (lo, hi) in program["range_constraints"].items()}
    shapes = [None if s is None else (s[0], s[1]) for s in program["input_shapes"]]
    return ExportedProgram(gm, ExportGraphSignature(input_specs, output_specs), state_dict,
                           ranges, constants, in_spec=program["in_spec"],
                           out_spec=program["out_spec"], input_shapes=shapes)
