"""X86InductorQuantizer: PyTorch's recipe for int8 inference through the compiler.

Why this recipe differs from XNNPACK's: on x86 the int8 kernels fuse a conv/linear
with what follows (relu, add, add+relu), and write float results unless the next op
is int8 too. So conv/linear annotate only their inputs (uint8 activations
[0, 255], per-channel symmetric int8 weights); their outputs are quantized by the
consumer's input observer. "int8 in, int8 out" ops (max pooling, cat, average
pooling, flatten feeding a quantized op) are quantized only when every input comes
from a quantized pattern, and their output shares the input's observer.
"""
import functools
import warnings
from dataclasses import dataclass

import ember
from ....fx import Node
from ..fake_quantize import FusedMovingAvgObsFakeQuantize
from ..observer import MovingAveragePerChannelMinMaxObserver, PerChannelMinMaxObserver
from ..pt2e.utils import is_conv, is_linear, is_op
from .quantizer import (Q_ANNOTATION_KEY, QuantizationAnnotation, QuantizationSpec,
                        Quantizer, SharedQuantizationSpec)
from .xnnpack_quantizer_utils import (QuantizationConfig, activation_spec, get_bias_qspec,
                                      get_input_act_qspec, get_output_act_qspec,
                                      get_weight_qspec)

__all__ = ["X86InductorQuantizer", "get_default_x86_inductor_quantization_config"]

_CONV_UNARY = ("relu", "relu_", "hardtanh", "hardtanh_", "hardswish", "hardswish_", "silu",
               "silu_")
_LINEAR_UNARY = ("relu", "relu_", "leaky_relu", "leaky_relu_", "tanh", "tanh_", "gelu")


@dataclass
class _X86InductorQuantizationAnnotation(QuantizationAnnotation):
    """Also records whether the node ends a quantized pattern (its output may feed
    int8 consumers)."""

    _is_output_of_quantized_pattern: bool = False


@functools.lru_cache
def get_default_x86_inductor_quantization_config(is_qat=False, is_dynamic=False,
                                                 reduce_range=False):
    """uint8 affine activations (HistogramObserver; QAT: fused fake quant), int8
    per-channel symmetric weights; reduce_range for CPUs without VNNI."""
    act = activation_spec(ember.uint8, 0, 127 if reduce_range else 255, is_qat, is_dynamic)
    w_ctr = FusedMovingAvgObsFakeQuantize if is_qat else PerChannelMinMaxObserver
    extra = {"eps": 2 ** -12}
    if is_qat:
        extra["observer"] = MovingAveragePerChannelMinMaxObserver
    weight = QuantizationSpec(dtype=ember.int8, quant_min=-128, quant_max=127,
                              qscheme=ember.per_channel_symmetric, ch_axis=0,
                              is_dynamic=False,
                              observer_or_fake_quant_ctr=w_ctr.with_args(**extra))
    return QuantizationConfig(act, act, weight, None, is_qat)


def _annotated(n):
    qa = n.meta.get(Q_ANNOTATION_KEY) if isinstance(n, Node) else None
    return qa is not None and qa._annotated


def _any_annotated(nodes):
    return any(_annotated(n) for n in nodes)


def _mark(nodes):
    for n in nodes:
        if Q_ANNOTATION_KEY not in n.meta:
            n.meta[Q_ANNOTATION_KEY] = _X86InductorQuantizationAnnotation()
        n.meta[Q_ANNOTATION_KEY]._annotated = True


def _is_quantized_output(n):
    qa = n.meta.get(Q_ANNOTATION_KEY) if isinstance(n, Node) else None
    return bool(qa is not None and qa._annotated and
                getattr(qa, "_is_output_of_quantized_pattern", False))


def _only_user(node, pred):
    users = list(node.users)
    return users[0] if len(users) == 1 and pred(users[0]) else None


def _is_maxpool(n):
    """getitem(max_pool2d_with_indices(x), 0): ember's captured max_pool2d."""
    return is_op(n, "getitem") and n.args[1] == 0 and \
        is_op(n.args[0], "max_pool2d_with_indices")


def _is_int8_in_int8_out(n):
    return _is_maxpool(n) or is_op(n, "cat", "avg_pool2d", "_adaptive_avg_pool2d",
                                   "adaptive_avg_pool2d", "view", "flatten")


class X86InductorQuantizer(Quantizer):
    """Annotates conv (+bn for QAT) (+add) (+unary), linear (+unary), same-shape mul, and
    the int8 pass-through ops, as PyTorch's X86InductorQuantizer (not matmul, which its
    default recipe leaves out too)."""

    def __init__(self):
        super().__init__()
        self.global_config = None
        self.operator_type_qconfig = {}
        self.module_name_qconfig = {}

    def set_global(self, quantization_config):
        self.global_config = quantization_config
        return self

    def get_global_quantization_config(self):
        return self.global_config

    def set_module_name_qconfig(self, module_name, quantization_config):
        raise NotImplementedError(
            "X86InductorQuantizer.set_module_name_qconfig: ember's captured graph does "
            "not record nn_module_stack")

    def set_module_type_qconfig(self, module_type, quantization_config):
        raise NotImplementedError(
            "X86InductorQuantizer.set_module_type_qconfig: ember's captured graph does "
            "not record nn_module_stack")

    def _weighted(self, node, config, output):
        x, w = node.args[0], node.args[1]
        qmap = {x: get_input_act_qspec(config), w: get_weight_qspec(config)}
        bias = node.args[2] if len(node.args) > 2 else None
        if isinstance(bias, Node):
            qmap[bias] = get_bias_qspec(config)
        node.meta[Q_ANNOTATION_KEY] = _X86InductorQuantizationAnnotation(
            input_qspec_map=qmap, _annotated=True, _is_output_of_quantized_pattern=output)

    def _end(self, node, output_qspec=None, input_qspec_map=None):
        node.meta[Q_ANNOTATION_KEY] = _X86InductorQuantizationAnnotation(
            input_qspec_map=input_qspec_map or {}, output_qspec=output_qspec,
            _annotated=True, _is_output_of_quantized_pattern=True)

    def _binary_extra(self, main, binary):
        a, b = binary.args[0], binary.args[1]
        if a is main and isinstance(b, Node):
            return b
        if b is main and isinstance(a, Node):
            return a
        return None

    def _annotate_conv_or_linear(self, gm, config, is_main):
        """Longest pattern first: main+add+relu, main+add, main+unary, main alone."""
        if config.is_qat:
            self._annotate_qat_conv_bn(gm, config, is_main)
        for node in list(gm.graph.nodes):
            if not is_main(node) or _annotated(node):
                continue
            add = _only_user(node, lambda u: is_op(u, "add", "add_")) if is_conv(node) \
                else None
            extra = self._binary_extra(node, add) if add is not None else None
            if extra is not None:
                relu = _only_user(add, lambda u: is_op(u, "relu", "relu_"))
                self._weighted(node, config, False)
                add.meta[Q_ANNOTATION_KEY] = _X86InductorQuantizationAnnotation(
                    input_qspec_map={extra: get_input_act_qspec(config)}, _annotated=True,
                    _is_output_of_quantized_pattern=relu is None)
                if relu is not None:
                    self._end(relu)
                continue
            unaries = _CONV_UNARY if is_conv(node) else _LINEAR_UNARY
            unary = _only_user(node, lambda u: is_op(u, *unaries))
            if unary is not None and not _annotated(unary):
                self._weighted(node, config, False)
                self._end(unary)
                continue
            self._weighted(node, config, True)

    def _annotate_qat_conv_bn(self, gm, config, is_main):
        for bn in list(gm.graph.nodes):
            if not is_op(bn, "batch_norm"):
                continue
            conv = bn.args[0]
            if not (isinstance(conv, Node) and is_main(conv)) or len(conv.users) > 1 or \
                    _any_annotated([conv, bn]):
                continue
            self._weighted(conv, config, False)
            add = _only_user(bn, lambda u: is_op(u, "add", "add_"))
            extra = self._binary_extra(bn, add) if add is not None else None
            if extra is not None:
                relu = _only_user(add, lambda u: is_op(u, "relu", "relu_"))
                last = relu or add
                add.meta[Q_ANNOTATION_KEY] = _X86InductorQuantizationAnnotation(
                    input_qspec_map={extra: get_input_act_qspec(config)}, _annotated=True)
                _mark([bn])
                self._end(last, output_qspec=get_output_act_qspec(config),
                          input_qspec_map=dict(last.meta[Q_ANNOTATION_KEY].input_qspec_map)
                          if last is add else None)
                continue
            unary = _only_user(bn, lambda u: is_op(u, *_CONV_UNARY))
            last = unary or bn
            if unary is not None:
                _mark([bn])
            self._end(last, output_qspec=get_output_act_qspec(config))

    def _annotate_mul(self, gm, config):
        """mul of two same-shape tensors: both inputs quantized (int8 elementwise mul)."""
        for node in gm.graph.nodes:
            if not is_op(node, "mul") or _annotated(node):
                continue
            a, b = node.args[0], node.args[1]
            va, vb = (n.meta.get("val") if isinstance(n, Node) else None for n in (a, b))
            if not (isinstance(va, ember.Tensor) and isinstance(vb, ember.Tensor)) or \
                    tuple(va.shape) != tuple(vb.shape):
                continue
            qmap = {a: get_input_act_qspec(config), b: get_input_act_qspec(config)}
            self._end(node, input_qspec_map=qmap)

    def _annotate_propagation(self, gm, config):
        for node in gm.graph.nodes:
            if not _is_int8_in_int8_out(node) or _annotated(node):
                continue
            if _is_maxpool(node):
                pool, x = node.args[0], node.args[0].args[0]
                if not _is_quantized_output(x):
                    warnings.warn("The input of maxpool2d is not quantized, skip annotate "
                                  f"maxpool2d with config {config}.", stacklevel=2)
                    continue
                pool.meta[Q_ANNOTATION_KEY] = _X86InductorQuantizationAnnotation(
                    input_qspec_map={x: get_input_act_qspec(config)}, _annotated=True)
                self._end(node)
                continue
            if is_op(node, "cat"):
                inputs = node.args[0]
                if not all(_is_quantized_output(x) for x in inputs):
                    continue
                first = inputs[0]
                shared = SharedQuantizationSpec((first, node))
                qmap = {first: get_input_act_qspec(config)}
                for x in inputs[1:]:
                    qmap.setdefault(x, shared)
                self._end(node, input_qspec_map=qmap)
                continue
            if is_op(node, "view", "flatten") and node.users and not any(
                    is_conv(u) or is_linear(u) for u in node.users):
                continue
            x = node.args[0]
            if not _is_quantized_output(x):
                continue
            self._end(node, input_qspec_map={x: get_input_act_qspec(config)})

    def _annotate_outputs(self, gm):
        """int8-in-int8-out ops give their output the input's observer."""
        for node in gm.graph.nodes:
            if not _is_int8_in_int8_out(node) or not _is_quantized_output(node):
                continue
            qa = node.meta[Q_ANNOTATION_KEY]
            if _is_maxpool(node):
                pool = node.args[0]
                qa.output_qspec = SharedQuantizationSpec((pool.args[0], pool))
            else:
                x = node.all_input_nodes[0]
                qa.output_qspec = SharedQuantizationSpec((x, node))

    def annotate(self, model):
        config = self.global_config
        if config is not None:
            self._annotate_conv_or_linear(model, config, is_conv)
            self._annotate_conv_or_linear(model, config, is_linear)
            self._annotate_mul(model, config)
            self._annotate_propagation(model, config)
        self._annotate_outputs(model)
        return model

    def validate(self, model):
        pass
