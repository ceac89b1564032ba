"""prepare_pt2e / prepare_qat_pt2e / convert_pt2e: PyTorch 2 export quantization.

The flow (PyTorch 2.1's API): capture (ember._export.capture_pre_autograd_graph, or
ember.export.export(...).module()) -> prepare_pt2e(model, quantizer) inserts
observers where the quantizer's annotations say -> calibrate by calling the model ->
convert_pt2e(model) replaces observers with quantize/dequantize ops, int8 weights
folded in. The result is a GraphModule: it runs eagerly and under ember.compile,
whose int8 lowering fuses the dq -> conv/linear -> q patterns into int8 kernels.
"""
from ..._export._unlift import unlift_exported_program
from ...export._program import ExportedModule
from ...fx import GraphModule
from .pt2e import convert as _convert
from .pt2e.export_utils import _disallow_eval_train
from .pt2e.prepare import prepare as _prepare
from .pt2e.qat_utils import fold_conv_bn_qat, fuse_conv_bn_qat
from .pt2e.utils import fuse_conv_bn_

__all__ = ["prepare_pt2e", "prepare_qat_pt2e", "convert_pt2e"]


def _as_graph_module(model):
    if isinstance(model, ExportedModule):
        return unlift_exported_program(model._ep, root=model)
    if not isinstance(model, GraphModule):
        raise TypeError("prepare_pt2e: expected a GraphModule from "
                        "capture_pre_autograd_graph or export(...).module(), got "
                        f"{type(model).__name__}")
    return model


def prepare_pt2e(model, quantizer):
    """Fold BatchNorm into convs, let `quantizer` annotate, insert observers.

    Returns the observed GraphModule: call it on calibration data, then convert_pt2e."""
    model = _as_graph_module(model)
    meta = dict(getattr(model, "meta", {}) or {})
    fuse_conv_bn_(model)
    model = quantizer.transform_for_annotation(model)
    quantizer.annotate(model)
    quantizer.validate(model)
    model = _prepare(model, is_qat=False,
                     obs_or_fq_callback=quantizer.prepare_obs_or_fq_callback)
    model.meta = meta
    return _disallow_eval_train(model)


def prepare_qat_pt2e(model, quantizer):
    """Annotate, rewrite conv-bn into the QAT pattern, insert fake quantizers.

    Train the result (BatchNorm keeps training; move_exported_model_to_eval before
    evaluating), then convert_pt2e."""
    model = _as_graph_module(model)
    meta = dict(getattr(model, "meta", {}) or {})
    model = quantizer.transform_for_annotation(model)
    quantizer.annotate(model)
    quantizer.validate(model)
    fuse_conv_bn_qat(model)
    model = _prepare(model, is_qat=True,
                     obs_or_fq_callback=quantizer.prepare_obs_or_fq_callback)
    model.meta = meta
    return _disallow_eval_train(model)


def convert_pt2e(model, use_reference_representation=False, fold_quantize=True):
    """Observers -> quantize/dequantize ops; QAT conv-bn folded; weights quantized once
    into int8 attributes when fold_quantize (PyTorch 2.2+'s default)."""
    if not isinstance(use_reference_representation, bool):
        raise ValueError("Unexpected argument type for `use_reference_representation`, "
                         f"please make sure you intend to pass argument "
                         f"{use_reference_representation} to convert_pt2e")
    if use_reference_representation:
        raise NotImplementedError(
            "convert_pt2e(use_reference_representation=True): the integer reference "
            "representation rewrite is not implemented; the q/dq graph is the reference")
    meta = dict(getattr(model, "meta", {}) or {})
    _convert.convert_observers_to_qdq(model)
    fold_conv_bn_qat(model)
    _convert.duplicate_dq(model)
    if fold_quantize:
        _convert.fold_quantize(model)
    model.recompile()
    model = GraphModule(model, model.graph)
    model.meta = meta
    return _disallow_eval_train(model)
