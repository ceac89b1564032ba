"""XNNPACKQuantizer: int8 symmetric weights, int8 affine activations, outputs observed.

Why: it is PyTorch 2.1's reference quantizer and the one its pt2e tutorials use; its
graph (q/dq around every conv, linear, add, ...) is what ember's int8 lowering
fuses. get_symmetric_quantization_config follows PyTorch's (activations int8
[-128, 127] with a HistogramObserver, weights int8 [-127, 127], eps 2**-12; QAT uses
FusedMovingAvgObsFakeQuantize; dynamic uses a PlaceholderObserver).
"""
import functools

import ember
from ..observer import (MinMaxObserver, MovingAverageMinMaxObserver,
                        MovingAveragePerChannelMinMaxObserver, PerChannelMinMaxObserver)
from ..fake_quantize import FusedMovingAvgObsFakeQuantize
from .quantizer import QuantizationSpec, Quantizer
from .xnnpack_quantizer_utils import (OP_TO_ANNOTATOR, QuantizationConfig, activation_spec,
                                      propagate_annotation)

__all__ = ["XNNPACKQuantizer", "get_symmetric_quantization_config"]


@functools.lru_cache
def get_symmetric_quantization_config(is_per_channel=False, is_qat=False, is_dynamic=False,
                                      act_qmin=-128, act_qmax=127, weight_qmin=-127,
                                      weight_qmax=127):
    """PyTorch's XNNPACK config: which observers and ranges for activations and weights."""
    act = activation_spec(ember.int8, act_qmin, act_qmax, is_qat, is_dynamic)
    w_qscheme = ember.per_channel_symmetric if is_per_channel else ember.per_tensor_symmetric
    w_ctr = MinMaxObserver
    if is_qat:
        w_ctr = FusedMovingAvgObsFakeQuantize
    elif is_per_channel:
        w_ctr = PerChannelMinMaxObserver
    w_extra = {"eps": 2 ** -12}
    if is_qat:
        w_extra["observer"] = MovingAverageMinMaxObserver \
            if w_qscheme == ember.per_tensor_symmetric else MovingAveragePerChannelMinMaxObserver
    weight = QuantizationSpec(dtype=ember.int8, quant_min=weight_qmin, quant_max=weight_qmax,
                              qscheme=w_qscheme, ch_axis=0, is_dynamic=False,
                              observer_or_fake_quant_ctr=w_ctr.with_args(**w_extra))
    return QuantizationConfig(act, None if is_dynamic else act, weight, None, is_qat)


class XNNPACKQuantizer(Quantizer):
    """Annotates conv/linear (+relu, +bn for QAT), add/mul (+relu), cat and pooling."""

    STATIC_QAT_ONLY_OPS = ["conv_bn_relu", "conv_bn", "conv_transpose_bn_relu",
                           "conv_transpose_bn"]
    STATIC_OPS = ["linear_relu", "linear", "conv_relu", "conv", "conv_transpose_relu",
                  "adaptive_avg_pool2d", "gru_io_only", "add_relu", "add", "mul_relu", "mul",
                  "cat"]
    DYNAMIC_OPS = ["linear"]

    def __init__(self):
        super().__init__()
        self.global_config = None
        self.operator_type_config = {}
        self.module_type_config = {}
        self.module_name_config = {}

    def set_global(self, quantization_config):
        self.global_config = quantization_config
        return self

    def set_operator_type(self, operator_type, quantization_config):
        self.operator_type_config[operator_type] = quantization_config
        return self

    def set_module_type(self, module_type, quantization_config):
        raise NotImplementedError(
            "XNNPACKQuantizer.set_module_type: ember's captured graph does not record "
            "nn_module_stack, so nodes cannot be selected by module type")

    def set_module_name(self, module_name, quantization_config):
        raise NotImplementedError(
            "XNNPACKQuantizer.set_module_name: ember's captured graph does not record "
            "nn_module_stack, so nodes cannot be selected by module name")

    def _annotate_all(self, model, config, names, filter_fn=None):
        if config is None:
            return
        for name in names:
            OP_TO_ANNOTATOR[name](model, config, filter_fn)

    def annotate(self, model):
        config = self.global_config
        if config is not None and config.input_activation is not None and \
                config.input_activation.is_dynamic:
            self._annotate_all(model, config, self.DYNAMIC_OPS)
        else:
            if config is not None and config.is_qat:
                self._annotate_all(model, config, self.STATIC_QAT_ONLY_OPS)
            self._annotate_all(model, config, self.STATIC_OPS)
        propagate_annotation(model)
        return model

    def validate(self, model):
        pass
