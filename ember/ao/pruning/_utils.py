"""torch.ao.pruning.sparsifier.utils: naming helpers and the FakeSparsity parametrization."""
from ... import nn

__all__ = ["module_to_fqn", "fqn_to_module", "get_arg_info_from_tensor_fqn", "FakeSparsity"]


def module_to_fqn(model, module, prefix=""):
    """The dotted name of `module` inside `model` ('' for the model), or None."""
    if module is model:
        return ""
    for name, child in model.named_children():
        fqn = module_to_fqn(child, module, ".")
        if isinstance(fqn, str):
            return prefix + name + fqn
    return None


def fqn_to_module(model, path):
    """The module or tensor at dotted `path` (None if there is none)."""
    if path != "":
        for name in path.split("."):
            model = getattr(model, name, None)
    return model


def get_arg_info_from_tensor_fqn(model, tensor_fqn):
    """{'module_fqn', 'module', 'tensor_name', 'tensor_fqn'} of a tensor's dotted name."""
    tensor_name = tensor_fqn.rsplit(".", maxsplit=1)[-1]
    module_fqn = tensor_fqn[: -len(tensor_name) - ("." in tensor_fqn)]
    return {"module_fqn": module_fqn, "module": fqn_to_module(model, module_fqn),
            "tensor_name": tensor_name, "tensor_fqn": tensor_fqn}


class FakeSparsity(nn.Module):
    """Parametrization weight -> mask * weight; the mask is a buffer updated in place (its
    identity must not change) and is left out of the state dict, as PyTorch's."""

    def __init__(self, mask):
        super().__init__()
        self.register_buffer("mask", mask)

    def forward(self, x):
        if tuple(self.mask.shape) != tuple(x.shape):
            raise AssertionError(f"mask shape ({self.mask.shape}) must match x shape "
                                 f"({x.shape})")
        return self.mask * x

    def state_dict(self, *args, **kwargs):
        return {}
