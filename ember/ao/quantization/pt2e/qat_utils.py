"""Conv-BatchNorm for QAT: train through the folded, fake-quantized weight.

Note: PyTorch's QAT pattern, written as graph rewrites. For every annotated
conv -> batch_norm, prepare_qat_pt2e rewrites

    bn(conv(x, w, b))
into
    s = gamma / sqrt(running_var + eps)
    bn(conv(x, fq(w * s), None) / s + b)

so the weight fake quantizer sees the weight BatchNorm will be folded into, while
BatchNorm still trains on batch statistics (the division by s undoes the scaling in
exact arithmetic). convert_pt2e folds it away: w' = w * s (quantized with the fake
quantizer's parameters), b' = (b - running_mean) * s + beta, and the conv with
(w', b') replaces the whole pattern. Both rewrites work on ember's captured ops.
"""
import ember
from ....fx import Node
from ..quantizer.quantizer import Q_ANNOTATION_KEY, QuantizationAnnotation
from .utils import (DEQUANTIZE_OPS, QUANTIZE_OPS, fold_bn_weights, get_attr_value, is_op,
                    new_attr_name, set_attr_value)

__all__ = ["fuse_conv_bn_qat", "fold_conv_bn_qat"]

_MARK = "qat_conv_bn"


def _aten(name, overload="default"):
    return getattr(getattr(ember.ops.aten, name), overload)


def _channel_shape(ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return shape


def fuse_conv_bn_qat(gm):
    """Rewrite each annotated conv -> batch_norm as the QAT pattern above."""
    graph = gm.graph
    for bn in list(graph.nodes):
        if not is_op(bn, "batch_norm"):
            continue
        conv = bn.args[0]
        if not (is_op(conv, "convolution") and len(conv.users) == 1):
            continue
        qa = conv.meta.get(Q_ANNOTATION_KEY)
        w = conv.args[1]
        if qa is None or w not in qa.input_qspec_map:
            continue
        gamma, rv, eps = bn.args[1], bn.args[4], bn.args[7]
        if not isinstance(gamma, Node) or not isinstance(rv, Node):
            continue
        ndim = get_attr_value(gm, w.target).dim() if w.op == "get_attr" else 4
        transposed = bool(conv.args[6])
        w_shape = _channel_shape(ndim, 1 if transposed else 0)
        out_shape = _channel_shape(ndim, 1)
        bias = conv.args[2]
        with graph.inserting_before(conv):
            var_eps = graph.call_function(_aten("add", "Tensor"), (rv, eps))
            std = graph.call_function(_aten("sqrt"), (var_eps,))
            scale = graph.call_function(_aten("div", "Tensor"), (gamma, std))
            scale_w = graph.call_function(_aten("view"), (scale, w_shape))
            w_scaled = graph.call_function(_aten("mul", "Tensor"), (w, scale_w))
        args = list(conv.args)
        args[1], args[2] = w_scaled, None
        conv.args = tuple(args)
        with graph.inserting_after(conv):
            scale_o = graph.call_function(_aten("view"), (scale, out_shape))
        with graph.inserting_after(scale_o):
            unscaled = graph.call_function(_aten("div", "Tensor"), (conv, scale_o))
        last = unscaled
        if isinstance(bias, Node):
            with graph.inserting_after(unscaled):
                b_o = graph.call_function(_aten("view"), (bias, out_shape))
            with graph.inserting_after(b_o):
                last = graph.call_function(_aten("add", "Tensor"), (unscaled, b_o))
        bn.replace_input_with(conv, last)
        qmap = {(w_scaled if k is w else k): v for k, v in qa.input_qspec_map.items()
                if k is not bias}
        conv.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            input_qspec_map=qmap, output_qspec=qa.output_qspec,
            allow_implicit_sharing=qa.allow_implicit_sharing, _annotated=qa._annotated)
        bn.meta[_MARK] = True
    gm.recompile()
    return gm


def _weight_source(node):
    """From the conv's weight argument back to the `w * s` node (through dq/q)."""
    while isinstance(node, Node) and node.op == "call_function" and \
            node.target in DEQUANTIZE_OPS() + QUANTIZE_OPS():
        node = node.args[0]
    return node


def fold_conv_bn_qat(gm):
    """Fold each QAT conv-bn pattern into one conv with w' = w * s, b' as above."""
    graph = gm.graph
    for bn in list(graph.nodes):
        if not (is_op(bn, "batch_norm") and bn.meta.get(_MARK)):
            continue
        x = bn.args[0]
        bias_node = None
        if is_op(x, "add"):
            x, bias_node = x.args[0], x.args[1].args[0]
        conv = x.args[0]
        w_scaled = _weight_source(conv.args[1])
        w_node = w_scaled.args[0]
        vals = [None if a is None else get_attr_value(gm, a.target) for a in bn.args[1:5]]
        gamma, beta, rm, rv = vals
        b = get_attr_value(gm, bias_node.target) if bias_node is not None else None
        w = get_attr_value(gm, w_node.target)
        new_w, new_b = fold_bn_weights(w, b, rm, rv, bn.args[7], gamma, beta,
                                       transposed=bool(conv.args[6]))
        w_name = new_attr_name(gm, "_folded_weight_")
        b_name = new_attr_name(gm, "_folded_bias_")
        set_attr_value(gm, w_name, ember.nn.Parameter(new_w, False))
        set_attr_value(gm, b_name, ember.nn.Parameter(new_b, False))
        with graph.inserting_before(w_scaled):
            w_attr = graph.get_attr(w_name)
        with graph.inserting_before(conv):
            b_attr = graph.get_attr(b_name)
        w_attr.meta["val"], b_attr.meta["val"] = new_w, new_b
        w_scaled.replace_all_uses_with(w_attr)
        args = list(conv.args)
        args[2] = b_attr
        conv.args = tuple(args)
        bn.replace_all_uses_with(conv)
        graph.erase_node(bn)
    graph.eliminate_dead_code()
    gm.recompile()
    return gm
