"""torch.masked's reductions and normalizations with `mask=`: masked-out elements act as the
operation's identity (0 for sum, -inf for amax, ...), as PyTorch defines them."""
import math

import ember
import ember.nn.functional as F

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax",
           "logaddexp", "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax",
           "softmin", "std", "sum", "var"]

_sum = sum


def _cast(input, dtype):
    return input if dtype is None or input.dtype == dtype else input.to(dtype)


def _mask(input, mask):
    if mask is None:
        return ember.ones(input.shape, dtype=ember.bool, device=input.device)
    if not isinstance(mask, ember.Tensor):
        mask = ember.tensor(mask)
    return mask.to(ember.bool).broadcast_to(input.shape)


def _dims(input, dim):
    if dim is None:
        return tuple(range(input.dim()))
    if isinstance(dim, int):
        return (dim,)
    return tuple(dim)


def _extreme(dtype, sign):
    if dtype.is_floating_point or dtype.is_complex:
        return sign * math.inf
    info = ember.iinfo(dtype)
    return info.max if sign > 0 else info.min


def _fill(input, mask, value):
    return ember.where(mask, input, ember.full_like(input, value))


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    x = _fill(input, _mask(input, mask), 0)
    return ember.sum(x, _dims(input, dim), keepdim=keepdim)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    x = _fill(input, _mask(input, mask), 1)
    for d in sorted((d % max(input.dim(), 1) for d in _dims(input, dim)), reverse=True):
        x = ember.prod(x, d, keepdim=True)
    if not keepdim:
        for d in sorted((d % max(input.dim(), 1) for d in _dims(input, dim)), reverse=True):
            x = x.squeeze(d) if x.dim() else x
    if input.dim() == 0:                              # still a product: bool/int -> int64
        x = ember.prod(x)
    return x


def cumsum(input, dim, *, dtype=None, mask=None):
    input = _cast(input, dtype)
    return ember.cumsum(_fill(input, _mask(input, mask), 0), dim)


def cumprod(input, dim, *, dtype=None, mask=None):
    input = _cast(input, dtype)
    return ember.cumprod(_fill(input, _mask(input, mask), 1), dim)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    x = _fill(input, _mask(input, mask), _extreme(input.dtype, -1))
    return ember.amax(x, _dims(input, dim), keepdim=keepdim)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    x = _fill(input, _mask(input, mask), _extreme(input.dtype, +1))
    return ember.amin(x, _dims(input, dim), keepdim=keepdim)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    x = _fill(input, _mask(input, mask), _extreme(input.dtype, -1))
    return ember.argmax(x, dim, keepdim=keepdim).to(input.dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    x = _fill(input, _mask(input, mask), _extreme(input.dtype, +1))
    return ember.argmin(x, dim, keepdim=keepdim).to(input.dtype)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    m = _mask(input, mask)
    dims = _dims(input, dim)
    total = ember.sum(_fill(input, m, 0), dims, keepdim=keepdim)
    count = ember.sum(m, dims, keepdim=keepdim)
    return total / count.to(total.dtype)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    x = _fill(input.to(input.dtype if input.is_floating_point() else ember.float32),
              _mask(input, mask), math.nan)
    return ember.nanmedian(x, dim, keepdim=keepdim).values


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Masked-out elements are the identity: -inf, or the integer dtype's minimum; the
    result keeps the input's dtype (integers round back, as torch.masked)."""
    input = _cast(input, dtype)
    floating = input.is_floating_point() or input.is_complex()
    identity = -math.inf if floating else ember.iinfo(input.dtype).min
    x = _fill(input, _mask(input, mask), identity)
    return ember.logsumexp(x, _dims(input, dim), keepdim=keepdim).to(input.dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    input, other = _cast(input, dtype), _cast(other, dtype)
    a = _fill(input, _mask(input, input_mask), -math.inf)
    b = _fill(other, _mask(other, other_mask), -math.inf)
    return ember.logaddexp(a, b)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    identity = math.inf if ord is not None and ord < 0 else 0
    x = _fill(input, _mask(input, mask), identity)
    return ember.linalg.vector_norm(x, ord if ord is not None else 2.0, _dims(input, dim),
                                    keepdim=keepdim)


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    return _var(input, dim, unbiased, correction, keepdim, dtype, mask)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    return _var(input, dim, unbiased, correction, keepdim, dtype, mask).sqrt()


def _var(input, dim, unbiased, correction, keepdim, dtype, mask):
    if unbiased is not None and correction is not None:
        raise RuntimeError("Only one of unbiased and correction may be given")
    if correction is None:
        correction = 0 if unbiased is False else 1
    input = _cast(input, dtype)
    if not (input.is_floating_point() or input.is_complex()):   # complex stays complex
        input = input.to(ember.get_default_dtype())
    m = _mask(input, mask)
    dims = _dims(input, dim)
    rdt = input.real.dtype if input.is_complex() else input.dtype   # counts are real
    count = ember.sum(m, dims, keepdim=True).to(rdt)
    centre = ember.sum(_fill(input, m, 0), dims, keepdim=True) / count
    dev = _fill(input - centre, m, 0)
    total = ember.sum(dev * dev.conj() if dev.is_complex() else dev * dev, dims,
                      keepdim=keepdim)
    if not keepdim:
        count = ember.sum(m, dims, keepdim=False).to(rdt)
    return total / (count - correction).clamp(min=0)


def softmax(input, dim, *, dtype=None, mask=None):
    input = _cast(input, dtype)
    return ember.softmax(_fill(input, _mask(input, mask), -math.inf), dim)


def log_softmax(input, dim, *, dtype=None, mask=None):
    input = _cast(input, dtype)
    return ember.log_softmax(_fill(input, _mask(input, mask), -math.inf), dim)


def softmin(input, dim, *, dtype=None, mask=None):
    input = _cast(input, dtype)
    return ember.softmax(-_fill(input, _mask(input, mask), math.inf), dim)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    input = _cast(input, dtype)
    x = _fill(input, _mask(input, mask), 0)
    return F.normalize(x, p=ord, dim=dim, eps=eps)
