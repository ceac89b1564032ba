"""Loop-level IR: a tensor value is a function from an index to a C expression.

Why this form (PyTorch inductor's "inner_fn" idea): a pointwise op, a broadcast or a view
is just a different way to compute the value at index (i0, i1, ...), so chains of them
compose into one expression and fuse into their consumer for free; only a `Buffer`
(a graph input, an extern call's result, or a value `realize`d by the scheduler) is
memory. Sizes are ints or SymInts; in C they are expressions over the size symbols
s0, s1, ... that the kernel receives as arguments.
"""
import re

from .. import _dtype as D
from .._symbolic import SymInt

__all__ = ["Value", "Pointwise", "Reduction", "Buffer", "cexpr", "ctype", "regtype",
           "contiguous_strides", "SYM_RE", "Scalar"]

SYM_RE = re.compile(r"\bks_\w+")
_IDENT = re.compile(r"\b([A-Za-z_]\w*)\b")


def sym_text(n):
    """A symbolic size's expression with each symbol renamed ks_<symbol> (no clash with
    loop variables or buffer names in C and in the Python wrapper); `//` kept (Python)."""
    return _IDENT.sub(r"ks_\1", str(n.node))

_CTYPE = {D.bool: "bool", D.uint8: "uint8_t", D.int8: "int8_t", D.int16: "int16_t",
          D.int32: "int32_t", D.int64: "int64_t", D.float16: "_Float16",
          D.bfloat16: "uint16_t", D.float32: "float", D.float64: "double"}


def supported_dtype(dt):
    return dt in _CTYPE


def ctype(dt):
    """The C storage type of dtype `dt`."""
    return _CTYPE[dt]


def regtype(dt):
    """The C type values of `dt` are computed in: half precision computes in float."""
    return "float" if dt in (D.float16, D.bfloat16) else _CTYPE[dt]


def cexpr(n):
    """A size (int or SymInt) as C text: `s0*s1 + 2`; floor division of sizes (never
    negative) is C's `/`."""
    if isinstance(n, SymInt):
        return "(" + sym_text(n).replace("//", "/") + ")"
    return str(int(n))


def is_one(n):
    return not isinstance(n, SymInt) and int(n) == 1


def contiguous_strides(shape):
    """Row-major strides of `shape`, as sizes (ints or SymInts)."""
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc = acc * n
    return out[::-1]


class Scalar:
    """A number known only at run time (a float graph input, a size computed in Python):
    the kernel reads it from its float/int argument array."""

    def __init__(self, name, is_float):
        self.name, self.is_float = name, is_float


class Value:
    """A tensor value: shape, dtype and `load(ctx, index) -> C expression name`."""

    buffer = None         # set once realized: later loads read memory
    cost = 0              # > 0: computes (a view of memory costs nothing to recompute)

    def __init__(self, shape, dtype):
        self.shape, self.dtype = list(shape), dtype

    def load(self, ctx, idx):
        if self.buffer is not None:
            return self.buffer.load(ctx, idx)
        key = (id(self), tuple(idx))
        hit = ctx.cache.get(key)
        if hit is None:
            hit = ctx.cache[key] = self._load(ctx, idx)
        return hit

    def numel(self):
        n = 1
        for s in self.shape:
            n = n * s
        return n


class Pointwise(Value):
    """value[idx] = fn(ctx, idx): elementwise math, broadcasts and views of other values."""

    def __init__(self, shape, dtype, fn, cost=1):
        super().__init__(shape, dtype)
        self.fn, self.cost = fn, cost

    def _load(self, ctx, idx):
        return self.fn(ctx, idx)


class Reduction(Value):
    """out[idx] = reduce over r of src[index_fn(idx, r)]; always realized (its own loop
    nest) before anything reads it."""

    def __init__(self, shape, dtype, src, red_dims, keep_shape, rtype):
        super().__init__(shape, dtype)
        self.src, self.red_dims, self.rtype = src, list(red_dims), rtype
        self.keep_shape = keep_shape    # out shape with keepdim=True (1 at reduced dims)

    def _load(self, ctx, idx):
        raise AssertionError("a Reduction is read only after it is realized")


class Buffer(Value):
    """Memory: `name` in the kernel, strides as sizes, or `dynamic_strides` (read from the
    kernel's int arguments at run time) for layouts not known when compiling."""

    def __init__(self, name, shape, dtype, strides=None, kind="computed"):
        super().__init__(shape, dtype)
        self.name, self.kind = name, kind
        self.dynamic_strides = strides is None and kind != "computed"
        self.strides = contiguous_strides(shape) if strides is None else list(strides)

    def load(self, ctx, idx):
        key = (id(self), tuple(idx))
        hit = ctx.cache.get(key)
        if hit is None:
            ptr = ctx.buffer_param(self)
            off = self.offset(ctx, idx)
            expr = f"{ptr}[{off}]"
            if self.dtype == D.bfloat16:
                expr = f"em_bf16_to_f({expr})"
            elif self.dtype == D.float16:
                expr = f"(float){expr}"
            hit = ctx.cache[key] = ctx.tmp(regtype(self.dtype), expr)
        return hit

    def offset(self, ctx, idx):
        terms = []
        for d, (i, n) in enumerate(zip(idx, self.shape)):
            if i == "0" or is_one(n):
                continue
            st = ctx.stride_param(self, d) if self.dynamic_strides else \
                ctx.size(self.strides[d])
            if st == "0":
                continue
            terms.append(i if st == "1" else f"{i}*{st}")
        return " + ".join(terms) or "0"


def flat(x):
    """The leaves of nested lists, tuples and dicts (a node's arguments), in order."""
    if isinstance(x, (list, tuple)):
        for y in x:
            yield from flat(y)
    elif isinstance(x, dict):
        for y in x.values():
            yield from flat(y)
    else:
        yield x
