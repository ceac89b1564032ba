"""torch.nn.parallel: DistributedDataParallel (and DataParallel, which on a machine
without accelerators simply runs the wrapped module, as PyTorch's does)."""
from ..modules.module import Module
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """With no CUDA devices PyTorch's DataParallel calls the module directly; so does this."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if device_ids:
            raise NotImplementedError("DataParallel over devices is not supported by ember "
                                      "(CPU only); use DistributedDataParallel")
        self.module = module
        self.device_ids = []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
