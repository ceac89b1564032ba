"""ExportedProgram graph -> the C statements of ember_model_run's body (library.py wraps them).

Why a separate generator from the inductor's wrapper: the inductor's wrapper is Python that
calls generated groups and falls back to eager kernels for extern ops; a deployed library has
no Python, so every node here becomes C: pointwise ops as generated (fused) loops, broadcast
by strides baked in at compile time, the rest as calls into runtime.c. Float32; sizes are C
texts ("8", "(ks_s0)*8"), so a dynamic dim is a run-time value; every buffer is contiguous
row-major (views are aliases) and lives in one arena planned by lifetimes.
"""
import math
import re

import numpy as np

from ..._symbolic import SymInt
from ...fx.node import Node
from ..ir import SYM_RE, cexpr, flat

__all__ = ["AotGraph", "SUPPORTED_OPS", "arena_size", "symbols", "numel"]

_VIEWS = {"view", "_unsafe_view", "reshape", "_reshape_copy", "flatten", "squeeze", "unsqueeze",
          "alias", "clone", "contiguous", "detach", "_to_copy", "lift_fresh_copy", "dropout"}

_UNARY = {
    "relu": "(v > 0.0f || v != v) ? v : 0.0f",
    "tanh": "tanhf(v)",
    "sigmoid": "1.0f / (1.0f + expf(-v))",
    "silu": "v / (1.0f + expf(-v))",
    "exp": "expf(v)",
    "log": "logf(v)",
    "sqrt": "sqrtf(v)",
    "rsqrt": "1.0f / sqrtf(v)",
    "neg": "-v",
    "abs": "fabsf(v)",
    "sin": "sinf(v)",
    "cos": "cosf(v)",
    "erf": "erff(v)",
    "reciprocal": "1.0f / v",
    "hardswish": "v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f",
    "hardsigmoid": "fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f",
}
_BINARY = {"add": "a + b", "sub": "a - b", "mul": "a * b", "div": "a / b",
           "maximum": "(a > b || a != a) ? a : b", "minimum": "(a < b || a != a) ? a : b",
           "pow": "powf(a, b)"}
_EXTERN = {"linear", "addmm", "mm", "matmul", "bmm", "convolution", "conv2d", "batch_norm",
           "max_pool2d_with_indices", "max_pool2d", "avg_pool2d", "_adaptive_avg_pool2d",
           "adaptive_avg_pool2d", "softmax", "_softmax", "log_softmax", "_log_softmax",
           "mean", "sum", "permute", "t", "transpose", "gelu", "hardtanh", "leaky_relu",
           "clamp", "getitem", "select", "slice", "expand", "layer_norm", "cat",
           "div_rounding", "_scaled_dot_product_flash_attention_for_cpu"}
_XVAR = re.compile(r"\bx(\d+)\b")     # operand names in the pointwise templates
_FUSABLE = set(_UNARY) | set(_BINARY) | {"gelu", "hardtanh", "clamp", "leaky_relu",
                                          "div_rounding"}
SUPPORTED_OPS = frozenset(_VIEWS | set(_UNARY) | set(_BINARY) | _EXTERN)


def _numel(shape):
    """Product of C size texts, the constant part folded: "6", "(ks_s0)*6"."""
    const, syms = 1, []
    for v in shape:
        v = str(v)
        if v.lstrip("-").isdigit():
            const *= int(v)
        else:
            syms.append(v)
    if const == 0 or not syms:
        return str(const)
    return "*".join(syms + ([str(const)] if const != 1 else []))


def _aligned(n):
    """n floats rounded up to 16 (64-byte aligned offsets), as C text."""
    return str((int(n) + 15) // 16 * 16) if n.isdigit() else f"(({n} + 15) / 16 * 16)"


def _lit(x):
    x = float(x)
    if math.isnan(x):
        return "NAN"
    if math.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    return f"{x!r}f"


def _ints(xs):
    return "(const int64_t[]){" + ", ".join(str(v) for v in xs) + "}"


def _pair(v):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return (int(v[0]), int(v[-1]))


class AotGraph:
    """Walks the graph once: names a C pointer for every tensor value and emits statements.

    `inputs`/`weights`/`outputs` are filled by the caller (aot_compile) with
    {node name: C expression}; intermediates are carved from one per-run arena."""

    def __init__(self, gm, inputs, weights, arrays=None):
        self.gm = gm
        self.arrays = arrays if arrays is not None else {}   # macro -> float32 array
        self.ptr = dict(inputs)
        self.ptr.update(weights)
        self.shape = {}
        self.lines = []
        self.arena = []       # C texts of the aligned symbolic-size blocks (floats)
        self.scratch = []     # C texts of each conv's im2col scratch size (floats)
        self.pending = {}     # node name -> (C statements, result name): fused pointwise
        self.deferred = {}    # pending node name -> storage to free once it is read
        self.inherited = []   # storage freed after the current node (its fused inputs')
        self.free_static, self.free_sym, self.block, self.static_top = [], [], {}, 0
        self.nexpr = 0

    # -- values ------------------------------------------------------------------------

    def _alloc(self, node, shape):
        self.ptr[node.name] = f"(em_arena + {self._take(_numel(shape))})"
        self.shape[node.name] = tuple(shape)
        return self.ptr[node.name]

    def _take(self, numel):
        """Arena offset (C text) of a block of `numel` floats: a freed block of the same
        or (static sizes) larger size, else new space. Static blocks are planned in
        [0, em_static_n), symbolic ones after it."""
        size = _aligned(numel)
        if size.isdigit():
            size = int(size)
            for k, (off, sz) in enumerate(self.free_static):
                if sz >= size:
                    if sz == size:
                        self.free_static.pop(k)
                    else:
                        self.free_static[k] = (off + size, sz - size)
                    self.block[str(off)] = ("s", off, size)
                    return str(off)
            off = self.static_top
            self.static_top += size
            self.block[str(off)] = ("s", off, size)
            return str(off)
        for k, (off, sz) in enumerate(self.free_sym):
            if sz == size:
                self.free_sym.pop(k)
                self.block[off] = ("y", off, size)
                return off
        off = arena_size(["em_static_n"] + self.arena)
        self.arena.append(size)
        self.block[off] = ("y", off, size)
        return off

    def _release(self, ptr):
        """Give back the arena block behind C pointer text `(em_arena + OFF)`."""
        if not ptr.startswith("(em_arena + "):
            return
        kind, off, size = self.block.pop(ptr[len("(em_arena + "):-1])
        if kind == "y":
            self.free_sym.append((off, size))
            return
        blocks = sorted(self.free_static + [(off, size)])
        merged = []
        for o, sz in blocks:                     # coalesce neighbours
            if merged and merged[-1][0] + merged[-1][1] == o:
                merged[-1] = (merged[-1][0], merged[-1][1] + sz)
            else:
                merged.append((o, sz))
        self.free_static = merged

    def arena_total(self):
        return arena_size([str(self.static_top)] + self.arena)

    def _val(self, a):
        if not isinstance(a, Node):
            raise NotImplementedError(f"aot_compile: expected a tensor argument, got {a!r}")
        if a.name not in self.ptr:
            raise NotImplementedError(f"aot_compile: value {a.name} has no C buffer "
                                      "(produced by an op the C runtime lacks)")
        return self.ptr[a.name]

    def shape_of(self, a):
        if a.name in self.shape:
            return self.shape[a.name]
        return _static_shape(a)

    # -- the walk ----------------------------------------------------------------------

    def _lifetimes(self):
        """Per storage (a view shares its base's), the index of the last node reading it;
        graph outputs live to the end."""
        root, last = {}, {}
        nodes = list(self.gm.graph.nodes)
        for i, n in enumerate(nodes):
            args = [a for a in flat((n.args, tuple(n.kwargs.values()))) if isinstance(a, Node)]
            if n.op == "call_function" and _opname(n) in _VIEWS | {"getitem"} and args:
                root[n.name] = root.get(args[0].name, args[0].name)
            for a in args:
                r = root.get(a.name, a.name)
                last[r] = len(nodes) if n.op == "output" else i
        return root, last

    def emit(self):
        _, last = self._lifetimes()
        for i, n in enumerate(self.gm.graph.nodes):
            self._emit_node(n)
            # storage whose last reader this was goes back to the arena; when the node
            # stayed an expression (fused), its reads happen in its reader's loop: later
            frees = [r for r, k in last.items() if k == i] + self.inherited
            self.inherited = []
            if n.name in self.pending:
                self.deferred[n.name] = frees
                continue
            for r in frees:
                if r in self.ptr:
                    self._release(self.ptr[r])
        return self.lines

    def _emit_node(self, n):
        if n.op == "placeholder":
            if n.name in self.ptr:
                self.shape[n.name] = _static_shape(n)
            return
        if n.op == "output":
            return
        if n.op != "call_function":
            raise NotImplementedError(f"aot_compile: graph node {n.op} {n.target} is "
                                      "not supported by the C runtime")
        if not n.users:
            return
        if isinstance(n.meta.get("val"), (SymInt, int)):
            return            # size arithmetic: the C code reads sizes from metas
        name = _opname(n)
        if name not in SUPPORTED_OPS:
            raise NotImplementedError(
                f"aot_compile: the C runtime has no implementation of op '{name}' "
                f"(node {n.name}); supported ops: {', '.join(sorted(SUPPORTED_OPS))}")
        self.lines.append(f"  /* {n.name} = {name} */")
        if name in _VIEWS:
            self._view(n)
        elif name in _UNARY:
            self._pointwise(n, [n.args[0]], re.sub(r"\bv\b", "x0", _UNARY[name]))
        elif name in _BINARY:
            self._binary(n, name)
        else:
            getattr(self, "_op_" + name.lstrip("_"))(n)

    def _out_shape(self, n):
        return _static_shape(n)

    def _view(self, n):
        if _opname(n) == "dropout" and (n.args[2] if len(n.args) > 2
                                        else n.kwargs.get("train", True)):
            raise NotImplementedError("aot_compile: dropout in training mode (export the "
                                      "model after .eval())")
        self._val(n.args[0])
        self.ptr[n.name] = self.ptr[n.args[0].name]
        self.shape[n.name] = self._out_shape(n)

    # -- pointwise ---------------------------------------------------------------------

    def _fusable(self, n, shape):
        """Whether n's value can stay a C expression inside its only user's loop (a
        pointwise op of the same shape: conv -> batch_norm -> relu writes memory once)."""
        if len(n.users) != 1:
            return False
        u = next(iter(n.users))
        if u.op != "call_function" or _opname(u) not in _FUSABLE:
            return False
        val = u.meta.get("val")
        return hasattr(val, "shape") and tuple(cexpr(v) for v in val.shape) == tuple(shape)

    def _pointwise(self, n, args, expr):
        """out = expr(x0, x1, ...) with broadcasting; non-Node args are literals. A value
        whose only reader is a same-shape pointwise op is not written: its statements are
        inlined into the reader's loop."""
        shape = self._out_shape(n)
        nd = len(shape)
        p = f"v{self.nexpr}_"
        self.nexpr += 1
        loads = []
        for k, a in enumerate(args):
            if isinstance(a, Node) and a.name in self.pending:
                stmts, res = self.pending.pop(a.name)
                self.inherited += self.deferred.pop(a.name, [])
                loads += stmts + [f"const float x{k} = {res};"]
                continue
            if isinstance(a, tuple) and a[0] == "chan":  # ("chan", C pointer): per dim 1
                loads.append(f"const float x{k} = {a[1]}[(i / {_numel(shape[2:])}) % "
                             f"{shape[1]}];")
                continue
            if isinstance(a, tuple):                     # ("raw", C pointer, shape)
                loads.append(f"const float x{k} = {a[1]}[i];")
                continue
            if isinstance(a, Node) and isinstance(a.meta.get("val"), SymInt):
                loads.append(f"const float x{k} = (float){cexpr(a.meta['val'])};")
                continue
            if isinstance(a, SymInt):
                loads.append(f"const float x{k} = (float){cexpr(a)};")
                continue
            if not isinstance(a, Node):
                loads.append(f"const float x{k} = {_lit(a)};")
                continue
            s = self.shape_of(a)
            if tuple(s) == tuple(shape):
                loads.append(f"const float x{k} = {self._val(a)}[i];")
                continue
            full = [1] * (nd - len(s)) + list(s)
            strides = [0] * nd
            for d in range(nd - 1, -1, -1):
                strides[d] = 0 if str(full[d]) == "1" else _numel(full[d + 1:])
            off = " + ".join(f"((i / {_numel(shape[d + 1:])}) % {shape[d]}) * {strides[d]}"
                             for d in range(nd) if strides[d]) or "0"
            loads.append(f"const float x{k} = {self._val(a)}[{off}];")
        rename = p + r"x\1"
        loads = [_XVAR.sub(rename, ld) if ld.startswith("const float x") else ld
                 for ld in loads]
        loads.append(f"const float {p}r = {_XVAR.sub(rename, expr)};")
        if self._fusable(n, shape):
            self.pending[n.name] = (loads, f"{p}r")
            self.shape[n.name] = tuple(shape)
            return
        out = self._alloc(n, shape)
        numel = _numel(shape)
        par = f" if ({numel} >= 65536)"
        self.lines += [f"  #pragma omp parallel for simd{par}",
                       f"  for (int64_t i = 0; i < {numel}; i++) {{",
                       *("    " + ld for ld in loads),
                       f"    {out}[i] = {p}r;", "  }"]

    def _binary(self, n, name):
        a, b = n.args[0], n.args[1]
        alpha = n.args[2] if len(n.args) > 2 else n.kwargs.get("alpha", 1)
        expr = re.sub(r"\bb\b", "x1", re.sub(r"\ba\b", "x0", _BINARY[name]))
        if name in ("add", "sub") and alpha != 1:
            expr = f"x0 {'+' if name == 'add' else '-'} {_lit(alpha)} * x1"
        mode = n.kwargs.get("rounding_mode")
        if name == "div" and mode is not None:
            if mode not in ("floor", "trunc"):
                raise NotImplementedError(f"aot_compile: div with rounding_mode={mode!r}")
            expr = f"{mode}f(x0 / x1)"
        self._pointwise(n, [a, b], expr)

    def _op_div_rounding(self, n):
        mode = n.args[2] if len(n.args) > 2 else n.kwargs.get("rounding_mode")
        if mode not in ("floor", "trunc"):
            raise NotImplementedError(f"aot_compile: div with rounding_mode={mode!r}")
        self._pointwise(n, [n.args[0], n.args[1]], f"{mode}f(x0 / x1)")

    def _op_gelu(self, n):
        approx = n.args[1] if len(n.args) > 1 else n.kwargs.get("approximate", "none")
        if approx == "tanh":
            expr = ("0.5f * x0 * (1.0f + tanhf(0.7978845608028654f * "
                    "(x0 + 0.044715f * x0 * x0 * x0)))")
        else:
            expr = "0.5f * x0 * (1.0f + erff(x0 * 0.7071067811865476f))"
        self._pointwise(n, [n.args[0]], expr)

    def _clamp(self, n, lo, hi):
        expr = "x0"
        if lo is not None:
            expr = f"(({expr}) < {_lit(lo)} ? {_lit(lo)} : ({expr}))"
        if hi is not None:
            expr = f"(({expr}) > {_lit(hi)} ? {_lit(hi)} : ({expr}))"
        self._pointwise(n, [n.args[0]], expr)

    def _op_hardtanh(self, n):
        a = list(n.args) + [None] * 3
        self._clamp(n, -1.0 if a[1] is None else a[1], 1.0 if a[2] is None else a[2])

    def _op_clamp(self, n):
        a = list(n.args) + [None] * 3
        lo, hi = n.kwargs.get("min", a[1]), n.kwargs.get("max", a[2])
        if isinstance(lo, Node) or isinstance(hi, Node):
            raise NotImplementedError("aot_compile: clamp with tensor bounds")
        self._clamp(n, lo, hi)

    def _op_leaky_relu(self, n):
        slope = n.args[1] if len(n.args) > 1 else n.kwargs.get("negative_slope", 0.01)
        self._pointwise(n, [n.args[0]], f"x0 > 0.0f ? x0 : x0 * {_lit(slope)}")

    # -- extern ops (runtime.c) ---------------------------------------------------------

    def _op_linear(self, n):
        x, w = n.args[0], n.args[1]
        b = n.args[2] if len(n.args) > 2 else n.kwargs.get("bias")
        xs, ws = self.shape_of(x), self.shape_of(w)
        out = self._alloc(n, self._out_shape(n))
        bias = self._val(b) if isinstance(b, Node) else "NULL"
        macro = self.ptr.get(w.name)
        if macro in self.arrays:     # a weight: embed W^T [K, N] for the vectorized GEMM
            wt = "WT" + macro[1:]
            self.arrays.setdefault(wt, self.arrays[macro].T.copy())
            self.ptr.setdefault("__T_" + w.name, wt)
            self.lines.append(f"  em_linear_t({_numel(xs[:-1])}, {ws[0]}, {ws[1]}, "
                              f"{self._val(x)}, {wt}, {bias}, {out});")
            return
        self.lines.append(f"  em_gemm_nt({_numel(xs[:-1])}, {ws[0]}, {ws[1]}, {self._val(x)}, "
                          f"{self._val(w)}, {bias}, {out});")

    def _op_addmm(self, n):
        bias, a, b = n.args[:3]
        beta = n.kwargs.get("beta", n.args[3] if len(n.args) > 3 else 1)
        alpha = n.kwargs.get("alpha", n.args[4] if len(n.args) > 4 else 1)
        (m, k), (_, nn) = self.shape_of(a), self.shape_of(b)
        tmp = f"(em_arena + {self._take(_numel((m, nn)))})"
        self.lines.append(f"  em_gemm_nn({m}, {nn}, {k}, {self._val(a)}, {self._val(b)}, {tmp});")
        self._pointwise(n, [("raw", tmp, (m, nn)), bias],
                        f"{_lit(alpha)} * x0 + {_lit(beta)} * x1")

    def _op_mm(self, n):
        a, b = n.args[:2]
        (m, k), (_, nn) = self.shape_of(a), self.shape_of(b)
        out = self._alloc(n, (m, nn))
        self.lines.append(f"  em_gemm_nn({m}, {nn}, {k}, {self._val(a)}, {self._val(b)}, {out});")

    def _op_matmul(self, n):
        a, b = n.args[:2]
        sa, sb = self.shape_of(a), self.shape_of(b)
        if len(sa) < 2 or len(sb) < 2:
            raise NotImplementedError("aot_compile: matmul with a 1-D operand")
        if len(sb) == 2:
            out = self._alloc(n, self._out_shape(n))
            self.lines.append(f"  em_gemm_nn({_numel(sa[:-1])}, {sb[1]}, {sa[-1]}, "
                              f"{self._val(a)}, {self._val(b)}, {out});")
            return
        if tuple(sa[:-2]) != tuple(sb[:-2]):
            raise NotImplementedError("aot_compile: matmul with broadcast batch dims "
                                      f"{list(sa)} @ {list(sb)}")
        self._bmm(n, a, b, sa, sb)

    def _op_bmm(self, n):
        a, b = n.args[:2]
        self._bmm(n, a, b, self.shape_of(a), self.shape_of(b))

    def _bmm(self, n, a, b, sa, sb):
        m, k, nn = sa[-2], sa[-1], sb[-1]
        out = self._alloc(n, self._out_shape(n))
        self.lines.append(f"  em_bmm({_numel(sa[:-2])}, {m}, {nn}, {k}, {self._val(a)}, "
                          f"{_numel((m, k))}, {self._val(b)}, {_numel((k, nn))}, {out});")

    def _op_convolution(self, n):
        a = list(n.args) + [None] * 9
        x, w, b, stride, pad, dil, transposed, _, groups = a[:9]
        if transposed:
            raise NotImplementedError("aot_compile: transposed convolution (conv_transpose2d) "
                                      "is not in the C runtime")
        self._conv(n, x, w, b, stride, pad, dil, groups)

    def _op_conv2d(self, n):
        a = list(n.args) + [None] * 7
        kw = n.kwargs
        self._conv(n, a[0], a[1], kw.get("bias", a[2]), kw.get("stride", a[3] or 1),
                   kw.get("padding", a[4] or 0), kw.get("dilation", a[5] or 1),
                   kw.get("groups", a[6] or 1))

    def _conv(self, n, x, w, b, stride, pad, dil, groups):
        xs, ws = self.shape_of(x), self.shape_of(w)
        if len(xs) not in (3, 4) or isinstance(pad, str):
            raise NotImplementedError(f"aot_compile: convolution on a {len(xs)}-D input or "
                                      "with string padding (conv1d/conv2d with numeric "
                                      "padding only)")
        shape = self._out_shape(n)
        out = self._alloc(n, shape)
        (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(pad), _pair(dil)
        if len(xs) == 3:          # conv1d: a conv2d over a height of 1
            xs, ws, shape = (xs[0], xs[1], "1", xs[2]), (*ws[:2], "1", ws[2]), \
                (shape[0], shape[1], "1", shape[2])
            sh, ph, dh = 1, 0, 1
        g = int(groups or 1)
        if not str(xs[1]).isdigit():
            raise NotImplementedError("aot_compile: convolution with a dynamic channel count")
        self.scratch.append(_numel((int(xs[1]) // g, ws[2], ws[3], shape[2], shape[3])))
        bias = self._val(b) if isinstance(b, Node) else "NULL"
        self.lines.append(
            f"  em_conv2d({xs[0]}, {xs[1]}, {xs[2]}, {xs[3]}, {self._val(x)}, {ws[0]}, {ws[2]}, "
            f"{ws[3]}, {self._val(w)}, {bias}, {sh}, {sw}, {ph}, {pw}, {dh}, {dw}, {g}, "
            f"{shape[2]}, {shape[3]}, {out}, em_scratch);")

    def _op_batch_norm(self, n):
        x, w, b, mean, var, training = n.args[:6]
        eps = n.args[7] if len(n.args) > 7 else n.kwargs.get("eps", 1e-5)
        if training:
            raise NotImplementedError("aot_compile: batch_norm in training mode (export the "
                                      "model after .eval())")
        xs = self.shape_of(x)
        consts = [self.ptr.get(t.name) if isinstance(t, Node) else None for t in (mean, var)]
        if all(c in self.arrays for c in consts) and \
                (w is None or self.ptr.get(w.name) in self.arrays):
            # constant statistics: scale = w / sqrt(var + eps) folded at compile time (as
            # runtime.c's em_batch_norm computes it), the rest a fusable pointwise op
            inv = (1.0 / np.sqrt(self.arrays[consts[1]].astype(np.float64) + float(eps)))
            sc = inv.astype(np.float32)
            if w is not None:
                sc = self.arrays[self.ptr[w.name]] * sc
            macro = f"WS{len(self.arrays)}"
            self.arrays[macro] = np.ascontiguousarray(sc, dtype=np.float32)
            args = [x, ("chan", self._val(mean)), ("chan", macro)]
            expr = "(x0 - x1) * x2"
            if isinstance(b, Node):
                args.append(("chan", self._val(b)))
                expr += " + x3"
            self._pointwise(n, args, expr)
            return
        out = self._alloc(n, xs)
        ptr = [self._val(t) if isinstance(t, Node) else "NULL" for t in (w, b)]
        self.lines.append(f"  em_batch_norm({xs[0]}, {xs[1]}, {_numel(xs[2:])}, {self._val(x)}, "
                          f"{ptr[0]}, {ptr[1]}, {self._val(mean)}, {self._val(var)}, "
                          f"{float(eps)!r}, {out});")

    def _pool_args(self, n, x):
        xs = self.shape_of(x)
        if len(xs) != 4:
            raise NotImplementedError(f"aot_compile: 2-D pooling of a {len(xs)}-D input")
        return xs, self._out_shape(n)

    def _op_max_pool2d_with_indices(self, n):
        real = [u for u in n.users if not (getattr(u.target, "__name__", "") == "getitem"
                                           and u.args[1] == 0)]
        if real:
            raise NotImplementedError("aot_compile: max_pool2d's indices are used "
                                      "(return_indices=True); the C runtime computes values")
        self._max_pool(n, _static_shape_at(n, 0))

    def _op_max_pool2d(self, n):
        self._max_pool(n, self._out_shape(n))

    def _max_pool(self, n, shape):
        a = list(n.args) + [None] * 6
        x, k, stride, pad, dil = a[0], a[1], a[2] or a[1], a[3] or 0, a[4] or 1
        xs = self.shape_of(x)
        out = self._alloc(n, shape)
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = map(_pair, (k, stride, pad, dil))
        self.lines.append(f"  em_max_pool2d({_numel(xs[:2])}, {xs[2]}, {xs[3]}, {self._val(x)}, "
                          f"{kh}, {kw}, {sh}, {sw}, {ph}, {pw}, {dh}, {dw}, {shape[2]}, "
                          f"{shape[3]}, {out});")

    def _op_getitem(self, n):
        src, k = n.args
        if k != 0 or src.name not in self.ptr:
            raise NotImplementedError(f"aot_compile: {n.name} = {src.name}[{k}] (only the "
                                      "values of max_pool2d_with_indices)")
        self.ptr[n.name] = self.ptr[src.name]
        self.shape[n.name] = self._out_shape(n)

    def _op_avg_pool2d(self, n):
        a = list(n.args) + [None] * 7
        x, k, stride, pad = a[0], a[1], a[2] or a[1], a[3] or 0
        include_pad = True if a[5] is None else bool(a[5])
        divisor = int(a[6] or 0)
        xs, shape = self._pool_args(n, x)
        out = self._alloc(n, shape)
        (kh, kw), (sh, sw), (ph, pw) = map(_pair, (k, stride, pad))
        self.lines.append(f"  em_avg_pool2d({_numel(xs[:2])}, {xs[2]}, {xs[3]}, {self._val(x)}, "
                          f"{kh}, {kw}, {sh}, {sw}, {ph}, {pw}, {int(include_pad)}, {divisor}, "
                          f"{shape[2]}, {shape[3]}, {out});")

    def _op_adaptive_avg_pool2d(self, n):
        x = n.args[0]
        xs, shape = self._pool_args(n, x)
        out = self._alloc(n, shape)
        self.lines.append(f"  em_adaptive_avg_pool2d({_numel(xs[:2])}, {xs[2]}, {xs[3]}, "
                          f"{self._val(x)}, {shape[2]}, {shape[3]}, {out});")

    def _softmax(self, n, log_):
        x, dim = n.args[0], n.args[1]
        xs = self.shape_of(x)
        dim = dim % max(len(xs), 1)
        out = self._alloc(n, xs)
        self.lines.append(f"  em_softmax({_numel(xs[:dim])}, {xs[dim] if xs else 1}, "
                          f"{_numel(xs[dim + 1:])}, {self._val(x)}, {out}, {int(log_)});")

    def _op_softmax(self, n):
        self._softmax(n, False)

    def _op_log_softmax(self, n):
        self._softmax(n, True)

    def _reduce(self, n, mean):
        x = n.args[0]
        xs = self.shape_of(x)
        dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
        if not xs:                       # a 0-d input: its one element (dim 0/-1 allowed)
            out = self._alloc(n, self._out_shape(n))
            self.lines.append(f"  em_reduce_sum(1, 1, 1, {self._val(x)}, {out}, {int(mean)});")
            return
        if dims is None or dims == []:
            dims = list(range(len(xs)))
        dims = sorted({d % len(xs) for d in (dims if isinstance(dims, (list, tuple))
                                             else [dims])})
        if dims != list(range(dims[0], dims[-1] + 1)):
            raise NotImplementedError(f"aot_compile: {'mean' if mean else 'sum'} over "
                                      f"non-adjacent dims {dims}")
        out = self._alloc(n, self._out_shape(n))
        self.lines.append(f"  em_reduce_sum({_numel(xs[:dims[0]])}, "
                          f"{_numel(xs[dims[0]:dims[-1] + 1])}, {_numel(xs[dims[-1] + 1:])}, "
                          f"{self._val(x)}, {out}, {int(mean)});")

    def _op_mean(self, n):
        self._reduce(n, True)

    def _op_sum(self, n):
        self._reduce(n, False)

    def _permute(self, n, perm):
        x = n.args[0]
        xs = self.shape_of(x)
        strides = [_numel(xs[d + 1:]) for d in range(len(xs))]
        ys = [xs[p] for p in perm]
        out = self._alloc(n, ys)
        self.lines.append(f"  em_permute({len(xs)}, {_ints(ys)}, "
                          f"{_ints([strides[p] for p in perm])}, {self._val(x)}, {out});")

    def _op_permute(self, n):
        nd = len(self.shape_of(n.args[0]))
        self._permute(n, [int(p) % nd for p in n.args[1]])

    def _op_t(self, n):
        self._permute(n, list(range(len(self.shape_of(n.args[0]))))[::-1])

    def _op_transpose(self, n):
        nd = len(self.shape_of(n.args[0]))
        perm = list(range(nd))
        d0, d1 = int(n.args[1]) % nd, int(n.args[2]) % nd
        perm[d0], perm[d1] = perm[d1], perm[d0]
        self._permute(n, perm)

    def _op_select(self, n):
        x, dim, idx = n.args[:3]
        xs = self.shape_of(x)
        dim = dim % len(xs)
        st = _strides(xs)
        base = f"((({idx}) < 0 ? ({idx}) + {xs[dim]} : ({idx})) * {st[dim]})"
        _gather(self, n, x, [t for d, t in enumerate(xs) if d != dim],
                [t for d, t in enumerate(st) if d != dim], base)


    def _op_slice(self, n):
        a = list(n.args) + [None] * 5
        x, dim, start, _, step = a[0], a[1] or 0, a[2], a[3], a[4] or 1
        xs = self.shape_of(x)
        dim = dim % len(xs)
        st = _strides(xs)
        start = 0 if start is None else start
        if hasattr(n.meta.get("val"), "shape"):
            ys = list(self._out_shape(n))
        else:                 # a view the capture left without a value: its size by the rule
            if not all(t.isdigit() for t in xs):
                raise NotImplementedError(f"aot_compile: {n.name} (slice) has no recorded size")
            size = int(xs[dim])
            lo, hi, _ = slice(start, a[3], int(step)).indices(size)
            ys = list(xs)
            ys[dim] = str(max(0, -(-(hi - lo) // int(step))))
            self.shape[n.name] = tuple(ys)
        xst = list(st)
        xst[dim] = f"{st[dim]} * {int(step)}"
        base = f"em_slice_start({cexpr(start)}, {xs[dim]}) * {st[dim]}"
        _gather(self, n, x, ys, xst, base)


    def _op_expand(self, n):
        x = n.args[0]
        xs, ys = self.shape_of(x), self._out_shape(n)
        full = ["1"] * (len(ys) - len(xs)) + list(xs)
        st = _strides(full)
        _gather(self, n, x, ys, ["0" if full[d] == "1" else st[d] for d in range(len(ys))], "0")


    def _op_scaled_dot_product_flash_attention_for_cpu(self, n):
        a = list(n.args) + [None] * 7
        q, k, v, dropout_p, causal, mask, scale = a[:7]
        kw = n.kwargs
        dropout_p, causal = kw.get("dropout_p", dropout_p), kw.get("is_causal", causal)
        mask, scale = kw.get("attn_mask", mask), kw.get("scale", scale)
        if mask is not None or (dropout_p or 0.0) != 0.0:
            raise NotImplementedError("aot_compile: scaled_dot_product_attention with an "
                                      "attn_mask or dropout (the C runtime does causal/none)")
        qs, ks, vs = self.shape_of(q), self.shape_of(k), self.shape_of(v)
        if len(qs) != 4:
            raise NotImplementedError(f"aot_compile: {len(qs)}-D scaled_dot_product_attention")
        E = qs[-1]
        sc = float(scale) if scale is not None else f"(1.0f / sqrtf((float)({E})))"
        shape = _static_shape_at(n, 0)
        out = self._alloc(n, shape)
        self.lines.append(f"  em_sdpa({qs[0]}, {qs[1]}, {ks[1]}, {qs[2]}, {ks[2]}, {E}, "
                          f"{vs[-1]}, {self._val(q)}, {self._val(k)}, {self._val(v)}, "
                          f"{_lit(sc) if isinstance(sc, float) else sc}, {int(bool(causal))}, "
                          f"{out});")

    def _op_layer_norm(self, n):
        a = list(n.args) + [None] * 5
        x, shape, w, b = a[0], a[1], n.kwargs.get("weight", a[2]), n.kwargs.get("bias", a[3])
        eps = n.kwargs.get("eps", 1e-5 if a[4] is None else a[4])
        xs = self.shape_of(x)
        k = len(shape)
        out = self._alloc(n, xs)
        ptr = [self._val(t) if isinstance(t, Node) else "NULL" for t in (w, b)]
        self.lines.append(f"  em_layer_norm({_numel(xs[:-k])}, {_numel(xs[-k:])}, {self._val(x)}, "
                          f"{ptr[0]}, {ptr[1]}, {float(eps)!r}, {out});")


    def _op_cat(self, n):
        a = list(n.args) + [0]
        tensors, dim = a[0], n.kwargs.get("dim", a[1])
        ys = self._out_shape(n)
        dim = dim % len(ys)
        out = self._alloc(n, ys)
        outer, ld, off = _numel(ys[:dim]), _numel(ys[dim:]), "0"
        for t in tensors:
            ts = self.shape_of(t)
            if len(ts) != len(ys):
                continue          # cat skips legacy empty 1-D tensors
            width = _numel(ts[dim:])
            self.lines.append(f"  em_cat_part({outer}, {width}, {ld}, {off}, {self._val(t)}, "
                              f"{out});")
            off = f"{off} + {width}"


def _static_shape(n):
    val = n.meta.get("val")
    if val is None or not hasattr(val, "shape"):
        raise NotImplementedError(f"aot_compile: node {n.name} has no tensor value")
    return _check_static(n.name, val)


def _static_shape_at(n, k):
    return _check_static(n.name, n.meta["val"][k])


def _check_static(name, val):
    dt = str(val.dtype).split(".")[-1]
    if dt != "float32":
        raise NotImplementedError(f"aot_compile: {name} is {dt}; the C runtime is float32 only")
    return tuple(cexpr(v) for v in val.shape)


def arena_size(terms):
    """Sum of C size texts, the constant part folded."""
    const = sum(int(t) for t in terms if t.isdigit())
    return " + ".join([t for t in terms if not t.isdigit()] + [str(const)])


def symbols(texts):
    """The size symbols (ks_s0, ...) that C size texts mention, in first-seen order."""
    seen = []
    for t in texts:
        for m in SYM_RE.findall(str(t)):
            if m not in seen:
                seen.append(m)
    return seen


def _strides(shape):
    """Contiguous strides of a shape of C size texts."""
    return [_numel(shape[d + 1:]) for d in range(len(shape))]


def _gather(ag, n, x, ysize, xstrides, base):
    """out = the strided view (ysize, xstrides) of x starting at `base` floats, copied."""
    out = ag._alloc(n, ysize)
    ag.lines.append(f"  em_permute({len(ysize)}, {_ints(ysize) if ysize else _ints([1])}, "
                    f"{_ints(xstrides) if xstrides else _ints([0])}, {ag._val(x)} + ({base}), "
                    f"{out});")


def _opname(n):
    if getattr(n.target, "__name__", "") == "getitem":
        return "getitem"
    return getattr(n.target, "name", str(n.target))




numel = _numel       # for library.py: a product of C size texts
