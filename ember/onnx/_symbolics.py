"""Translations of registry ops into ONNX operators (opset 17 and later).

Each translation takes (ctx, node, args): `args` is the op's positional argument tuple bound
against its schema (defaults filled in), with graph Nodes where tensors go; `ctx.v(a)` gives
the ONNX value name of a Node argument and `ctx.val(node)` its fake value (shape/dtype).
An op without a translation here is exported through its registry decomposition (op.decomp)
when it has one (_export.py), else it raises UnsupportedOperatorError.
"""
import math

import numpy as np
from ._builder import is_static, onnx_dtype

__all__ = ["SYMBOLICS"]

SYMBOLICS = {}
INT64_MAX = np.iinfo(np.int64).max


def symbolic(*names):
    def deco(fn):
        for n in names:
            SYMBOLICS[n] = fn
        return fn
    return deco


def _np_dtype(node_or_val):
    return np.dtype(node_or_val.dtype.np)


def _operand(ctx, a, dtype):
    """An ONNX value of element type `dtype` for a Node or a Python scalar argument."""
    if isinstance(a, (bool, int, float)):
        return ctx.b.const(np.asarray(a, dtype=dtype))
    name = ctx.v(a)
    if _np_dtype(ctx.val(a)) != dtype:
        name = ctx.b.op("Cast", [name], to=onnx_dtype(dtype))
    return name


# ---------------------------------------------------------------- pointwise
_UNARY = {"relu": "Relu", "tanh": "Tanh", "sigmoid": "Sigmoid", "exp": "Exp", "log": "Log",
          "sqrt": "Sqrt", "neg": "Neg", "abs": "Abs", "sin": "Sin", "cos": "Cos",
          "erf": "Erf", "reciprocal": "Reciprocal", "floor": "Floor", "ceil": "Ceil",
          "sign": "Sign", "logical_not": "Not", "tan": "Tan", "asin": "Asin", "acos": "Acos",
          "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh", "round": "Round",
          "bitwise_not": "Not", "isnan": "IsNaN"}


def _unary(onnx_op):
    def fn(ctx, node, args):
        out = _np_dtype(ctx.val(node))
        x = args[0]
        src = out if onnx_op not in ("IsNaN",) else _np_dtype(ctx.val(x))
        return ctx.b.op(onnx_op, [_operand(ctx, x, src)])
    return fn


for _name, _op in _UNARY.items():
    SYMBOLICS[_name] = _unary(_op)


@symbolic("rsqrt")
def _rsqrt(ctx, node, args):
    return ctx.b.op("Reciprocal", [ctx.b.op("Sqrt", [ctx.v(args[0])])])


_BINARY = {"mul": "Mul", "pow": "Pow", "maximum": "Max", "minimum": "Min",
           "remainder": "Mod", "logical_and": "And", "logical_or": "Or",
           "logical_xor": "Xor", "atan2": None}
_COMPARE = {"eq": "Equal", "lt": "Less", "gt": "Greater", "le": "LessOrEqual",
            "ge": "GreaterOrEqual", "ne": "Equal"}


def _binary(onnx_op):
    def fn(ctx, node, args):
        dt = _np_dtype(ctx.val(node))
        a, b = _operand(ctx, args[0], dt), _operand(ctx, args[1], dt)
        if onnx_op == "Pow" and isinstance(args[1], (int, float)):
            b = ctx.b.const(np.asarray(args[1], dtype=dt))
        attrs = {"fmod": 0 if dt.kind in "iu" else 1} if onnx_op == "Mod" else {}
        if onnx_op == "Mod" and dt.kind == "f":
            # torch.remainder follows the divisor's sign: a - floor(a / b) * b
            q = ctx.b.op("Floor", [ctx.b.op("Div", [a, b])])
            return ctx.b.op("Sub", [a, ctx.b.op("Mul", [q, b])])
        return ctx.b.op(onnx_op, [a, b], **attrs)
    return fn


for _name, _op in _BINARY.items():
    if _op is not None:
        SYMBOLICS[_name] = _binary(_op)


def _compare(onnx_op, negate):
    def fn(ctx, node, args):
        vals = [ctx.val(a) if not isinstance(a, (bool, int, float)) else None for a in args[:2]]
        dts = [_np_dtype(v) for v in vals if v is not None]
        dt = np.result_type(*dts) if dts else np.dtype("float64")
        out = ctx.b.op(onnx_op, [_operand(ctx, args[0], dt), _operand(ctx, args[1], dt)])
        return ctx.b.op("Not", [out]) if negate else out
    return fn


for _name, _op in _COMPARE.items():
    SYMBOLICS[_name] = _compare(_op, _name == "ne")


@symbolic("add", "sub")
def _add_sub(ctx, node, args):
    dt = _np_dtype(ctx.val(node))
    a, b = _operand(ctx, args[0], dt), _operand(ctx, args[1], dt)
    alpha = args[2] if len(args) > 2 else 1
    if alpha != 1:
        b = ctx.b.op("Mul", [b, ctx.b.const(np.asarray(alpha, dtype=dt))])
    return ctx.b.op("Add" if node.target.name == "add" else "Sub", [a, b])


@symbolic("div")
def _div(ctx, node, args):
    dt = _np_dtype(ctx.val(node))
    mode = args[2] if len(args) > 2 else None
    if mode is None:
        return ctx.b.op("Div", [_operand(ctx, args[0], dt), _operand(ctx, args[1], dt)])
    if dt.kind in "iu":
        if mode == "trunc":
            return ctx.b.op("Div", [_operand(ctx, args[0], dt), _operand(ctx, args[1], dt)])
        f = np.dtype("float64")
        q = ctx.b.op("Floor", [ctx.b.op("Div", [_operand(ctx, args[0], f),
                                                _operand(ctx, args[1], f)])])
        return ctx.b.op("Cast", [q], to=onnx_dtype(dt))
    q = ctx.b.op("Div", [_operand(ctx, args[0], dt), _operand(ctx, args[1], dt)])
    if mode == "floor":
        return ctx.b.op("Floor", [q])
    # trunc: sign(q) * floor(|q|)
    return ctx.b.op("Mul", [ctx.b.op("Sign", [q]), ctx.b.op("Floor", [ctx.b.op("Abs", [q])])])


@symbolic("where")
def _where(ctx, node, args):
    dt = _np_dtype(ctx.val(node))
    cond = _operand(ctx, args[0], np.dtype(bool))
    return ctx.b.op("Where", [cond, _operand(ctx, args[1], dt), _operand(ctx, args[2], dt)])


@symbolic("clamp", "clip")
def _clamp(ctx, node, args):
    dt = _np_dtype(ctx.val(node))
    x = _operand(ctx, args[0], dt)
    lo, hi = args[1], args[2]
    if dt.kind == "f" and all(a is None or isinstance(a, (int, float)) for a in (lo, hi)):
        return ctx.b.op("Clip", [x, None if lo is None else ctx.b.const(np.asarray(lo, dt)),
                                 None if hi is None else ctx.b.const(np.asarray(hi, dt))])
    if lo is not None:
        x = ctx.b.op("Max", [x, _operand(ctx, lo, dt)])
    if hi is not None:
        x = ctx.b.op("Min", [x, _operand(ctx, hi, dt)])
    return x


@symbolic("hardtanh")
def _hardtanh(ctx, node, args):
    dt = _np_dtype(ctx.val(node))
    return ctx.b.op("Clip", [ctx.v(args[0]), ctx.b.const(np.asarray(args[1], dt)),
                             ctx.b.const(np.asarray(args[2], dt))])


@symbolic("gelu")
def _gelu(ctx, node, args):
    dt = _np_dtype(ctx.val(node))
    x = ctx.v(args[0])
    c = ctx.b.const
    if args[1] == "tanh":
        inner = ctx.b.op("Mul", [x, ctx.b.op("Mul", [x, x])])
        inner = ctx.b.op("Add", [x, ctx.b.op("Mul", [inner, c(np.asarray(0.044715, dt))])])
        t = ctx.b.op("Tanh", [ctx.b.op("Mul", [inner, c(np.asarray(math.sqrt(2 / math.pi),
                                                                     dt))])])
    else:
        t = ctx.b.op("Erf", [ctx.b.op("Mul", [x, c(np.asarray(1 / math.sqrt(2), dt))])])
    half_x = ctx.b.op("Mul", [x, c(np.asarray(0.5, dt))])
    return ctx.b.op("Mul", [half_x, ctx.b.op("Add", [t, c(np.asarray(1, dt))])])


@symbolic("silu")
def _silu(ctx, node, args):
    x = ctx.v(args[0])
    return ctx.b.op("Mul", [x, ctx.b.op("Sigmoid", [x])])


@symbolic("hardswish")
def _hardswish(ctx, node, args):
    return ctx.b.op("HardSwish", [ctx.v(args[0])])


@symbolic("hardsigmoid")
def _hardsigmoid(ctx, node, args):
    return ctx.b.op("HardSigmoid", [ctx.v(args[0])], alpha=1.0 / 6, beta=0.5)


@symbolic("leaky_relu")
def _leaky_relu(ctx, node, args):
    return ctx.b.op("LeakyRelu", [ctx.v(args[0])], alpha=float(args[1]))


@symbolic("elu")
def _elu(ctx, node, args):
    if args[2] != 1 or args[3] != 1:
        return None                     # the decomposition handles scale / input_scale
    return ctx.b.op("Elu", [ctx.v(args[0])], alpha=float(args[1]))


@symbolic("softmax", "log_softmax")
def _softmax(ctx, node, args):
    x = ctx.v(args[0])
    if args[2] is not None:
        x = ctx.b.op("Cast", [x], to=onnx_dtype(args[2]))
    op = "Softmax" if node.target.name == "softmax" else "LogSoftmax"
    return ctx.b.op(op, [x], axis=int(args[1]))


@symbolic("addcmul", "addcdiv")
def _addcmul(ctx, node, args):
    dt = _np_dtype(ctx.val(node))
    r = ctx.b.op("Mul" if node.target.name == "addcmul" else "Div",
                 [_operand(ctx, args[1], dt), _operand(ctx, args[2], dt)])
    if args[3] != 1:
        r = ctx.b.op("Mul", [r, ctx.b.const(np.asarray(args[3], dt))])
    return ctx.b.op("Add", [_operand(ctx, args[0], dt), r])


# ---------------------------------------------------------------- casts and copies
@symbolic("clone", "contiguous", "alias", "detach", "lift_fresh_copy")
def _identity(ctx, node, args):
    if isinstance(args[0], np.ndarray):           # a constant the program made from data
        return ctx.b.const(args[0])
    return ctx.b.op("Identity", [ctx.v(args[0])])


@symbolic("_to_copy")
def _to_copy(ctx, node, args):
    return ctx.b.op("Cast", [ctx.v(args[0])], to=onnx_dtype(ctx.val(node).dtype))


@symbolic("copy_")
def _copy(ctx, node, args):
    """copy_(dst, src) on an intermediate (an in-place activation): the result is src,
    broadcast to dst's shape and cast to its dtype."""
    dst, src = args[0], args[1]
    if dst.op == "placeholder":
        from .errors import OnnxExporterError
        raise OnnxExporterError(f"ember.onnx.export: the model writes in place into its "
                                f"input or parameter '{dst.name}' (copy_), which ONNX "
                                "cannot express")
    out = _operand(ctx, src, _np_dtype(ctx.val(dst)))
    if tuple(ctx.val(src).shape) != tuple(ctx.val(dst).shape):
        out = ctx.b.op("Expand", [out, ctx.shape_of(dst)])
    return out


# ---------------------------------------------------------------- linear algebra
@symbolic("matmul", "mm", "bmm")
def _matmul(ctx, node, args):
    return ctx.b.op("MatMul", [ctx.v(args[0]), ctx.v(args[1])])


@symbolic("_scaled_dot_product_flash_attention_for_cpu")
def _sdpa_flash(ctx, node, args):
    """softmax(q k^T * scale [+ mask] [causal]) v as ONNX ops (opset 17 has no attention
    op); the logsumexp output is not exported. Grouped-query heads and a causal mask over a
    dynamic sequence length are not translated (None: UnsupportedOperatorError)."""
    q, k, v, dropout_p, causal, mask, scale = (list(args) + [None] * 7)[:7]
    qv, kv = ctx.val(q), ctx.val(k)
    if dropout_p or qv.shape[1] != kv.shape[1]:
        return None
    L, S, E = qv.shape[-2], kv.shape[-2], qv.shape[-1]
    if causal and not (is_static(L) and is_static(S)):
        return None
    dt = _np_dtype(qv)
    sc = float(scale) if scale is not None else 1.0 / math.sqrt(int(E))
    att = ctx.b.op("MatMul", [ctx.v(q), ctx.b.op("Transpose", [ctx.v(k)], perm=[0, 1, 3, 2])])
    att = ctx.b.op("Mul", [att, ctx.b.const(np.asarray(sc, dt))])
    ninf = ctx.b.const(np.asarray(-np.inf, dt))
    if mask is not None:
        if _np_dtype(ctx.val(mask)) == np.bool_:
            att = ctx.b.op("Where", [ctx.v(mask), att, ninf])
        else:
            att = ctx.b.op("Add", [att, _operand(ctx, mask, dt)])
    if causal:
        keep = np.tril(np.ones((int(L), int(S)), np.bool_))
        att = ctx.b.op("Where", [ctx.b.const(keep), att, ninf])
    out = ctx.b.op("MatMul", [ctx.b.op("Softmax", [att], axis=-1), ctx.v(v)])
    return [out, None]


@symbolic("linear")
def _linear(ctx, node, args):
    x, w, b = args[0], args[1], args[2] if len(args) > 2 else None
    if len(ctx.val(x).shape) == 2 and b is not None:
        return ctx.b.op("Gemm", [ctx.v(x), ctx.v(w), ctx.v(b)], transB=1)
    y = ctx.b.op("MatMul", [ctx.v(x), ctx.b.op("Transpose", [ctx.v(w)], perm=[1, 0])])
    return y if b is None else ctx.b.op("Add", [y, ctx.v(b)])


@symbolic("addmm")
def _addmm(ctx, node, args):
    if len(ctx.val(args[0]).shape) > 2:          # a self Gemm's C cannot take
        dt = _np_dtype(ctx.val(node))
        y = ctx.b.op("MatMul", [ctx.v(args[1]), ctx.v(args[2])])
        if args[4] != 1:
            y = ctx.b.op("Mul", [y, ctx.b.const(np.asarray(args[4], dt))])
        c = ctx.v(args[0])
        if args[3] != 1:
            c = ctx.b.op("Mul", [c, ctx.b.const(np.asarray(args[3], dt))])
        return ctx.b.op("Add", [c, y])
    return ctx.b.op("Gemm", [ctx.v(args[1]), ctx.v(args[2]), ctx.v(args[0])],
                    alpha=float(args[4]), beta=float(args[3]))


@symbolic("convolution")
def _convolution(ctx, node, args):
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = args
    if isinstance(padding, str):
        return None
    inputs = [ctx.v(x), ctx.v(w)] + ([ctx.v(b)] if b is not None else [])
    attrs = dict(strides=list(stride), pads=list(padding) * 2, dilations=list(dilation),
                 group=int(groups), kernel_shape=list(ctx.val(w).shape[2:]))
    if transposed:
        return ctx.b.op("ConvTranspose", inputs, output_padding=list(output_padding), **attrs)
    return ctx.b.op("Conv", inputs, **attrs)


# ---------------------------------------------------------------- normalization
def _ones_like_channel(ctx, node_val, n):
    return ctx.b.const(np.ones(n, dtype=_np_dtype(node_val)))


@symbolic("batch_norm")
def _batch_norm(ctx, node, args):
    x, w, b, rm, rv, training, _momentum, eps = args
    if training or rm is None or rv is None:
        return None                  # batch statistics: the decomposition computes them
    c = ctx.val(x).shape[1]
    dt = _np_dtype(ctx.val(x))
    scale = ctx.v(w) if w is not None else _ones_like_channel(ctx, ctx.val(x), c)
    bias = ctx.v(b) if b is not None else ctx.b.const(np.zeros(c, dtype=dt))
    return ctx.b.op("BatchNormalization", [ctx.v(x), scale, bias, ctx.v(rm), ctx.v(rv)],
                    epsilon=float(eps))


@symbolic("layer_norm")
def _layer_norm(ctx, node, args):
    x, shape, w, b, eps = args
    if ctx.b.opset < 17:
        return None
    scale = ctx.v(w) if w is not None else ctx.b.const(
        np.ones(tuple(shape), dtype=_np_dtype(ctx.val(x))))
    inputs = [ctx.v(x), scale] + ([ctx.v(b)] if b is not None else [])
    return ctx.b.op("LayerNormalization", inputs, axis=-len(shape), epsilon=float(eps))


# ---------------------------------------------------------------- pooling
def _pool_pads(padding, nd):
    p = list(padding) if isinstance(padding, (list, tuple)) else [padding]
    p = p * nd if len(p) == 1 else p
    return p * 2


def _pool_list(v, nd, default=None):
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
        v = default
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * nd if len(v) == 1 else v


@symbolic("max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
          "max_pool1d", "max_pool2d", "max_pool3d")
def _max_pool(ctx, node, args):
    x, k, s, p, d, ceil = args[:6]
    nd = len(ctx.val(x).shape) - 2
    k = _pool_list(k, nd)
    y = ctx.b.op("MaxPool", [ctx.v(x)], kernel_shape=k, strides=_pool_list(s, nd, k),
                 pads=_pool_pads(p, nd), dilations=_pool_list(d, nd), ceil_mode=int(ceil))
    if "with_indices" in node.target.name:
        return [y, None]              # ONNX's indices are not PyTorch's: unsupported if read
    return y


@symbolic("avg_pool1d", "avg_pool2d", "avg_pool3d")
def _avg_pool(ctx, node, args):
    x, k, s, p, ceil, include_pad = args[:6]
    if len(args) > 6 and args[6] is not None:
        return None
    nd = len(ctx.val(x).shape) - 2
    k = _pool_list(k, nd)
    return ctx.b.op("AveragePool", [ctx.v(x)], kernel_shape=k, strides=_pool_list(s, nd, k),
                    pads=_pool_pads(p, nd), ceil_mode=int(ceil),
                    count_include_pad=int(include_pad))


@symbolic("_adaptive_avg_pool2d", "adaptive_avg_pool1d", "_adaptive_avg_pool3d")
def _adaptive_avg_pool(ctx, node, args):
    x, out = args[0], list(args[1])
    spatial = list(ctx.val(x).shape[2:])
    if all(o == 1 for o in out):
        return ctx.b.op("GlobalAveragePool", [ctx.v(x)])
    if all(is_static(i) and i % o == 0 for i, o in zip(spatial, out)):
        k = [i // o for i, o in zip(spatial, out)]
        return ctx.b.op("AveragePool", [ctx.v(x)], kernel_shape=k, strides=k)
    return None


# ---------------------------------------------------------------- reductions
def _axes(dims, ndim):
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(ndim))
    dims = [dims] if isinstance(dims, int) else list(dims)
    return [d % ndim if ndim else 0 for d in dims]


@symbolic("sum", "mean")
def _sum_mean(ctx, node, args):
    x, dims, keepdim = args[0], args[1], args[2]
    dtype = args[3] if len(args) > 3 else None
    name = ctx.v(x)
    out_dt = _np_dtype(ctx.val(node))
    if dtype is not None or _np_dtype(ctx.val(x)) != out_dt:
        name = ctx.b.op("Cast", [name], to=onnx_dtype(out_dt))
    axes = _axes(dims, len(ctx.val(x).shape))
    if node.target.name == "sum":
        return ctx.b.op("ReduceSum", [name, ctx.b.ints(axes)], keepdims=int(keepdim))
    if ctx.b.opset >= 18:
        return ctx.b.op("ReduceMean", [name, ctx.b.ints(axes)], keepdims=int(keepdim))
    return ctx.b.op("ReduceMean", [name], axes=axes, keepdims=int(keepdim))


@symbolic("amax", "amin")
def _amax(ctx, node, args):
    x, dims, keepdim = args[0], args[1], args[2]
    axes = _axes(dims, len(ctx.val(x).shape))
    op = "ReduceMax" if node.target.name == "amax" else "ReduceMin"
    if ctx.b.opset >= 18:
        return ctx.b.op(op, [ctx.v(x), ctx.b.ints(axes)], keepdims=int(keepdim))
    return ctx.b.op(op, [ctx.v(x)], axes=axes, keepdims=int(keepdim))


@symbolic("argmax", "argmin")
def _argmax(ctx, node, args):
    x, dim, keepdim = args[0], args[1], args[2]
    name = ctx.v(x)
    if dim is None:
        name, dim = ctx.b.op("Reshape", [name, ctx.b.ints([-1])]), 0
    op = "ArgMax" if node.target.name == "argmax" else "ArgMin"
    return ctx.b.op(op, [name], axis=int(dim), keepdims=int(keepdim),
                    select_last_index=0)


# ---------------------------------------------------------------- shapes and views
@symbolic("view", "_reshape_copy", "reshape", "_unsafe_view")
def _reshape(ctx, node, args):
    return ctx.b.op("Reshape", [ctx.v(args[0]), ctx.sizes(args[1], reshape=True)])


@symbolic("expand")
def _expand(ctx, node, args):
    sizes = [1 if isinstance(s, int) and s == -1 else s for s in args[1]]
    return ctx.b.op("Expand", [ctx.v(args[0]), ctx.sizes(sizes)])


@symbolic("permute")
def _permute(ctx, node, args):
    nd = len(ctx.val(args[0]).shape)
    return ctx.b.op("Transpose", [ctx.v(args[0])], perm=[d % nd for d in args[1]])


@symbolic("transpose")
def _transpose(ctx, node, args):
    nd = len(ctx.val(args[0]).shape)
    perm = list(range(nd))
    a, b = args[1] % nd, args[2] % nd
    perm[a], perm[b] = perm[b], perm[a]
    return ctx.b.op("Transpose", [ctx.v(args[0])], perm=perm)


@symbolic("select")
def _select(ctx, node, args):
    x, dim, index = args
    return ctx.b.op("Gather", [ctx.v(x), ctx.scalar_int(index)], axis=int(dim))


@symbolic("slice")
def _slice(ctx, node, args):
    x, dim, start, end, step = args
    start = 0 if start is None else start
    end = INT64_MAX if end is None else end
    if isinstance(end, int):
        end = min(end, INT64_MAX)
    return ctx.b.op("Slice", [ctx.v(x), ctx.sizes([start]), ctx.sizes([end]),
                              ctx.b.ints([dim]), ctx.b.ints([step])])


@symbolic("unsqueeze")
def _unsqueeze(ctx, node, args):
    nd = len(ctx.val(args[0]).shape) + 1
    return ctx.b.op("Unsqueeze", [ctx.v(args[0]), ctx.b.ints([args[1] % nd])])


@symbolic("squeeze")
def _squeeze(ctx, node, args):
    shape = ctx.val(args[0]).shape
    nd = len(shape)
    dims = args[1] if len(args) > 1 else None
    dims = range(nd) if dims is None else ([dims] if isinstance(dims, int) else dims)
    dims = sorted({d % nd for d in dims if shape[d % nd] == 1}) if nd else []
    if not dims:
        return ctx.b.op("Identity", [ctx.v(args[0])])
    return ctx.b.op("Squeeze", [ctx.v(args[0]), ctx.b.ints(dims)])


@symbolic("cat", "concat", "concatenate")
def _cat(ctx, node, args):
    dt = _np_dtype(ctx.val(node))
    ts = [t for t in args[0] if tuple(ctx.val(t).shape) != (0,)]
    nd = len(ctx.val(node).shape)
    return ctx.b.op("Concat", [_operand(ctx, t, dt) for t in ts], axis=int(args[1]) % nd)


@symbolic("stack")
def _stack(ctx, node, args):
    nd = len(ctx.val(node).shape)
    d = int(args[1]) % nd
    parts = [ctx.b.op("Unsqueeze", [ctx.v(t), ctx.b.ints([d])]) for t in args[0]]
    return ctx.b.op("Concat", parts, axis=d)


@symbolic("split_with_sizes")
def _split_with_sizes(ctx, node, args):
    x, sizes, dim = args
    nd = len(ctx.val(x).shape)
    return ctx.b.op("Split", [ctx.v(x), ctx.sizes(sizes)], n_out=len(sizes),
                    axis=int(dim) % nd)


@symbolic("unbind")
def _unbind(ctx, node, args):
    x, dim = args
    shape = ctx.val(x).shape
    d = int(dim) % len(shape)
    n = int(shape[d])
    parts = ctx.b.op("Split", [ctx.v(x), ctx.b.ints([1] * n)], n_out=n, axis=d)
    parts = parts if n > 1 else [parts]
    return [ctx.b.op("Squeeze", [p, ctx.b.ints([d])]) for p in parts]


@symbolic("embedding")
def _embedding(ctx, node, args):
    return ctx.b.op("Gather", [ctx.v(args[0]), ctx.v(args[1])], axis=0)


@symbolic("index_select")
def _index_select(ctx, node, args):
    return ctx.b.op("Gather", [ctx.v(args[0]), ctx.v(args[2])], axis=int(args[1]))


@symbolic("gather")
def _gather(ctx, node, args):
    return ctx.b.op("GatherElements", [ctx.v(args[0]), ctx.v(args[2])], axis=int(args[1]))


@symbolic("native_dropout", "dropout", "feature_dropout", "alpha_dropout")
def _dropout(ctx, node, args):
    """Export is in inference mode: dropout is the identity."""
    y = ctx.b.op("Identity", [ctx.v(args[0])])
    if node.target.name == "native_dropout":
        return [y, None]
    return y


@symbolic("pad", "constant_pad_nd")
def _constant_pad(ctx, node, args):
    x, pad = args[0], list(args[1])
    mode = args[2] if node.target.name == "pad" and len(args) > 2 else "constant"
    value = args[-1] if node.target.name == "constant_pad_nd" or len(args) > 3 else 0
    if mode != "constant":
        return None
    nd = len(ctx.val(x).shape)
    begins, ends = [0] * nd, [0] * nd
    for i in range(len(pad) // 2):
        begins[nd - 1 - i], ends[nd - 1 - i] = pad[2 * i], pad[2 * i + 1]
    dt = _np_dtype(ctx.val(x))
    v = ctx.b.const(np.asarray(value or 0, dtype=dt))
    return ctx.b.op("Pad", [ctx.v(x), ctx.b.ints(begins + ends), v], mode="constant")



# ---------------------------------------------------------------- factories
@symbolic("full", "empty")
def _full(ctx, node, args):
    """A filled tensor: ConstantOfShape (its sizes may be symbolic)."""
    from onnx import helper
    out = ctx.val(node)
    dt = _np_dtype(out)
    value = 0 if node.target.name == "empty" else args[1]
    tensor = helper.make_tensor("value", onnx_dtype(dt), [1],
                                np.asarray([value], dtype=dt).tolist())
    return ctx.b.op("ConstantOfShape", [ctx.sizes(args[0])], value=tensor)


@symbolic("arange")
def _arange(ctx, node, args):
    start, step, n = args[0], args[1], args[2]
    dt = _np_dtype(ctx.val(node))
    if isinstance(n, int) and isinstance(start, (int, float)) and isinstance(step, (int, float)):
        return ctx.b.const(start + step * np.arange(n, dtype=np.float64), dtype=dt) \
            if dt.kind == "f" else ctx.b.const(start + step * np.arange(n), dtype=dt)
    return None


# ---------------------------------------------------------------- more math
@symbolic("expm1", "log1p")
def _expm1_log1p(ctx, node, args):
    dt = _np_dtype(ctx.val(node))
    x = _operand(ctx, args[0], dt)
    one = ctx.b.const(np.asarray(1, dt))
    if node.target.name == "expm1":
        return ctx.b.op("Sub", [ctx.b.op("Exp", [x]), one])
    return ctx.b.op("Log", [ctx.b.op("Add", [x, one])])


def _reduce(ctx, op, name, axes, keepdim):
    if ctx.b.opset >= 18:
        return ctx.b.op(op, [name, ctx.b.ints(axes)], keepdims=int(keepdim))
    return ctx.b.op(op, [name], axes=axes, keepdims=int(keepdim))


@symbolic("var")
def _var(ctx, node, args):
    x, dims, correction, keepdim = args
    shape = ctx.val(x).shape
    axes = _axes(dims, len(shape))
    if not all(is_static(shape[a]) for a in axes):
        return None
    n = int(np.prod([shape[a] for a in axes]))
    corr = 1 if correction is None else correction
    dt = _np_dtype(ctx.val(node))
    xv = _operand(ctx, x, dt)
    d = ctx.b.op("Sub", [xv, _reduce(ctx, "ReduceMean", xv, axes, True)])
    ss = ctx.b.op("ReduceSum", [ctx.b.op("Mul", [d, d]), ctx.b.ints(axes)],
                  keepdims=int(keepdim))
    return ctx.b.op("Div", [ss, ctx.b.const(np.asarray(max(n - corr, 0), dt))])


@symbolic("prod")
def _prod(ctx, node, args):
    x, dims, keepdim = args[0], args[1], args[2]
    dt = _np_dtype(ctx.val(node))
    return _reduce(ctx, "ReduceProd", _operand(ctx, x, dt), _axes(dims, len(ctx.val(x).shape)),
                   keepdim)


@symbolic("cumsum")
def _cumsum(ctx, node, args):
    dt = _np_dtype(ctx.val(node))
    nd = max(len(ctx.val(args[0]).shape), 1)
    return ctx.b.op("CumSum", [_operand(ctx, args[0], dt), ctx.b.const(
        np.asarray(int(args[1]) % nd, np.int64))])


@symbolic("topk")
def _topk(ctx, node, args):
    x, k, dim, largest, sorted_ = args
    nd = len(ctx.val(x).shape)
    return ctx.b.op("TopK", [ctx.v(x), ctx.sizes([k])], n_out=2, axis=int(dim) % nd,
                    largest=int(largest), sorted=int(sorted_))


@symbolic("index")
def _index(ctx, node, args):
    """x[idx] with one integer index tensor: Gather along its dim (several index tensors or
    a boolean mask take the decomposition, or are unsupported)."""
    x, indices, dims = args
    idx = [i for i in indices if i is not None]
    if len(idx) != 1 or len(dims) != 1 or ctx.val(idx[0]).dtype.is_floating_point:
        return None
    if _np_dtype(ctx.val(idx[0])).kind == "b":
        return None
    return ctx.b.op("Gather", [ctx.v(x), ctx.v(idx[0])], axis=int(dims[0]))
