"""Annotators for the XNNPACK recipe (one per operator pattern) and the helpers
every quantizer uses to write annotations.

Why a table of annotators: XNNPACKQuantizer is "annotate these patterns in this
order" — the first pattern to claim a node wins (`_annotated`), so conv+relu is
annotated before conv alone. Patterns are matched on ember's captured ops: a
convolution is aten.convolution (its `transposed` flag tells conv from
conv_transpose), max pooling is max_pool2d_with_indices followed by getitem(0).
"""
from dataclasses import dataclass
from typing import NamedTuple, Optional

import ember
from ....fx import Node
from ..pt2e.utils import is_conv, is_linear, is_op, op_name
from .quantizer import (Q_ANNOTATION_KEY, QuantizationAnnotation, QuantizationSpec,
                        SharedQuantizationSpec)

__all__ = ["QuantizationConfig", "OperatorConfig", "OP_TO_ANNOTATOR", "get_input_act_qspec",
           "get_output_act_qspec", "get_weight_qspec", "get_bias_qspec",
           "propagate_annotation", "is_annotated", "mark_nodes_as_annotated"]


@dataclass(eq=True, frozen=True)
class QuantizationConfig:
    """The specs for an operator's activation input/output, weight and bias."""

    input_activation: Optional[QuantizationSpec]
    output_activation: Optional[QuantizationSpec]
    weight: Optional[QuantizationSpec]
    bias: Optional[QuantizationSpec]
    is_qat: bool = False


class OperatorConfig(NamedTuple):
    config: QuantizationConfig
    operators: list


OP_TO_ANNOTATOR = {}


def register_annotator(name):
    def deco(fn):
        OP_TO_ANNOTATOR[name] = fn
        return fn
    return deco


def is_annotated(nodes):
    """True when a quantizer already claimed any of `nodes`."""
    return any(n is not None and Q_ANNOTATION_KEY in n.meta
               and n.meta[Q_ANNOTATION_KEY]._annotated for n in nodes)


def mark_nodes_as_annotated(nodes):
    for n in nodes:
        if n is None:
            continue
        if Q_ANNOTATION_KEY not in n.meta:
            n.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation()
        n.meta[Q_ANNOTATION_KEY]._annotated = True


def activation_spec(dtype, quant_min, quant_max, is_qat, is_dynamic):
    """The activation spec of both built-in quantizers, PyTorch's choice of observer:
    HistogramObserver (static), PlaceholderObserver (dynamic), fused moving-average fake
    quant (QAT; a moving-average FakeQuantize for dynamic QAT), eps 2**-12."""
    from ..fake_quantize import FakeQuantize, FusedMovingAvgObsFakeQuantize
    from ..observer import HistogramObserver, MovingAverageMinMaxObserver, PlaceholderObserver
    extra = {"eps": 2 ** -12}
    if is_qat and is_dynamic:
        ctr = FakeQuantize
        extra["observer"] = MovingAverageMinMaxObserver.with_args(averaging_constant=1)
    elif is_qat:
        ctr = FusedMovingAvgObsFakeQuantize
    else:
        ctr = PlaceholderObserver if is_dynamic else HistogramObserver
    return QuantizationSpec(dtype=dtype, quant_min=quant_min, quant_max=quant_max,
                            qscheme=ember.per_tensor_affine, is_dynamic=is_dynamic,
                            observer_or_fake_quant_ctr=ctr.with_args(**extra))


def _per_tensor_act_qspec(config, field):
    spec = None if config is None else getattr(config, field)
    if spec is not None and spec.qscheme not in (ember.per_tensor_affine,
                                                 ember.per_tensor_symmetric):
        raise AssertionError(f"activation qscheme must be per tensor, got {spec.qscheme}")
    return spec


def get_input_act_qspec(config):
    return _per_tensor_act_qspec(config, "input_activation")


def get_output_act_qspec(config):
    return _per_tensor_act_qspec(config, "output_activation")


def get_weight_qspec(config):
    if config is None or config.weight is None:
        return None
    spec = config.weight
    if spec.qscheme not in (ember.per_tensor_symmetric, ember.per_channel_symmetric, None):
        raise ValueError(f"Unsupported quantization_spec {spec} for weight")
    return spec


def get_bias_qspec(config):
    if config is None or config.bias is None:
        return None
    if config.bias.dtype != ember.float32:
        raise AssertionError("Only float dtype for bias is supported for bias right now")
    return config.bias


def _passes(filter_fn, nodes):
    return filter_fn is None or all(filter_fn(n) for n in nodes)


def _weighted_inputs(node, config):
    """{activation: act spec, weight: weight spec, bias: bias spec} of a conv/linear."""
    act, weight = node.args[0], node.args[1]
    qmap = {act: get_input_act_qspec(config), weight: get_weight_qspec(config)}
    partition = [node, weight]
    bias = node.args[2] if len(node.args) > 2 else None
    if isinstance(bias, Node):
        qmap[bias] = get_bias_qspec(config)
        partition.append(bias)
    return qmap, partition


def _annotate_with_activation(gm, config, filter_fn, is_main, activations):
    """main op (conv/linear) followed by an activation: inputs on the main op, the
    output on the activation."""
    out = []
    for act in gm.graph.nodes:
        if not is_op(act, *activations):
            continue
        main = act.args[0]
        if not (isinstance(main, Node) and is_main(main)) or len(main.users) > 1:
            continue
        qmap, partition = _weighted_inputs(main, config)
        partition = [act] + partition
        if is_annotated(partition) or not _passes(filter_fn, partition):
            continue
        main.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(input_qspec_map=qmap,
                                                             _annotated=True)
        act.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            output_qspec=get_output_act_qspec(config), _annotated=True)
        mark_nodes_as_annotated(partition)
        out.append(partition)
    return out


def _annotate_alone(gm, config, filter_fn, is_main):
    out = []
    for node in gm.graph.nodes:
        if not is_main(node):
            continue
        qmap, partition = _weighted_inputs(node, config)
        if is_annotated(partition) or not _passes(filter_fn, partition):
            continue
        node.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            input_qspec_map=qmap, output_qspec=get_output_act_qspec(config), _annotated=True)
        mark_nodes_as_annotated(partition)
        out.append(partition)
    return out


def _conv(n):
    return is_conv(n)


def _conv_t(n):
    return is_conv(n, transposed=True)


@register_annotator("linear")
def _annotate_linear(gm, config, filter_fn=None):
    return _annotate_alone(gm, config, filter_fn, is_linear)


@register_annotator("linear_relu")
def _annotate_linear_relu(gm, config, filter_fn=None):
    return _annotate_with_activation(gm, config, filter_fn, is_linear, ("relu", "relu_"))


@register_annotator("conv")
def _annotate_conv(gm, config, filter_fn=None):
    return _annotate_alone(gm, config, filter_fn, _conv)


@register_annotator("conv_relu")
def _annotate_conv_relu(gm, config, filter_fn=None):
    return _annotate_with_activation(gm, config, filter_fn, _conv, ("relu", "relu_"))


@register_annotator("conv_transpose_relu")
def _annotate_conv_transpose_relu(gm, config, filter_fn=None):
    return _annotate_with_activation(gm, config, filter_fn, _conv_t, ("relu", "relu_"))


def _annotate_conv_bn(gm, config, filter_fn, is_main, with_relu):
    """conv -> batch_norm (-> relu): QAT keeps the BatchNorm (folded at convert), so the
    output observer goes after the BatchNorm or the relu."""
    out = []
    for bn in gm.graph.nodes:
        if not is_op(bn, "batch_norm"):
            continue
        conv = bn.args[0]
        if not (isinstance(conv, Node) and is_main(conv)) or len(conv.users) > 1:
            continue
        last = bn
        if with_relu:
            users = list(bn.users)
            if len(users) != 1 or not is_op(users[0], "relu", "relu_"):
                continue
            last = users[0]
        qmap, partition = _weighted_inputs(conv, config)
        partition = [last, bn] + partition if with_relu else [bn] + partition
        if is_annotated(partition) or not _passes(filter_fn, partition):
            continue
        conv.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(input_qspec_map=qmap,
                                                             _annotated=True)
        last.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            output_qspec=get_output_act_qspec(config), _annotated=True)
        mark_nodes_as_annotated(partition)
        out.append(partition)
    return out


@register_annotator("conv_bn")
def _annotate_conv_bn_plain(gm, config, filter_fn=None):
    return _annotate_conv_bn(gm, config, filter_fn, _conv, False)


@register_annotator("conv_bn_relu")
def _annotate_conv_bn_relu(gm, config, filter_fn=None):
    return _annotate_conv_bn(gm, config, filter_fn, _conv, True)


@register_annotator("conv_transpose_bn")
def _annotate_conv_transpose_bn(gm, config, filter_fn=None):
    return _annotate_conv_bn(gm, config, filter_fn, _conv_t, False)


@register_annotator("conv_transpose_bn_relu")
def _annotate_conv_transpose_bn_relu(gm, config, filter_fn=None):
    return _annotate_conv_bn(gm, config, filter_fn, _conv_t, True)


@register_annotator("adaptive_avg_pool2d")
def _annotate_adaptive_avg_pool2d(gm, config, filter_fn=None):
    """Always annotated: input shares the producer's observer when it has one, the
    output shares the input's."""
    out = []
    for pool in gm.graph.nodes:
        if not is_op(pool, "_adaptive_avg_pool2d", "adaptive_avg_pool2d"):
            continue
        if is_annotated([pool]) or not _passes(filter_fn, [pool]):
            continue
        x = pool.args[0]
        qa = x.meta.get(Q_ANNOTATION_KEY)
        in_spec = SharedQuantizationSpec(x) if qa is not None and qa._annotated and \
            qa.output_qspec is not None else get_input_act_qspec(config)
        pool.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            input_qspec_map={x: in_spec}, output_qspec=SharedQuantizationSpec((x, pool)),
            _annotated=True)
        out.append([pool])
    return out


_HISTC_UPPER_BOUND = 3.4028235e15


def _skippable_input(node, gm):
    """Inputs observers cannot take: non-float tensors, huge scalar constants."""
    if node.op == "get_attr":
        from ..pt2e.utils import get_attr_value
        t = get_attr_value(gm, node.target)
        if t.numel() == 1 and abs(float(t)) > _HISTC_UPPER_BOUND:
            return True
    val = node.meta.get("val")
    return not isinstance(val, ember.Tensor) or val.dtype != ember.float32


def _binary_inputs(node, gm, config):
    qmap = {}
    for a in node.args[:2]:
        if isinstance(a, Node):
            if _skippable_input(a, gm):
                return None
            qmap[a] = get_input_act_qspec(config)
    return qmap


def _annotate_binary_relu(gm, config, filter_fn, name):
    out = []
    for relu in gm.graph.nodes:
        if not is_op(relu, "relu", "relu_"):
            continue
        binary = relu.args[0]
        if not is_op(binary, name, name + "_") or len(binary.users) > 1:
            continue
        partition = [relu, binary]
        if is_annotated(partition) or not _passes(filter_fn, partition):
            continue
        qmap = _binary_inputs(binary, gm, config)
        if qmap is None:
            continue
        binary.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(input_qspec_map=qmap,
                                                               _annotated=True)
        relu.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            output_qspec=get_output_act_qspec(config), _annotated=True)
        out.append(partition + list(qmap))
    return out


def _annotate_binary(gm, config, filter_fn, name):
    out = []
    for binary in gm.graph.nodes:
        if not is_op(binary, name, name + "_"):
            continue
        if is_annotated([binary]) or not _passes(filter_fn, [binary]):
            continue
        qmap = _binary_inputs(binary, gm, config)
        if qmap is None:
            continue
        binary.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            input_qspec_map=qmap, output_qspec=get_output_act_qspec(config), _annotated=True)
        out.append([binary] + list(qmap))
    return out


@register_annotator("add_relu")
def _annotate_add_relu(gm, config, filter_fn=None):
    return _annotate_binary_relu(gm, config, filter_fn, "add")


@register_annotator("add")
def _annotate_add(gm, config, filter_fn=None):
    return _annotate_binary(gm, config, filter_fn, "add")


@register_annotator("mul_relu")
def _annotate_mul_relu(gm, config, filter_fn=None):
    return _annotate_binary_relu(gm, config, filter_fn, "mul")


@register_annotator("mul")
def _annotate_mul(gm, config, filter_fn=None):
    return _annotate_binary(gm, config, filter_fn, "mul")


@register_annotator("cat")
def _annotate_cat(gm, config, filter_fn=None):
    """All inputs and the output share the first input's observer."""
    out = []
    for cat in gm.graph.nodes:
        if not is_op(cat, "cat") or is_annotated([cat]) or not _passes(filter_fn, [cat]):
            continue
        inputs = cat.args[0]
        first = inputs[0]
        qmap = {first: get_input_act_qspec(config)}
        shared = SharedQuantizationSpec((first, cat))
        for x in inputs[1:]:
            qmap.setdefault(x, shared)
        cat.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            input_qspec_map=qmap, output_qspec=shared, _annotated=True)
        out.append([cat])
    return out


@register_annotator("gru_io_only")
def _annotate_gru_io_only(gm, config, filter_fn=None):
    """ember's capture inlines GRU into its gate ops: there is no GRU node to claim."""
    return []


# Ops whose output keeps the input's quantization parameters (PyTorch's list, in
# ember's captured op names).
_SHARE_OBS_OPS = ("relu", "hardtanh", "hardtanh_", "mean", "permute", "squeeze",
                  "_adaptive_avg_pool2d", "adaptive_avg_pool2d", "view", "reshape",
                  "_unsafe_view", "slice", "flatten", "max_pool2d")


def _source(node):
    """max_pool2d_with_indices -> getitem(0) acts as one max_pool2d."""
    if is_op(node, "getitem") and node.args[1] == 0 and \
            is_op(node.args[0], "max_pool2d_with_indices"):
        return node.args[0].args[0]
    if op_name(node) in _SHARE_OBS_OPS:
        return node.args[0]
    return None


def propagate_annotation(model):
    """Give shape and pooling ops that follow an observed output the same observer."""
    for n in model.graph.nodes:
        prev = _source(n)
        if not isinstance(prev, Node):
            continue
        qa = prev.meta.get(Q_ANNOTATION_KEY)
        if qa is None or qa.output_qspec is None:
            continue
        if Q_ANNOTATION_KEY in n.meta and n.meta[Q_ANNOTATION_KEY]._annotated:
            continue
        shared = SharedQuantizationSpec(prev)
        if is_op(n, "getitem"):
            pool = n.args[0]
            pool.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
                input_qspec_map={prev: shared}, _annotated=True)
            n.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(output_qspec=shared,
                                                              _annotated=True)
            continue
        n.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            input_qspec_map={prev: shared}, output_qspec=shared, _annotated=True)

