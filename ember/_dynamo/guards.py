"""Guards: the conditions under which a captured graph may be reused, compiled into one
Python function of the frame state.

Note: every value the capture read from the frame is guarded where it was read (its
source): tensors on type/dtype/device/requires_grad/sizes (strides when not contiguous),
Python constants on type and value, modules/functions/classes on identity, containers
on type and length/keys, plus the global state a graph depends on (grad mode, default
dtype, autocast, determinism). Dynamic sizes are checked >= 2 and against the shape
decisions the capture made (the ShapeEnv's guards). The checks are generated as one
straight-line function: evaluation is a few attribute loads per guarded value."""
import numpy as np

from .._dispatch import STATE
from .. import _dtype as D
from .._determinism import MODE as _DET
from .._tensor import Tensor
from .._device import CPU as _CPU
from ..amp import autocast_mode as _AMP
from ..profiler import _state as _PROF

__all__ = ["GuardSet"]

_SCALARS = (int, float, bool, str, bytes, type(None), complex)


def _global_state():
    ac = _AMP._ST
    return (STATE.grad_enabled, STATE.inference, D.get_default_dtype(), ac.enabled["cpu"],
            ac.dtype["cpu"], _DET.enabled, _PROF.ACTIVE[0] is None)


def _keys(d):
    return list(d)


class GuardSet:
    """Collects guards during a capture; `compile()` turns them into `check(L, S, G, C, K)`."""

    def __init__(self):
        self.checks = []        # (source expr, kind, payload) in order
        self._seen = {}         # (source expr, kind) -> payload
        self.symbols = {}       # symbol name -> (source expr, dim)
        self.shape_env = None
        self.text = []          # human-readable, for the `guards` log and explain
        self.hooks_version = None
        self.distinct_sources = []

    def add(self, source, kind, payload=None):
        key = (source.expr(), kind)
        if key in self._seen:
            return
        self._seen[key] = payload
        self.checks.append((source.expr(), kind, payload))

    def tensor(self, source, t, dynamic_dims=()):
        self.add(source, "tensor", (type(t), t._dtype, t._device, t._rg, tuple(t._data.shape),
                                    None if t.is_contiguous() else t._data.strides,
                                    tuple(dynamic_dims)))

    def ndarray(self, source, a, dynamic_dims=()):
        self.add(source, "ndarray", (a.dtype, tuple(a.shape), tuple(dynamic_dims),
                                     a.flags.c_contiguous))

    def constant(self, source, value):
        self.add(source, "const", value)

    def identity(self, source, obj):
        self.add(source, "id", obj)

    def type(self, source, obj):
        self.add(source, "type", type(obj))

    def length(self, source, obj):
        self.add(source, "len", (type(obj), len(obj)))

    def keys(self, source, obj):
        self.add(source, "keys", (type(obj), list(obj.keys())))

    def no_new_hooks(self):
        """No module hook was registered since the capture (which saw none on the modules
        it called)."""
        from ..nn.modules.module import HOOKS_VERSION
        self.hooks_version = HOOKS_VERSION[0]

    def distinct(self, sources):
        """The tensors at these sources are different objects (a graph that mutates an
        input was captured with no two inputs aliased)."""
        self.distinct_sources = [src.expr() for src in sources]

    def absent(self, source, name):
        self.add(source, "absent:" + name, name)

    def alias(self, source, other):
        self.add(source, "is", other.expr())

    def compile(self):
        consts, lines, text = {}, [], []

        ids = {}

        def c(obj):
            name = ids.get(id(obj))
            if name is None:
                name = ids[id(obj)] = f"___c{len(consts)}"
                consts[name] = obj
            return name

        var = {}

        def v(expr):
            if expr not in var:
                rhs = expr
                for i in range(len(expr) - 1, 0, -1):      # reuse the longest loaded prefix
                    if expr[i] in ".[" and expr[:i] in var:
                        rhs = var[expr[:i]] + expr[i:]
                        break
                var[expr] = f"v{len(var)}"
                lines.append(f"{var[expr]} = {rhs}")
            return var[expr]

        for expr, kind, p in self.checks:
            x = v(expr)
            if kind == "tensor":
                typ, dt, dev, rg, shape, strides, dyn = p
                conds = [f"type({x}) is {c(typ)}", f"{x}._dtype is {c(dt)}",
                         f"{x}._rg is {rg}",
                         f"{x}._device is {c(dev)}" if dev is _CPU else
                         f"{x}._device == {c(dev)}"]
                if dyn:
                    conds.append(f"len({x}._data.shape) == {len(shape)}")
                    for i, n in enumerate(shape):
                        conds.append(f"{x}._data.shape[{i}] >= 2" if i in dyn
                                     else f"{x}._data.shape[{i}] == {n}")
                    conds.append(f"{x}.is_contiguous() is {strides is None}")
                else:
                    conds.append(f"{x}._data.shape == {shape!r}")
                    if strides is not None:
                        conds.append(f"{x}._data.strides == {strides!r}")
                text.append(f"TENSOR_MATCH: {expr} {typ.__name__}{list(shape)} {dt} "
                            f"requires_grad={rg}" + (f" dynamic dims {list(dyn)}" if dyn else ""))
            elif kind == "ndarray":
                dt, shape, dyn, contig = p
                conds = [f"type({x}) is np.ndarray", f"{x}.dtype == {c(dt)}",
                         f"{x}.ndim == {len(shape)}", f"{x}.flags.c_contiguous is {contig}"]
                conds += [f"{x}.shape[{i}] >= 2" if i in dyn else f"{x}.shape[{i}] == {n}"
                          for i, n in enumerate(shape)]
                text.append(f"NDARRAY_MATCH: {expr} {dt}{list(shape)}" +
                            (f" dynamic dims {list(dyn)}" if dyn else ""))
            elif kind == "const":
                if p is None or isinstance(p, bool):
                    conds = [f"{x} is {p}"]
                elif isinstance(p, float) and p != p:
                    conds = [f"type({x}) is float", f"{x} != {x}"]       # NaN
                else:
                    conds = [f"type({x}) is {c(type(p))}", f"{x} == {c(p)}"]
                text.append(f"CONSTANT_MATCH: {expr} == {p!r}")
            elif kind == "id":
                conds = [f"{x} is {c(p)}"]
                text.append(f"ID_MATCH: {expr} is <{type(p).__name__} at {id(p):#x}>")
            elif kind == "type":
                conds = [f"type({x}) is {c(p)}"]
                text.append(f"TYPE_MATCH: type({expr}) is {p.__name__}")
            elif kind == "len":
                conds = [f"type({x}) is {c(p[0])}", f"len({x}) == {p[1]}"]
                text.append(f"LENGTH_MATCH: len({expr}) == {p[1]}")
            elif kind == "keys":
                conds = [f"type({x}) is {c(p[0])}", f"list({x}) == {c(p[1])}"]
                if p[0] is not dict:
                    conds = [f"list({x}) == {c(p[1])}"]
                text.append(f"DICT_KEYS: {expr} keys == {p[1]!r}")
            elif kind.startswith("absent:"):
                conds = [f"not hasattr({x}, {p!r})"]
                text.append(f"HASATTR: not hasattr({expr}, {p!r})")
            elif kind == "keys_id":
                conds = [f"type({x}) is {c(p[0])}", f"len({x}) == {len(p[1])}",
                         f"all(a is b for a, b in zip({x}, {c(p[1])}))"]
                text.append(f"DICT_KEYS: {expr} keys are the same {len(p[1])} objects")
            elif kind == "is":
                conds = [f"{x} is {v(p)}"]
                text.append(f"ALIAS: {expr} is {p}")
            else:
                raise AssertionError(kind)
            lines.append(f"if not ({' and '.join(conds)}): return False")
        if len(self.distinct_sources) > 1:
            idlist = ", ".join(f"id({v(e)})" for e in self.distinct_sources)
            lines.append(f"if len({{{idlist}}}) != {len(self.distinct_sources)}: return False")
            text.append(f"NO_ALIASING: {len(self.distinct_sources)} tensor inputs are distinct")
        gs = _global_state()
        lines.append(f"if ___state() != {c(gs)}: return False")
        if self.hooks_version is not None:
            from ..nn.modules.module import HOOKS_VERSION
            lines.append(f"if {c(HOOKS_VERSION)}[0] != {self.hooks_version}: return False")
            text.append(f"HOOKS: no module hook registered since the capture "
                        f"(version {self.hooks_version})")
        text.append(f"GLOBAL_STATE: grad_mode={gs[0]} inference={gs[1]} default_dtype={gs[2]} "
                    f"autocast={gs[3]}/{gs[4]} deterministic={gs[5]} profiler_off={gs[6]}")
        if self.symbols:
            for name, (expr, dim, attr) in self.symbols.items():
                lines.append(f"{name} = {v(expr)}" if dim is None
                             else f"{name} = {v(expr)}{attr}.shape[{dim}]")
            for a, op, b, out in (self.shape_env.guards if self.shape_env else ()):
                cond = f"({a}) {op} ({b})"
                lines.append(f"if ({cond}) is not {bool(out)}: return False")
                text.append(f"SHAPE_ENV: ({cond}) is {bool(out)}")
        body = "\n".join("        " + ln for ln in lines)
        src = (f"def ___make({', '.join(consts) or '___none=None'}):\n"
               f"    def ___guard(L, S, G, C, K):\n      try:\n{body}\n"
               "        return True\n"
               "      except (AttributeError, KeyError, IndexError, TypeError, ValueError):\n"
               "        return False\n"
               "    return ___guard\n")
        ns = {"___state": _global_state, "np": np, "Tensor": Tensor, "KEYS": _keys}
        exec(compile(src, "<ember guards>", "exec"), ns)
        fn = ns["___make"](**consts)
        fn.source, fn.text = src, text
        return fn
