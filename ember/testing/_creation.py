"""make_tensor: random test tensors with PyTorch's default value ranges per dtype."""
import math

import ember

__all__ = ["make_tensor"]

_FLOATS = (ember.float16, ember.bfloat16, ember.float32, ember.float64)
_COMPLEX = (ember.complex64, ember.complex128)
_INTS = (ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64)


def _ranges(dtype, low, high, default_low, default_high):
    if low is not None and high is not None and low > high:
        raise ValueError(f"`low` must be less than or equal to `high`, but got {low} > {high}")
    for name, v in (("low", low), ("high", high)):
        if v is not None and isinstance(v, float) and math.isnan(v):
            raise ValueError(f"`{name}` cannot be NaN, but got {name}=nan")
    info = ember.finfo(dtype) if dtype in _FLOATS + _COMPLEX else ember.iinfo(dtype)
    low = default_low if low is None else low
    high = default_high if high is None else high
    return max(low, info.min), min(high, info.max)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor filled with values uniformly drawn from [low, high) (ints: [low, high))."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple, ember.Size)):
        shape = tuple(shape[0])
    shape = tuple(shape)
    if requires_grad and dtype not in _FLOATS + _COMPLEX:
        raise ValueError(f"make_tensor: requires_grad must be False for integral dtype {dtype}")
    if dtype == ember.bool:
        result = ember.randint(0, 2, shape, device=device).to(ember.bool)
    elif dtype in _INTS:
        lo, hi = _ranges(dtype, low, high, -9, 10)
        if dtype == ember.uint8:
            lo = max(lo, 0)
        result = ember.randint(int(math.ceil(lo)), int(math.ceil(hi)) if hi != lo else
                               int(lo) + 1, shape, device=device, dtype=dtype)
    elif dtype in _FLOATS + _COMPLEX:
        lo, hi = _ranges(dtype, low, high, -9, 9)
        real = ember.float64
        result = ember.rand(shape, dtype=real, device=device) * (hi - lo) + lo
        if dtype in _COMPLEX:
            imag = ember.rand(shape, dtype=real, device=device) * (hi - lo) + lo
            result = ember.complex(result, imag)
        result = result.to(dtype)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor(). To request support, file an issue at: "
                        "https://github.com/pytorch/pytorch/issues")
    if noncontiguous and result.numel() > 1:
        result = ember.repeat_interleave(result, 2, dim=-1)
        result = result[..., ::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        if dtype in _INTS or dtype == ember.bool:
            replace = ember.ones((), dtype=dtype, device=device)
        else:
            replace = ember.full((), ember.finfo(dtype).tiny, dtype=dtype, device=device)
        result = ember.where(result == 0, replace.to(result.dtype), result)
    if dtype in _FLOATS + _COMPLEX:
        result.requires_grad_(requires_grad)
    return result
