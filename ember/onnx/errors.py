"""Exceptions of ember.onnx (torch.onnx.errors): the exporter's own error types, so a program
catching `torch.onnx.errors.UnsupportedOperatorError` catches ember's too."""

__all__ = ["OnnxExporterError", "UnsupportedOperatorError", "SymbolicValueError",
           "CheckerError"]


class OnnxExporterError(RuntimeError):
    """An error raised while exporting to ONNX."""


class UnsupportedOperatorError(OnnxExporterError):
    """The model uses an op that has no ONNX translation (and no decomposition to one)."""

    def __init__(self, name, version, supported_version=None):
        if supported_version is not None:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not "
                   f"supported. Support for this operator was added in version "
                   f"{supported_version}, try exporting with this version.")
        else:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not "
                   "supported: ember.onnx has no translation for it and it has no "
                   "decomposition into ops that have one.")
        super().__init__(msg)
        self.name = name


class SymbolicValueError(OnnxExporterError):
    """A value in the graph cannot be expressed in ONNX (e.g. a size computed in Python
    from symbolic sizes)."""


class CheckerError(OnnxExporterError):
    """onnx.checker rejected the exported model."""
