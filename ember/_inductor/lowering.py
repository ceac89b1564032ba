"""Lowerings: each lowerable prim (by registry name) -> an IR value (ir.py).

Why a table keyed by the registry name: the prim set is the registry's (`prim` tag), so a
prim without an entry here is simply an extern call (its eager kernel), never a wrong
answer. Math follows the eager kernels' semantics: compute in the output dtype (half
precision in float), NaN propagates through max/min/relu, integer ops that could trap
(division, modulo) stay extern.
"""
import math

from .. import _dtype as D
from .._symbolic import SymInt
from . import codegen_c as C
from .ir import Pointwise, Reduction, Scalar, Value, contiguous_strides, is_one, regtype

__all__ = ["LOWERINGS", "lower"]

LOWERINGS = {}


def _fn(name, t):
    """C name of math function `name` for register type t (libmvec-declared where listed)."""
    if name in C.MATH1 or name in C.MATH2:
        return f"em_{name}f" if t == "float" else f"em_{name}"
    return name + "f" if t == "float" else name


def literal(x, dt):
    t = regtype(dt)
    if isinstance(x, bool) or dt == D.bool:
        return "1" if x else "0"
    if dt.is_floating_point:
        x = float(x)
        if math.isnan(x):
            return f"(({t})NAN)"
        if math.isinf(x):
            return f"(({t}){'-' if x < 0 else ''}INFINITY)"
        return f"(({t}){x!r})"
    return f"(({t}){int(x)}LL)"


def cast(x, src, dst):
    if dst == D.bfloat16 and src != D.bfloat16:
        return f"em_bf16_to_f(em_f_to_bf16((float){x}))"      # an explicit cast rounds
    if dst == D.float16 and src != D.float16:
        return f"((float)(_Float16){x})"
    if regtype(src) == regtype(dst) and (src == D.bool) == (dst == D.bool):
        return x
    if dst == D.bool:
        return f"({x} != 0)"
    return f"(({regtype(dst)}){x})"


def arg_dtype(a):
    if isinstance(a, Value):
        return a.dtype
    if isinstance(a, Scalar):
        return D.float64 if a.is_float else D.int64
    if isinstance(a, bool):
        return D.bool
    if isinstance(a, int):
        return D.int64
    return D.float64


def load_at(ctx, a, idx, out_rank, dst):
    """Argument `a` (Value, Python number, SymInt, Scalar) at output index `idx`
    (broadcast: size-1 dims of `a` read index 0), in dst's register type."""
    if isinstance(a, Value):
        off = out_rank - len(a.shape)
        vidx = ["0" if is_one(n) else idx[off + d] for d, n in enumerate(a.shape)]
        return cast(a.load(ctx, vidx), a.dtype, dst)
    if isinstance(a, SymInt):
        return cast(ctx.size(a), D.int64, dst)
    if isinstance(a, Scalar):
        return cast(ctx.scalar(a), arg_dtype(a), dst)
    return literal(a, dst)


def promote(args):
    """The dtype binary comparisons compute in: tensors' promotion, Python scalars weak."""
    tens = [a.dtype for a in args if isinstance(a, Value)]
    dt = tens[0]
    for t in tens[1:]:
        dt = D.promote_types(dt, t)
    for a in args:
        if isinstance(a, Value):
            continue
        k = arg_dtype(a)
        if k.is_floating_point and not dt.is_floating_point:
            dt = D.float32
        elif k == D.int64 and dt == D.bool:
            dt = D.int64

    return dt


def pointwise(node, args, compute, fmt, cost=1):
    """A Pointwise over the node's output shape: fmt(ctx, t, *loaded args) -> C expression,
    args loaded in `compute` dtype, result cast to the node's dtype."""
    fake = node.meta["val"]
    shape, out = list(fake.shape), fake.dtype

    def fn(ctx, idx):
        xs = [load_at(ctx, a, idx, len(shape), compute) for a in args]
        r = fmt(ctx, regtype(compute), *xs)
        return ctx.tmp(regtype(out), cast(r, compute, out) if compute != out else r)
    cost += sum(a.cost for a in args if isinstance(a, Value) and a.buffer is None)
    return Pointwise(shape, out, fn, cost)


def _reg(names, **kw):
    def deco(f):
        for n in names.split():
            LOWERINGS[n] = f
        return f
    return deco


# ---------------------------------------------------------------- pointwise math
_UNARY = {
    "neg": lambda t, x: f"(-{x})",
    "abs": lambda t, x: f"({x} < 0 ? -{x} : {x})" if t not in ("float", "double")
    else f"{_fn('fabs', t)}({x})",
    "exp": None, "exp2": None, "expm1": None, "log": None, "log2": None, "log10": None,
    "log1p": None, "sin": None, "cos": None, "tan": None, "sinh": None, "cosh": None,
    "tanh": None, "asin": None, "acos": None, "atan": None, "asinh": None, "acosh": None,
    "atanh": None, "erf": None, "erfc": None, "lgamma": None,
    "sqrt": lambda t, x: f"{_fn('sqrt', t)}({x})",
    "rsqrt": lambda t, x: f"(({t})1 / {_fn('sqrt', t)}({x}))",
    "reciprocal": lambda t, x: f"(({t})1 / {x})",
    "sigmoid": lambda t, x: f"(({t})1 / (({t})1 + {_fn('exp', t)}(-{x})))",
    "relu": lambda t, x: f"(({x} > 0 || {x} != {x}) ? {x} : ({t})0)",
    "square": lambda t, x: f"({x} * {x})",
    "floor": lambda t, x: f"{_fn('floor', t)}({x})",
    "ceil": lambda t, x: f"{_fn('ceil', t)}({x})",
    "trunc": lambda t, x: f"{_fn('trunc', t)}({x})",
    "frac": lambda t, x: f"({x} - {_fn('trunc', t)}({x}))",
    "sign": lambda t, x: f"(({t})(({x} > 0) - ({x} < 0)))",     # sign(nan) is 0, as eager
    "bitwise_not": lambda t, x: f"(!{x})" if t == "bool" else f"(~{x})",
    "logical_not": lambda t, x: f"(!{x})",
    "clone": lambda t, x: x, "_to_copy": lambda t, x: x, "alias": lambda t, x: x,
    "detach": lambda t, x: x, "positive": lambda t, x: x,
}
_BOOL_OUT_UNARY = {
    "isnan": lambda t, x: f"({x} != {x})",
    "isinf": lambda t, x: f"({_fn('fabs', t)}({x}) == INFINITY)",
    "isfinite": lambda t, x: f"({x} - {x} == 0)",
    "signbit": lambda t, x: f"(signbit({x}) != 0)",
}
_FLOAT_ONLY = {"floor", "ceil", "trunc", "frac", "sign"}


def _unary(name, fmt):
    def lower(node, args):
        out = node.meta["val"].dtype
        x = args[0]
        if name in _FLOAT_ONLY and not out.is_floating_point:
            if name in ("floor", "ceil", "trunc"):
                return pointwise(node, [x], out, lambda ctx, t, a: a)
            return None
        if name in ("isnan", "isinf", "isfinite", "signbit"):
            dt = x.dtype
            if not dt.is_floating_point:
                return None
            return pointwise(node, [x], dt, lambda ctx, t, a: fmt(t, a))
        f = fmt or (lambda t, a: f"{_fn(name, t)}({a})")
        if fmt is None and not out.is_floating_point:
            return None
        return pointwise(node, [x], out, lambda ctx, t, a: f(t, a))
    return lower


for _n, _f in {**_UNARY, **_BOOL_OUT_UNARY}.items():
    LOWERINGS[_n] = _unary(_n, _f)


@_reg("round")
def _round(node, args):
    """round(x) (decimals=None): half to even, as NumPy's rint, in the C default rounding
    mode; quantize's decomposition ends in it. round(x, decimals=d) stays an eager call."""
    if len(args) > 1 and args[1] is not None:
        return None
    out = node.meta["val"].dtype
    if not out.is_floating_point:
        return pointwise(node, [args[0]], out, lambda ctx, t, a: a)
    return pointwise(node, [args[0]], out, lambda ctx, t, a: f"{_fn('rint', t)}({a})")


def _binary(fmt, *, float_only=False, int_ok=True, compare=False):
    def lower(node, args):
        out = node.meta["val"].dtype
        a, b = args[0], args[1]
        comp = promote([a, b]) if compare else out
        if (float_only or not int_ok) and not comp.is_floating_point:
            return None
        return pointwise(node, [a, b], comp, lambda ctx, t, x, y: fmt(t, x, y))
    return lower


def _alpha(node, args, op):
    alpha = args[2] if len(args) > 2 else 1
    out = node.meta["val"].dtype
    if alpha == 1:
        return pointwise(node, args[:2], out, lambda ctx, t, x, y: f"({x} {op} {y})")
    if not isinstance(alpha, (int, float)):
        return None
    return pointwise(node, args[:2], out,
                     lambda ctx, t, x, y: f"({x} {op} {literal(alpha, out)} * {y})")


LOWERINGS["add"] = lambda node, args: _alpha(node, args, "+") \
    if node.meta["val"].dtype != D.bool else pointwise(
        node, args[:2], D.bool, lambda ctx, t, x, y: f"({x} || {y})")
LOWERINGS["sub"] = lambda node, args: _alpha(node, args, "-")
LOWERINGS["mul"] = _binary(lambda t, x, y: f"({x} * {y})" if t != "bool" else f"({x} && {y})")


def _div(node, args):
    mode = args[2] if len(args) > 2 else None
    out = node.meta["val"].dtype
    if not out.is_floating_point:
        return None
    if mode is None:
        return pointwise(node, args[:2], out, lambda ctx, t, x, y: f"({x} / {y})")
    f = {"trunc": "trunc", "floor": "floor"}.get(mode)
    if f is None:
        return None
    return pointwise(node, args[:2], out, lambda ctx, t, x, y: f"{_fn(f, t)}({x} / {y})")


LOWERINGS["div"] = _div
LOWERINGS["maximum"] = _binary(
    lambda t, x, y: f"(({x} != {x} || {x} > {y}) ? {x} : {y})")
LOWERINGS["minimum"] = _binary(
    lambda t, x, y: f"(({x} != {x} || {x} < {y}) ? {x} : {y})")
LOWERINGS["fmax"] = _binary(lambda t, x, y: f"{_fn('fmax', t)}({x}, {y})", float_only=True)
LOWERINGS["fmin"] = _binary(lambda t, x, y: f"{_fn('fmin', t)}({x}, {y})", float_only=True)
LOWERINGS["atan2"] = _binary(lambda t, x, y: f"{_fn('atan2', t)}({x}, {y})", float_only=True)
LOWERINGS["hypot"] = _binary(lambda t, x, y: f"{_fn('hypot', t)}({x}, {y})", float_only=True)
LOWERINGS["copysign"] = _binary(lambda t, x, y: f"{_fn('copysign', t)}({x}, {y})",
                                float_only=True)
LOWERINGS["fmod"] = _binary(lambda t, x, y: f"{_fn('fmod', t)}({x}, {y})", float_only=True)
LOWERINGS["remainder"] = _binary(
    lambda t, x, y: f"({_fn('fmod', t)}({x}, {y}) != 0 && (({_fn('fmod', t)}({x}, {y}) < 0)"
                    f" != ({y} < 0)) ? {_fn('fmod', t)}({x}, {y}) + {y} : "
                    f"{_fn('fmod', t)}({x}, {y}))", float_only=True)
LOWERINGS["logaddexp"] = _binary(
    lambda t, x, y: f"(({x}) == ({y}) && {_fn('fabs', t)}({x}) == INFINITY ? {x} : "
                    f"(({x}) > ({y}) ? {x} : {y}) + {_fn('log1p', t)}({_fn('exp', t)}("
                    f"-{_fn('fabs', t)}(({x}) - ({y})))))", float_only=True)
LOWERINGS["xlogy"] = _binary(
    lambda t, x, y: f"({y} != {y} ? {y} : ({x} == 0 ? ({t})0 : {x} * {_fn('log', t)}({y})))",
    float_only=True)


def _pow(node, args):
    out = node.meta["val"].dtype
    if not out.is_floating_point:
        return None
    e = args[1]
    if isinstance(e, (int, float)) and not isinstance(e, bool) and float(e) == 2.0:
        return pointwise(node, args[:1], out, lambda ctx, t, x: f"({x} * {x})")
    return pointwise(node, args[:2], out, lambda ctx, t, x, y: f"{_fn('pow', t)}({x}, {y})")


LOWERINGS["pow"] = _pow
for _n, _op in {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}.items():
    LOWERINGS[_n] = _binary(lambda t, x, y, _op=_op: f"({x} {_op} {y})", compare=True)
for _n, _op in {"logical_and": "&&", "logical_or": "||"}.items():
    LOWERINGS[_n] = _binary(lambda t, x, y, _op=_op: f"(({x} != 0) {_op} ({y} != 0))",
                            compare=True)
LOWERINGS["logical_xor"] = _binary(lambda t, x, y: f"(({x} != 0) != ({y} != 0))",
                                   compare=True)
for _n, _op in {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}.items():
    LOWERINGS[_n] = _binary(lambda t, x, y, _op=_op: f"({x} {_op} {y})" if t != "bool"
                            else f"(({x}) {_op} ({y}))", int_ok=True)


def _where(node, args):
    out = node.meta["val"].dtype
    c, a, b = args

    def fn(ctx, idx):
        rank = len(node.meta["val"].shape)
        cv = load_at(ctx, c, idx, rank, D.bool)
        return ctx.tmp(regtype(out), f"({cv} ? {load_at(ctx, a, idx, rank, out)} : "
                                     f"{load_at(ctx, b, idx, rank, out)})")
    cost = 1 + sum(a.cost for a in args if isinstance(a, Value) and a.buffer is None)
    return Pointwise(list(node.meta["val"].shape), out, fn, cost)


LOWERINGS["where"] = _where


def _full(node, args):
    fake = node.meta["val"]
    v = args[1]
    if not isinstance(v, (int, float, bool)):
        return None
    return Pointwise(list(fake.shape), fake.dtype, lambda ctx, idx: literal(v, fake.dtype))


LOWERINGS["full"] = _full


# ---------------------------------------------------------------- views (re-indexing)
def _view_cost(src):
    return 0 if src.buffer is not None else src.cost


def _view(src, shape, index_map):
    return Pointwise(list(shape), src.dtype, lambda ctx, idx: src.load(ctx, index_map(idx)),
                     _view_cost(src))


def _shape(node):
    return list(node.meta["val"].shape)


@_reg("expand")
def _expand(node, args):
    src, out = args[0], _shape(node)
    off = len(out) - len(src.shape)
    return _view(src, out, lambda idx: ["0" if is_one(n) else idx[off + d]
                                        for d, n in enumerate(src.shape)])


@_reg("permute")
def _permute(node, args):
    src, dims = args[0], [d % max(len(args[0].shape), 1) for d in args[1]]

    def m(idx):
        inv = [None] * len(dims)
        for o, d in enumerate(dims):
            inv[d] = idx[o]
        return inv
    return _view(src, _shape(node), m)


@_reg("unsqueeze")
def _unsqueeze(node, args):
    src = args[0]
    d = args[1] % (len(src.shape) + 1)
    return _view(src, _shape(node), lambda idx: idx[:d] + idx[d + 1:])


@_reg("squeeze")
def _squeeze(node, args):
    src, out = args[0], _shape(node)
    dims = args[1] if isinstance(args[1], (list, tuple)) else [args[1]]
    nd = max(len(src.shape), 1)
    gone = {d % nd for d in dims if is_one(src.shape[d % nd])} if src.shape else set()

    def m(idx):
        it = iter(idx)
        return ["0" if d in gone else next(it) for d in range(len(src.shape))]
    return _view(src, out, m)


def _same(a, b):
    return str(a) == str(b)


def _prod(xs):
    p = 1
    for x in xs:
        p = p * x
    return p


def _groups(ishape, oshape):
    """Split a reshape into groups of consecutive dims with equal products
    ([(in dims, out dims)]), or None when the sizes do not line up symbolically."""
    groups, i, o = [], 0, 0
    ni, no = len(ishape), len(oshape)
    while i < ni or o < no:
        gi, go = [], []
        if i < ni:
            gi.append(i)
            i += 1
        if o < no:
            go.append(o)
            o += 1
        for _ in range(64):
            pi, po = _prod(ishape[d] for d in gi), _prod(oshape[d] for d in go)
            if _same(pi, po):
                break
            try:
                grow_in = int(pi) < int(po)        # decided by the example sizes
            except TypeError:
                return None
            if grow_in and i < ni:
                gi.append(i)
                i += 1
            elif o < no:
                go.append(o)
                o += 1
            else:
                return None
        else:
            return None
        groups.append((gi, go))
    return groups


@_reg("view _reshape_copy")
def _reshape(node, args):
    """Re-indexing by groups of dims with equal products: a dim that survives is read
    as it is; only split/merged groups pay a division."""
    src, out = args[0], _shape(node)
    groups = _groups(src.shape, out)
    if groups is None:
        groups = [(list(range(len(src.shape))), list(range(len(out))))]

    def fn(ctx, idx):
        sidx = ["0"] * len(src.shape)
        for gi, go in groups:
            gi = [d for d in gi if not is_one(src.shape[d])]
            go = [d for d in go if not is_one(out[d])]
            if not gi:
                continue
            if len(gi) == 1 and len(go) == 1:
                sidx[gi[0]] = idx[go[0]]
                continue
            ost = contiguous_strides([out[d] for d in go])
            flat = " + ".join(idx[d] if _same(s_, 1) else f"{idx[d]}*{ctx.size(s_)}"
                              for d, s_ in zip(go, ost) if idx[d] != "0") or "0"
            if len(gi) == 1:
                sidx[gi[0]] = ctx.tmp("int64_t", flat)
                continue
            f = ctx.tmp("int64_t", flat)
            ist = contiguous_strides([src.shape[d] for d in gi])
            for k, (d, s_) in enumerate(zip(gi, ist)):
                q = f if _same(s_, 1) else f"({f} / {ctx.size(s_)})"
                sidx[d] = ctx.tmp("int64_t", q if k == 0 else f"{q} % {ctx.size(src.shape[d])}")
        return src.load(ctx, sidx)
    return Pointwise(out, src.dtype, fn, _view_cost(src))


@_reg("select")
def _select(node, args):
    src, dim, index = args[0], args[1] % len(args[0].shape), args[2]
    if isinstance(index, SymInt) or not isinstance(index, int):
        return None
    n = src.shape[dim]
    if index < 0:
        if isinstance(n, SymInt):
            return None
        index += n
    return _view(src, _shape(node), lambda idx: idx[:dim] + [str(index)] + idx[dim:])


class StaleMeta(Exception):
    """A node's fake output size does not follow its symbolic arguments (the capture
    computed it from a size's example value): generated loops would use a stale size."""


@_reg("slice")
def _slice(node, args):
    src = args[0]
    dim = args[1] % len(src.shape) if len(args) > 1 else 0
    out_n = node.meta["val"].shape[dim]
    if any(isinstance(a, SymInt) for a in args[2:4]) and not isinstance(out_n, SymInt):
        raise StaleMeta(f"{node.name}: slice by a symbolic bound has static size {out_n}")
    start = args[2] if len(args) > 2 else None
    step = args[4] if len(args) > 4 else 1
    start = 0 if start is None else start
    if not isinstance(step, int) or isinstance(step, SymInt) or step < 1:
        return None
    if isinstance(start, SymInt) or not isinstance(start, int) or start < 0:
        return None
    n = src.shape[dim]
    if not isinstance(n, SymInt) and start > n:
        start = int(n)

    def m(idx):
        i = idx[dim]
        j = i if step == 1 else f"{i}*{step}"
        return idx[:dim] + [f"({j} + {start})" if start else j] + idx[dim + 1:]
    return _view(src, _shape(node), m)


# ---------------------------------------------------------------- reductions
def _reduction(rtype):
    def lower(node, args):
        src = args[0]
        fake = node.meta["val"]
        dims = args[1] if len(args) > 1 else None
        nd = len(src.shape)
        if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0
                            and rtype in ("sum", "prod", "any", "all")):
            dims = list(range(nd))
        elif isinstance(dims, int):
            dims = [dims]
        dims = sorted({d % max(nd, 1) for d in dims}) if nd else []
        if fake.dtype == D.bool and rtype in ("sum", "prod"):
            return None
        keep_shape = [1 if d in dims else n for d, n in enumerate(src.shape)]
        return Reduction(list(fake.shape), fake.dtype, src, dims, keep_shape, rtype)
    return lower


for _r in ("sum", "prod", "amax", "amin", "any", "all"):
    LOWERINGS[_r] = _reduction(_r)


def max_pool2d_values(node, args):
    """The values of max_pool2d_with_indices (when nothing reads the indices) as an amax
    over a window view: out[..., oh, ow] = max over (kh, kw) of x[..., oh*s - p + kh*d, ...],
    out-of-bounds taps read as -inf (the eager kernel's padding). None when unsupported."""
    x = args[0]
    ks = list(args[1]) if len(args) > 1 else []
    stride = list(args[2]) if len(args) > 2 and args[2] else ks
    pad = list(args[3]) if len(args) > 3 else [0, 0]
    dil = list(args[4]) if len(args) > 4 else [1, 1]
    ceil = args[5] if len(args) > 5 else False
    ks, stride, pad, dil = (v * 2 if len(v) == 1 else v for v in (ks, stride, pad, dil))
    if ceil or not isinstance(x, Value) or not x.dtype.is_floating_point or len(ks) != 2 \
            or any(isinstance(v, SymInt) for v in ks + stride + pad + dil):
        return None
    out = list(node.meta["val"][0].shape)
    lead = out[:-2]
    H, W = x.shape[-2], x.shape[-1]
    shape = out + [ks[0], ks[1]]
    nl = len(lead)
    rt = regtype(x.dtype)

    def fn(ctx, idx):
        oh, ow, kh, kw = idx[nl], idx[nl + 1], idx[nl + 2], idx[nl + 3]
        ih = ctx.tmp("int64_t", f"{oh}*{stride[0]} - {pad[0]} + {kh}*{dil[0]}")
        iw = ctx.tmp("int64_t", f"{ow}*{stride[1]} - {pad[1]} + {kw}*{dil[1]}")
        hs, ws = ctx.size(H), ctx.size(W)
        ok = ctx.tmp("bool", f"{ih} >= 0 && {ih} < {hs} && {iw} >= 0 && {iw} < {ws}")
        ch = ctx.tmp("int64_t", f"{ih} < 0 ? 0 : ({ih} >= {hs} ? {hs} - 1 : {ih})")
        cw = ctx.tmp("int64_t", f"{iw} < 0 ? 0 : ({iw} >= {ws} ? {ws} - 1 : {iw})")
        v = x.load(ctx, list(idx[:nl]) + [ch, cw])
        return ctx.tmp(rt, f"({ok} ? {v} : ({rt})-INFINITY)")
    win = Pointwise(shape, x.dtype, fn, 1)
    return Reduction(out, x.dtype, win, [nl + 2, nl + 3], out + [1, 1], "amax")


def var_parts(node, args):
    """var(x, dims, correction, keepdim) as (sum, deviations-sum) reductions: the caller
    realizes `first()`, then `second(mean_buffer)`; None when unsupported."""
    x = args[0]
    if not isinstance(x, Value) or not x.dtype.is_floating_point:
        return None
    dims = args[1] if len(args) > 1 else None
    corr = args[2] if len(args) > 2 else None
    corr = 1 if corr is None else corr
    if not isinstance(corr, (int, float)) or isinstance(corr, bool):
        return None
    nd = len(x.shape)
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        dims = list(range(nd))
    elif isinstance(dims, int):
        dims = [dims]
    dims = sorted({d % max(nd, 1) for d in dims}) if nd else []
    keep_shape = [1 if d in dims else n for d, n in enumerate(x.shape)]
    out = node.meta["val"]
    n = 1
    for d in dims:
        n = n * x.shape[d]
    dt = out.dtype

    def first():
        return Reduction(keep_shape, dt, x, dims, keep_shape, "sum")

    def second(total):
        def dev(ctx, idx):
            m = total.load(ctx, ["0" if d in dims else i for d, i in enumerate(idx)])
            v = cast(x.load(ctx, idx), x.dtype, dt)
            mean = ctx.tmp(regtype(dt), f"{m} / ({regtype(dt)}){ctx.size(n)}")
            return ctx.tmp(regtype(dt), f"({v} - {mean}) * ({v} - {mean})")
        sq = Pointwise(list(x.shape), dt, dev, 1)
        return Reduction(list(out.shape), dt, sq, dims, keep_shape, "sum")

    def finish(ss):
        def fn(ctx, idx):
            v = ss.load(ctx, idx)
            den = ctx.tmp("double", f"(double){ctx.size(n)} - {float(corr)!r}")
            return ctx.tmp(regtype(dt), f"({regtype(dt)})({v} / ({den} > 0 ? {den} : 0.0))")
        return Pointwise(list(out.shape), dt, fn, 1)
    return first, second, finish


def lower(node, args):
    """The IR value of prim `node` with lowered `args`, or None (then it is an extern)."""
    f = LOWERINGS.get(node.target.name)
    if f is None:
        return None
    return f(node, args)
