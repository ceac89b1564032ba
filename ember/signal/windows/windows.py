"""Window functions (torch.signal.windows), built from ember.linspace and pointwise ops so
they follow PyTorch's definitions, dtype checks and error messages."""
import math
from collections.abc import Iterable

import ember

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _window_function_checks(function_name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{function_name} requires non-negative window length, got M={M}")
    if layout != ember.strided:
        raise ValueError(f"{function_name} is implemented for strided tensors only, "
                         f"got: {layout}")
    if dtype not in [ember.float32, ember.float64]:
        raise ValueError(f"{function_name} expects float32 or float64 dtypes, got: {dtype}")


def _prepare(name, M, dtype, layout):
    dtype = ember.get_default_dtype() if dtype is None else dtype
    layout = ember.strided if layout is None else layout
    _window_function_checks(name, M, dtype, layout)
    return dtype


def _empty(dtype, device, requires_grad):
    return ember.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)


def _ones(dtype, device, requires_grad):
    return ember.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)


def _linspace(start, end, M, dtype, device, requires_grad):
    return ember.linspace(start, end, M, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None,
                device=None, requires_grad=False):
    dtype = _prepare("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = _linspace(-center * constant, (-center + (M - 1)) * constant, M, dtype, device,
                  requires_grad)
    return ember.exp(-ember.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    dtype = _prepare("cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _linspace(start * constant, (start + (M - 1)) * constant, M, dtype, device,
                  requires_grad)
    return ember.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    dtype = _prepare("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _linspace(start * constant, (start + (M - 1)) * constant, M, dtype, device,
                  requires_grad)
    return ember.exp(-k ** 2)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    dtype = _prepare("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _ones(dtype, device, requires_grad)
    beta_t = ember.tensor(beta, dtype=dtype, device=device)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = min(beta, start + (M - 1) * constant)
    k = _linspace(start, end, M, dtype, device, requires_grad)
    return ember.i0(ember.sqrt(beta_t * beta_t - ember.pow(k, 2))) / ember.i0(beta_t)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    dtype = _prepare("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    dtype = _prepare("bartlett", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _ones(dtype, device, requires_grad)
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = _linspace(start, start + (M - 1) * constant, M, dtype, device, requires_grad)
    return 1 - ember.abs(k)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    dtype = _prepare("general_cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _ones(dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _linspace(0, (M - 1) * constant, M, dtype, device, requires_grad)
    a_i = ember.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                       requires_grad=requires_grad)
    i = ember.arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device)
    return (a_i.unsqueeze(-1) * ember.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
