"""torch.version: the build's version strings. ember is a CPU (NumPy) build: no CUDA, ROCm
or XPU toolkit versions, so those are None, as in PyTorch's CPU wheels."""
from typing import Optional

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = "0.1.0"
debug = False
cuda: Optional[str] = None
git_version = "unknown"
hip: Optional[str] = None
rocm: Optional[str] = None
xpu: Optional[str] = None
