"""ember.ao: PyTorch's torch.ao — quantization, quantized modules, pruning.

Submodules load on first access, so `import ember` does not pay for them.
"""
import importlib

_SUBMODULES = ("nn", "quantization", "pruning")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
