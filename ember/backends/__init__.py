"""ember.backends: PyTorch's backend switches, as a CPU build reports them.

Each backend is a submodule (so `import torch.backends.cudnn as cudnn` works under
`ember run`). Their flags are plain module attributes that programs set
unconditionally; nothing reads the cudnn/mps/cuda ones because ember has neither backend.
"""
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
