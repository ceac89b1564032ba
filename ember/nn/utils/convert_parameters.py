"""parameters_to_vector / vector_to_parameters (torch.nn.utils.convert_parameters)."""
from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """Flatten and concatenate the parameters into one vector (differentiable)."""
    from ...ops.shape import cat
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Point each parameter's data at its slice of `vec` (as PyTorch's `param.data = ...`)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
