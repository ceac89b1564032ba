"""torch.nn.parallel.data_parallel: DataParallel and its functional form, under their module
path (on a CPU-only machine both call the module directly, as PyTorch's do)."""
from . import DataParallel

__all__ = ["DataParallel", "data_parallel"]


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """torch.nn.parallel.data_parallel: with no accelerator devices, module(*inputs)."""
    if device_ids:
        raise NotImplementedError("data_parallel over devices is not supported by ember "
                                  "(CPU only)")
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
