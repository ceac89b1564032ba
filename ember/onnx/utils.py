"""torch.onnx.utils: the exporter's entry point under its old module path."""
from . import export, is_in_onnx_export

__all__ = ["export", "is_in_onnx_export"]
