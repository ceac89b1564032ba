"""The int8 lowering: dequantize -> linear/conv2d (-> relu/hardtanh) (-> quantize) patterns of
a pt2e-converted graph become one fused int8 op (ember.ops.onednn).

Why a graph pass before decomposition: convert_pt2e writes PyTorch 2.1's reference
representation — dequantize_per_tensor(x_q) and dequantize_per_channel(w_int8) feeding a
float linear/convolution, then an optional relu, then quantize_per_tensor. Run as written,
that is float math on dequantized copies (slower than the float model). Matched here,
while linear/relu/hardtanh are still whole ops, the chain becomes

    qconv2d_pointwise / qlinear_pointwise(x_q, x_scale, x_zp, w_int8, w_scales, w_zps,
                                          bias, ..., out_scale, out_zp, out_dtype, post op)

with int32 accumulation and per-channel requantization in C (ember/ao/quantization/
_kernels.py). A chain that ends without quantize (the last linear) uses the float32-output
variant. Anything unmatched keeps its quantize/dequantize ops, which decompose to plain
pointwise code. The fused ops are extern primitives, so the scheduler calls them whole.

A max pool between a dequantize and a quantize with the same parameters (x86's shared
qparams around max_pool2d) runs on the integers instead: dequantize is increasing, so
the max commutes with it, and quantize(dequantize(v)) is v.

`counters` counts what was fused (tests and benchmarks read it).
"""
import collections
import operator

import numpy as np

from .. import _dtype as D
from ..ops import quantized as Q
from ..ops import quantized_decomposed as QD
from .._tensor import Tensor
from ..ops._registry import REGISTRY

__all__ = ["fuse_int8", "counters"]

counters = collections.Counter()

_LINEAR, _CONV = REGISTRY["linear"], REGISTRY["convolution"]
_RELU, _HARDTANH = REGISTRY["relu"], REGISTRY["hardtanh"]
_MAXPOOL = REGISTRY["max_pool2d_with_indices"]
_VIEWS = tuple(REGISTRY[k] for k in ("view", "reshape", "flatten") if k in REGISTRY)
_QDTYPES = (D.uint8, D.int8)


def fuse_int8(gm):
    """Rewrite the int8-able patterns of `gm` in place; returns `gm`."""
    if not any(n.op == "call_function" and n.target in (QD.DEQUANTIZE_PER_TENSOR,
                                                         QD.DEQUANTIZE_PER_CHANNEL)
               for n in gm.graph.nodes):
        return gm
    before = len(gm.graph.nodes)
    changed = False
    for n in list(gm.graph.nodes):
        if n.op == "call_function" and n.target in (_LINEAR, _CONV):
            changed |= _fuse(gm, n)
        elif _call(n, QD.QUANTIZE_PER_TENSOR):
            changed |= _int_max_pool(gm, n)
    if changed or len(gm.graph.nodes) != before:     # (constants of an unmatched weight)
        gm.graph.eliminate_dead_code()
        gm.recompile()
    return gm


def _call(n, op):
    return hasattr(n, "op") and n.op == "call_function" and n.target is op and not n.kwargs


def _activation(gm, n, before):
    """(x_q, scale, zero_point) of a float32 dequantize_per_tensor with literal qparams,
    possibly seen through views (flatten before a linear): a view commutes with the
    elementwise dequantize, so it is replayed on x_q."""
    if hasattr(n, "op") and n.op == "call_function" and n.target in _VIEWS and not n.kwargs:
        inner = _activation(gm, n.args[0], before)
        if inner is None:
            return None
        xq, scale, zp = inner
        try:
            val = n.target(xq.meta["val"], *n.args[1:])
        except Exception:       # noqa: BLE001  (no value: leave the pattern alone)
            return None
        with gm.graph.inserting_before(before):
            view = gm.graph.call_function(n.target, (xq, *n.args[1:]))
        view.meta["val"] = val
        return view, scale, zp
    if not (hasattr(n, "op") and n.op == "call_function" and n.target is QD.DEQUANTIZE_PER_TENSOR):
        return None
    if not _float_out(n):
        return None
    q, scale, zp, qmin, qmax, dtype = n.args[:6]
    if dtype not in _QDTYPES or not _scalar(scale) or not _scalar(zp) \
            or not isinstance(q.meta.get("val"), Tensor):
        return None
    return q, scale, zp


def _float_out(dq):
    """Whether a dequantize gives float32 (its out_dtype, positional or keyword, is unset)."""
    k = 7 if dq.target is QD.DEQUANTIZE_PER_CHANNEL else 6
    out = dq.kwargs.get("out_dtype", dq.args[k] if len(dq.args) > k else None)
    return out in (None, D.float32)


def _scalar(v):
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def _weight(gm, n, out_channels):
    """(w_int8, scales node, zero points node) of a per-channel (axis 0) or per-tensor int8
    weight dequantize, or None."""
    if not hasattr(n, "op") or n.op != "call_function" or not _float_out(n):
        return None
    if n.target is QD.DEQUANTIZE_PER_CHANNEL:
        w, scales, zps, axis, _, _, dtype = n.args[:7]
        if dtype != D.int8 or axis != 0:
            return None
        if zps is None:
            zps = _const(gm, n, "_int8_zp", np.zeros(out_channels, np.int64))
        return w, scales, zps
    if n.target is QD.DEQUANTIZE_PER_TENSOR:
        w, scale, zp, _, _, dtype = n.args[:6]
        if dtype != D.int8 or not _scalar(scale) or not _scalar(zp):
            return None
        return (w, _const(gm, n, "_int8_scale", np.full(out_channels, scale, np.float32)),
                _const(gm, n, "_int8_zp", np.full(out_channels, zp, np.int64)))
    return None


def _const(gm, before, prefix, value):
    import ember
    from ..ao.quantization.pt2e.utils import add_attr_node
    return add_attr_node(gm, prefix, ember.from_numpy(value), before)


def _only_user(n):
    users = list(n.users)
    return users[0] if len(users) == 1 else None


def _post_op(y):
    """(last node, post op name, args) of an optional relu/hardtanh after y."""
    u = _only_user(y)
    if u is not None and _call(u, _RELU) and u.args[0] is y:
        return u, "relu", []
    if u is not None and _call(u, _HARDTANH) and u.args[0] is y and len(u.args) == 3 \
            and _scalar(u.args[1]) and _scalar(u.args[2]):
        return u, "hardtanh", [float(u.args[1]), float(u.args[2])]
    return y, "none", []


def _output_quant(last):
    """(quantize node, scale, zero point, dtype) of a full-range quantize_per_tensor that is
    the only user of `last`, or None."""
    q = _only_user(last)
    if q is None or not _call(q, QD.QUANTIZE_PER_TENSOR) or q.args[0] is not last:
        return None
    _, scale, zp, qmin, qmax, dtype = q.args[:6]
    if dtype not in _QDTYPES or not _scalar(scale) or not _scalar(zp):
        return None
    info = np.iinfo(dtype.np)
    if (qmin, qmax) != (info.min, info.max):
        return None
    return q, float(scale), int(zp), dtype


def _fuse(gm, n):
    val = n.meta.get("val")
    if val is None or val.dtype != D.float32:
        return False
    conv = n.target is _CONV
    if conv:
        if len(n.args) != 9 or n.kwargs or n.args[6] or len(n.args[3]) != 2 \
                or val.dim() != 4:
            return False
    elif n.kwargs or len(n.args) > 3:
        return False
    wt = _weight(gm, n.args[1], val.shape[1] if conv else val.shape[-1])
    bias = n.args[2] if len(n.args) > 2 else None
    if wt is None or _is_quantized_value(bias):
        return False
    act = _activation(gm, n.args[0], n)      # last: it adds nodes when it matches
    if act is None:
        return False
    (xq, sx, zx), (w, ws, wz) = act, wt
    last, post, post_args = _post_op(n)
    outq = _output_quant(last)
    if outq is not None:
        replaced, (so, zo, odt) = outq[0], outq[1:]
    else:
        replaced, so, zo, odt = last, 1.0, 0, D.float32
    head = (xq, float(sx), int(zx), w, ws, wz, bias)
    if conv:
        stride, padding, dilation, groups = n.args[3], n.args[4], n.args[5], n.args[8]
        op, name = Q.QCONV2D_POINTWISE, "qconv2d"
        args = head + (list(stride), list(padding), list(dilation), groups, so, zo, odt,
                       post, post_args, None)
    else:
        op, name = Q.QLINEAR_POINTWISE, "qlinear"
        args = head + (so, zo, odt, post, post_args, "")
    with gm.graph.inserting_before(replaced):
        new = gm.graph.call_function(op, args)
    new.meta["val"] = replaced.meta.get("val")
    replaced.replace_all_uses_with(new)
    counters[name + ("" if outq is not None else "_fp32_out")] += 1
    return True


def _is_quantized_value(b):
    """A bias that is itself dequantized (int32 bias) is left to the reference path."""
    return hasattr(b, "op") and b.op == "call_function" and b.target in (
        QD.DEQUANTIZE_PER_TENSOR, QD.DEQUANTIZE_PER_CHANNEL)


def _int_max_pool(gm, q):
    """quantize(max_pool2d(dequantize(x_q))) with one set of qparams -> max_pool2d(x_q)."""
    g = q.args[0]
    if not (hasattr(g, "op") and g.target is operator.getitem and g.args[1] == 0
            and len(g.users) == 1):
        return False
    pool = g.args[0]
    if not (hasattr(pool, "op") and pool.target is _MAXPOOL and not pool.kwargs
            and all(u is g or not u.users for u in pool.users)):    # indices unused
        return False
    dq = pool.args[0]
    if not (_call(dq, QD.DEQUANTIZE_PER_TENSOR) and _float_out(dq)
            and tuple(dq.args[1:6]) == tuple(q.args[1:6])):
        return False
    xq = dq.args[0]
    try:
        val = _MAXPOOL(xq.meta["val"], *pool.args[1:])
    except Exception:       # noqa: BLE001  (no value: leave the pattern alone)
        return False
    with gm.graph.inserting_before(q):
        new_pool = gm.graph.call_function(_MAXPOOL, (xq, *pool.args[1:]))
        new = gm.graph.call_function(operator.getitem, (new_pool, 0))
    new_pool.meta["val"], new.meta["val"] = val, val[0]
    q.replace_all_uses_with(new)
    counters["max_pool2d_int8"] += 1
    return True
