"""Python source for a Graph: straight-line `def forward(self, ...)` (torch.fx codegen).

Note: every node becomes one assignment, and names are set to None after their last
use (as torch.fx does) so intermediate tensors are freed early. Call targets are printed
by readable dotted names (`ember.ops.aten.add.Tensor`, `ember.relu`, `operator.add`
becomes `a + b`); the generated module's globals bind each such path to the very same
object through a small tree of namespaces, so every lookup at run time is a plain
attribute read. Targets with no importable name (lambdas, local helpers) and
constants without a literal repr are passed in as uniquely named globals.
"""
import builtins
import keyword
import math
import operator
import types

from .node import Node, _get_qualified_name, _resolve

_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
           operator.matmul: "@", operator.and_: "&", operator.or_: "|", operator.xor: "^",
           operator.lshift: "<<", operator.rshift: ">>", operator.eq: "==",
           operator.ne: "!=", operator.lt: "<", operator.le: "<=", operator.gt: ">",
           operator.ge: ">="}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}
_LITERALS = (int, float, bool, str, bytes, complex, type(None), type(Ellipsis))

_DTYPE_SHORT = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
                "bool": "b8", "complex64": "c64", "complex128": "c128"}


def _is_identifier(s):
    return s.isidentifier() and not keyword.iskeyword(s)


def _format_target(base, target):
    """self.layer1.conv, or getattr(self.layers, "0") where a part is no identifier."""
    r = base
    for elem in target.split("."):
        r = f"{r}.{elem}" if _is_identifier(elem) else f'getattr({r}, "{elem}")'
    return r


def _dtype_paths():
    import ember
    from .._dtype import dtype
    out = {}
    for k, v in vars(ember).items():
        if isinstance(v, dtype):
            canon = str(v).rsplit(".", 1)[-1]      # float64, not its alias double
            out[id(v)] = f"ember.{canon if getattr(ember, canon, None) is v else k}"
    return out


def type_annotation(node, include_stride=False, include_device=False):
    """'f32[3, 4]' (with '[4, 1]' strides and 'cpu' if asked) from a node's
    meta['val'] (a fake or real tensor) or meta['tensor_meta'], else None."""
    val = node.meta.get("val", node.meta.get("tensor_meta"))
    shape, dt = getattr(val, "shape", None), getattr(val, "dtype", None)
    if shape is None or dt is None:
        return None
    name = str(dt).rsplit(".", 1)[-1]
    out = f"{_DTYPE_SHORT.get(name, name)}[{', '.join(str(s) for s in shape)}]"
    if include_stride:
        st = val.stride() if callable(getattr(val, "stride", None)) \
            else getattr(val, "stride", None)
        if st is not None:
            out += f"[{', '.join(str(s) for s in st)}]"
    if include_device and getattr(val, "device", None) is not None:
        out += str(val.device)
    return out


class _Globals:
    """Names the generated code reads: dotted paths (through namespace trees) and
    uniquely named objects."""

    def __init__(self, taken):
        self.globals = {"inf": math.inf, "nan": math.nan, "NoneType": type(None)}
        self.taken = set(taken) | set(self.globals)
        self._by_id = {}
        self._dtypes = None
        self._keep = []

    def _unique(self, hint):
        hint = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "_obj"
        if hint[0].isdigit():
            hint = "_" + hint
        name, i = hint, 0
        while name in self.taken or keyword.iskeyword(name) or name in builtins.__dict__:
            i += 1
            name = f"{hint}_{i}"
        self.taken.add(name)
        return name

    def _add_path(self, path, obj):
        parts = path.split(".")
        root = parts[0]
        if not all(_is_identifier(p) for p in parts):
            return False
        tree = self.globals.get(root)
        if tree is None:
            if root in self.taken:
                return False
            tree = self.globals[root] = types.SimpleNamespace()
            self.taken.add(root)
        elif not isinstance(tree, types.SimpleNamespace):
            return False
        for p in parts[1:-1]:
            nxt = getattr(tree, p, None)
            if nxt is None:
                nxt = types.SimpleNamespace()
                setattr(tree, p, nxt)
            elif not isinstance(nxt, types.SimpleNamespace):
                return False
            tree = nxt
        cur = getattr(tree, parts[-1], None)
        if cur is None:
            setattr(tree, parts[-1], obj)
            return True
        return cur is obj

    def add(self, obj, hint=None):
        """The expression that names `obj` in the generated code."""
        key = id(obj)
        if key in self._by_id:
            return self._by_id[key]
        expr = None
        if getattr(builtins, getattr(obj, "__name__", "") or "", None) is obj:
            expr = obj.__name__
        else:
            path = None
            if callable(obj) and not isinstance(obj, type(self)):
                path = _get_qualified_name(obj)
                if "<" in path or (not path.startswith("ember.ops.aten.")
                                   and _resolve(path) is not obj):
                    path = None
            else:
                if self._dtypes is None:
                    self._dtypes = _dtype_paths()
                path = self._dtypes.get(key)
            if path is not None and "." in path and self._add_path(path, obj):
                expr = path
        if expr is None:
            expr = self._unique(hint or getattr(obj, "__name__", None) or
                                type(obj).__name__)
            self.globals[expr] = obj
        self._by_id[key] = expr
        self._keep.append(obj)     # ids stay valid while we generate
        return expr


def _repr_arg(a, g):
    if isinstance(a, Node):
        return a.name
    t = type(a)
    if t is tuple:
        return "(" + ", ".join(_repr_arg(x, g) for x in a) + ("," if len(a) == 1 else "") + ")"
    if t is list:
        return "[" + ", ".join(_repr_arg(x, g) for x in a) + "]"
    if t is dict and all(type(k) in _LITERALS for k in a):
        return "{" + ", ".join(f"{k!r}: {_repr_arg(v, g)}" for k, v in a.items()) + "}"
    if isinstance(a, tuple) and hasattr(a, "_fields"):      # namedtuple: rebuild it
        return f"{g.add(t)}({', '.join(_repr_arg(x, g) for x in a)})"
    if t is range:
        return repr(a)
    if t.__name__ == "device" and t.__module__.startswith("ember"):
        g.globals.setdefault("device", t)
        if g.globals["device"] is t:
            return repr(a)
    if t is slice:
        return f"slice({_repr_arg(a.start, g)}, {_repr_arg(a.stop, g)}, {_repr_arg(a.step, g)})"
    if t in _LITERALS:
        if t is float and not math.isfinite(a):
            return "inf" if a > 0 else ("-inf" if a < 0 else "nan")
        return repr(a)
    return g.add(a, hint="_" + t.__name__.lower())


def _call_args(args, kwargs, g):
    parts = [_repr_arg(a, g) for a in args]
    odd = {}
    for k, v in kwargs.items():
        if _is_identifier(k):
            parts.append(f"{k} = {_repr_arg(v, g)}")
        else:
            odd[k] = v
    if odd:                     # keys that are no identifiers (`from`) go through **{}
        parts.append("**" + _repr_arg(odd, g))
    return ", ".join(parts)


def _emit_call_function(node, g):
    t, args, kwargs = node.target, node.args, node.kwargs
    if not kwargs:
        if t in _BINARY and len(args) == 2:
            return f"{_repr_arg(args[0], g)} {_BINARY[t]} {_repr_arg(args[1], g)}"
        if t in _UNARY and len(args) == 1:
            return f"{_UNARY[t]}{_repr_arg(args[0], g)}"
        if t is operator.getitem and len(args) == 2:
            return f"{_repr_arg(args[0], g)}[{_repr_arg(args[1], g)}]"
        if t is builtins.getattr and len(args) == 2 and isinstance(args[1], str) \
                and _is_identifier(args[1]):
            return f"{_repr_arg(args[0], g)}.{args[1]}"
    return f"{g.add(t)}({_call_args(args, kwargs, g)})"


def python_code(graph, root_module="self", verbose=False, include_stride=False,
                include_device=False):
    """PythonCode(src, globals) of `def forward(self, <placeholders>)` for `graph`."""
    from .graph import PythonCode
    nodes = list(graph.nodes)
    g = _Globals({n.name for n in nodes} | {root_module})
    # last use of each node: free it right after (torch.fx's `x = None`)
    last_use = {}
    for n in nodes:
        for inp in n._input_nodes:
            last_use[inp] = n
    to_free = {}
    for v, user in last_use.items():
        to_free.setdefault(user, []).append(v)
    params, body, prologue = [], [], []
    for n in nodes:
        ta = type_annotation(n, include_stride, include_device) if verbose else None
        ann = f': "{ta}"' if ta else ""
        if n.op == "placeholder":
            tgt = n.target
            star = "**" if tgt.startswith("**") else ("*" if tgt.startswith("*") else "")
            raw = tgt[len(star):]
            pname = raw if _is_identifier(raw) and raw != root_module else n.name
            default = f" = {_repr_arg(n.args[0], g)}" if n.args else ""
            params.append(f"{star}{pname}{ann if not star else ''}{default}")
            if pname != n.name:
                prologue.append(f"{n.name} = {pname}")
            continue
        if n.op == "output":
            body.append(f"return {_repr_arg(n.args[0], g)}")
            continue
        if n.op == "call_function":
            rhs = _emit_call_function(n, g)
        elif n.op == "call_method":
            if not n.args:
                raise RuntimeError(f"call_method node '{n.name}' has no self argument")
            rhs = f"{_repr_arg(n.args[0], g)}.{n.target}(" \
                  f"{_call_args(n.args[1:], n.kwargs, g)})"
        elif n.op == "call_module":
            rhs = f"{_format_target(root_module, n.target)}({_call_args(n.args, n.kwargs, g)})"
        elif n.op == "get_attr":
            rhs = _format_target(root_module, n.target)
        else:
            raise NotImplementedError(f"ember.fx codegen: opcode {n.op!r}")
        line = f"{n.name}{ann} = {rhs}"
        dead = list(to_free.get(n, ()))
        if not n.users:
            dead.append(n)
        if dead:
            line += ";  " + " = ".join(d.name for d in dead) + " = None"
        body.append(line)
    if not body or not body[-1].startswith("return"):
        body.append("return None")
    src = f"\n\n\ndef forward({', '.join([root_module] + params)}):\n" + \
        "".join(f"    {ln}\n" for ln in prologue + body)
    return PythonCode(src, g.globals)
