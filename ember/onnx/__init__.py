"""ember.onnx (torch.onnx): export a model to an ONNX file.

`export(model, args, f, ...)` captures the model's forward (ember.compile's full-graph
capture, in eval mode) and translates its registry ops into ONNX operators through the
`onnx` package (the `export` extra: pip install ember[export]); the result passes
onnx.checker. Differences from PyTorch: default input/output names are input_<i> and
output / output_<i>; `operator_export_type`, `custom_opsets` and `export_modules_as_functions`
are not supported; `dynamo=True` is accepted and exports the same way.
"""
import contextlib
import enum

from . import errors
from .errors import OnnxExporterError, UnsupportedOperatorError

__all__ = ["export", "errors", "is_in_onnx_export", "TrainingMode", "OperatorExportTypes",
           "OnnxExporterError", "UnsupportedOperatorError", "producer_name",
           "producer_version"]

producer_name = "ember"
producer_version = "0.1"
_IN_EXPORT = [False]


class TrainingMode(enum.IntEnum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


def is_in_onnx_export():
    """True while ember.onnx.export runs the model (torch.onnx.is_in_onnx_export)."""
    return _IN_EXPORT[0]


@contextlib.contextmanager
def _eval_mode(model, training):
    modules = list(model.modules()) if hasattr(model, "modules") else []
    saved = [m.training for m in modules]
    # in-place activations write into an intermediate: out-of-place is the same inference
    # graph, and keeps a dynamic batch dim symbolic (the capture specializes copy_'s sizes)
    inplace = [m for m in modules if getattr(m, "inplace", None) is True]
    if training == TrainingMode.TRAINING:
        raise NotImplementedError("ember.onnx.export: training=TrainingMode.TRAINING is not "
                                  "supported (ember exports inference graphs)")
    if training == TrainingMode.EVAL:
        for m in modules:
            m.training = False
    for m in inplace:
        m.inplace = False
    try:
        yield
    finally:
        for m in inplace:
            m.inplace = True
        for m, t in zip(modules, saved):
            m.training = t


def export(model, args=(), f=None, kwargs=None, *, export_params=True, verbose=False,
           training=TrainingMode.EVAL, input_names=None, output_names=None,
           operator_export_type=OperatorExportTypes.ONNX, opset_version=17,
           do_constant_folding=True, dynamic_axes=None, keep_initializers_as_inputs=None,
           custom_opsets=None, export_modules_as_functions=False, dynamo=False,
           **_ignored):
    """Exports `model(*args)` to ONNX and writes it to `f` (a path or binary file object).

    dynamic_axes maps an input/output name to the dims that stay symbolic ({0: "batch"} or
    [0]); every other size is fixed to the example's. Ops without an ONNX translation raise
    ember.onnx.errors.UnsupportedOperatorError naming the op."""
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise ImportError("ember.onnx.export needs the 'onnx' package: "
                          "pip install ember[export]") from None
    if operator_export_type != OperatorExportTypes.ONNX:
        raise NotImplementedError(f"ember.onnx.export: operator_export_type="
                                  f"{operator_export_type!r} is not supported")
    if custom_opsets:
        raise NotImplementedError("ember.onnx.export: custom_opsets is not supported")
    if f is None:
        raise TypeError("ember.onnx.export() missing the file argument 'f'")
    from ._export import export_model, save_model
    if kwargs:
        args = (tuple(args) if isinstance(args, (tuple, list)) else (args,)) + (dict(kwargs),)
    elif isinstance(args, tuple) and args and isinstance(args[-1], dict):
        pass
    _IN_EXPORT[0] = True
    try:
        with _eval_mode(model, training):
            proto = export_model(model, args, input_names=input_names,
                                 output_names=output_names, dynamic_axes=dynamic_axes,
                                 opset_version=opset_version, export_params=export_params,
                                 verbose=verbose)
    finally:
        _IN_EXPORT[0] = False
    save_model(proto, f)
    del do_constant_folding, keep_initializers_as_inputs, export_modules_as_functions, dynamo
