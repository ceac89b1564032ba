"""Activation functions of nn.functional (relu ... softshrink, glu, prelu, rrelu).

Note: where PyTorch has a native kernel (gelu, silu, mish, hardswish, hardsigmoid, elu,
leaky_relu, softplus, hardtanh, threshold, log_sigmoid, hardshrink, softshrink, glu,
prelu) the op is one fused registry op: a NumPy kernel, a `decomp=` in ember ops (the
registry test checks they agree) and a vjp in ember ops with PyTorch's derivative
(including its choices at the kinks), so double backward works. PyTorch's own
composites (tanhshrink, softsign, relu6 = hardtanh(0, 6), selu/celu = elu with scales,
rrelu) are compositions here too. `inplace=True` commits through the in-place
machinery (version counter, autograd rebase), like `x.relu_()`.
"""
import math

import numpy as np

from ... import _dtype as D
from ..._dispatch import dispatch
from ..._tensor import Tensor, _wrap_dim
from ...ops._elementwise import pointwise, inplace, DEFAULT
from ...ops._registry import register
from ...ops import pointwise as _pw
from ...ops.indexing import where as _where

__all__ = ["threshold", "threshold_", "relu", "relu_", "hardtanh", "hardtanh_", "relu6",
           "elu", "elu_", "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_",
           "prelu", "rrelu", "rrelu_", "glu", "gelu", "logsigmoid", "hardshrink",
           "tanhshrink", "softsign", "softplus", "tanh", "sigmoid", "hardsigmoid", "silu",
           "mish", "hardswish", "softshrink"]

FLOAT = {2}
_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _fused(name, kernel, decomp, vjp, allowed=FLOAT, arity=1, **kw):
    """A fused pointwise activation (tags pointwise + composite)."""
    return pointwise(name, kernel, arity, DEFAULT, vjp=vjp, decomp=decomp, allowed=allowed,
                     tags=("pointwise", "composite"), **kw)


def _sp():
    import scipy.special
    return scipy.special


def _run(op, input, args, inplace_=False):
    """Out of place through dispatch, or in place through the in-place machinery."""
    if inplace_:
        return inplace(op, input, (input,) + args)
    return dispatch(op, (input,) + args)


# ------------------------------------------------------------------------- gelu

def _gelu_kernel(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(_SQRT_2_PI * (x + 0.044715 * x ** 3)))
    r = 0.5 * x * (1 + _sp().erf(x / math.sqrt(2.0)))
    if r.size > 1 and r.dtype.kind == "f" and not np.isfinite(np.max(x)):   # a cheap probe
        np.putmask(r, np.isposinf(x), np.nan)   # PyTorch's vectorized kernel gives NaN at +inf
    return r


def _gelu_decomp(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + (_SQRT_2_PI * (x + 0.044715 * x ** 3)).tanh())
    return 0.5 * x * (1 + (x / math.sqrt(2.0)).erf())


def _gelu_vjp(ctx, g):
    x, approximate = ctx.args
    if approximate == "tanh":
        inner = _SQRT_2_PI * (x + 0.044715 * x ** 3)
        t = inner.tanh()
        d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _SQRT_2_PI * (1 + 3 * 0.044715 * x * x)
    else:
        d = 0.5 * (1 + (x / math.sqrt(2.0)).erf()) + x * (-0.5 * x * x).exp() * _INV_SQRT_2PI
    return g * d, None


GELU = _fused("gelu", _gelu_kernel, _gelu_decomp, _gelu_vjp,
              schema='gelu(Tensor self, *, str approximate="none") -> Tensor')


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return dispatch(GELU, (input, approximate))


# -------------------------------------------------------- silu, mish, hard*, logsigmoid

def _sigmoid_np(x):
    return _pw._sigmoid(np.asarray(x))


def _silu_vjp(ctx, g):
    x = ctx.args[0]
    s = x.sigmoid()
    d = s * (1 + x * (1 - s))
    return (g * (d.conj() if x.is_complex() else d),)


SILU = _fused("silu", lambda x: x * _sigmoid_np(x), lambda x: x * x.sigmoid(), _silu_vjp,
              allowed={2, 3}, schema="silu(Tensor self) -> Tensor")   # complex too (PyTorch)


def _softplus_np(x):
    return np.logaddexp(x, 0)


def _mish_vjp(ctx, g):
    x = ctx.args[0]
    t = _softplus_decomp(x, 1, 20).tanh()
    return (g * (t + x * x.sigmoid() * (1 - t * t)),)


MISH = _fused("mish", lambda x: x * np.tanh(_softplus_np(x)),
              lambda x: x * _softplus_decomp(x, 1, 20).tanh(), _mish_vjp,
              schema="mish(Tensor self) -> Tensor")


def _hardswish_vjp(ctx, g):
    x = ctx.args[0]
    d = (x / 3 + 0.5) * ((x >= -3) & (x <= 3)) + (x > 3)
    return (g * d,)


HARDSWISH = _fused("hardswish", lambda x: x * np.clip(x + 3, 0, 6) / 6,
                   lambda x: x * (x + 3).clamp(0, 6) / 6, _hardswish_vjp,
                   schema="hardswish(Tensor self) -> Tensor")


def _hardsigmoid_vjp(ctx, g):
    x = ctx.args[0]
    return (g * ((x > -3) & (x < 3)) / 6,)


HARDSIGMOID = _fused("hardsigmoid", lambda x: np.clip(x + 3, 0, 6) / 6,
                     lambda x: (x + 3).clamp(0, 6) / 6, _hardsigmoid_vjp,
                     schema="hardsigmoid(Tensor self) -> Tensor")


def _log_sigmoid_vjp(ctx, g):
    return (g * (-ctx.args[0]).sigmoid(),)


LOG_SIGMOID = _fused("log_sigmoid", lambda x: 0 - np.logaddexp(0, -x),     # +0.0 at +inf
                     lambda x: -(-x).logaddexp(x.new_zeros(())), _log_sigmoid_vjp,
                     schema="log_sigmoid(Tensor self) -> Tensor")


def silu(input, inplace=False):
    return _run(SILU, input, (), inplace)


def mish(input, inplace=False):
    return _run(MISH, input, (), inplace)


def hardswish(input, inplace=False):
    return _run(HARDSWISH, input, (), inplace)


def hardsigmoid(input, inplace=False):
    return _run(HARDSIGMOID, input, (), inplace)


def logsigmoid(input):
    return dispatch(LOG_SIGMOID, (input,))


# ---------------------------------------------------------------- elu, selu, celu

def _elu_kernel(x, alpha, scale, input_scale):
    # minimum(0, x) keeps -0.0 (NumPy returns the second operand on ties): elu(-0.0) is -0.0
    return np.where(x > 0, x * scale, alpha * scale * np.expm1(np.minimum(0, x) * input_scale))


def _elu_decomp(x, alpha, scale, input_scale):
    neg = alpha * scale * (x.clamp(max=0) * input_scale).expm1()
    return _where(x > 0, x * scale, neg)


def _elu_vjp(ctx, g):
    x, alpha, scale, input_scale = ctx.args
    neg = g * (alpha * scale * input_scale) * (x.clamp(max=0) * input_scale).exp()
    return _where(x > 0, g * scale, neg), None, None, None


ELU = _fused("elu", _elu_kernel, _elu_decomp, _elu_vjp,
             schema="elu(Tensor self, Scalar alpha=1, Scalar scale=1, "
                    "Scalar input_scale=1) -> Tensor")


def elu(input, alpha=1.0, inplace=False):
    return _run(ELU, input, (alpha, 1.0, 1.0), inplace)


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


def selu(input, inplace=False):
    return _run(ELU, input, (_SELU_ALPHA, _SELU_SCALE, 1.0), inplace)


def selu_(input):
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _run(ELU, input, (alpha, 1.0, 1.0 / alpha), inplace)


def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


# --------------------------------------------------- leaky_relu, threshold, hardtanh

def _leaky_relu_vjp(ctx, g):
    x, slope = ctx.args
    return _where(x > 0, g, g * slope), None


LEAKY_RELU = _fused("leaky_relu", lambda x, s: np.where(x > 0, x, x * s),
                    lambda x, s: _where(x > 0, x, x * s), _leaky_relu_vjp,
                    schema="leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _run(LEAKY_RELU, input, (negative_slope,), inplace)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def _threshold_vjp(ctx, g):
    x, th, _ = ctx.args
    return dispatch(_pw.THRESHOLD_BACKWARD, (g, x, th)), None, None


def _threshold_kernel(x, th, value):
    return np.where(x <= th, np.asarray(value).astype(x.dtype), x)    # NaN stays NaN


THRESHOLD = _fused("threshold", _threshold_kernel,
                   lambda x, th, value: _where(x > th, x, value),
                   _threshold_vjp, allowed={1, 2},
                   schema="threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor")


def threshold(input, threshold, value, inplace=False):
    return _run(THRESHOLD, input, (threshold, value), inplace)


def threshold_(input, threshold, value):
    return _run(THRESHOLD, input, (threshold, value), True)


def relu(input, inplace=False):
    return input.relu_() if inplace else _pw.relu(input)


def relu_(input):
    return input.relu_()


def _hardtanh_vjp(ctx, g):
    x, lo, hi = ctx.args
    return g * ((x > lo) & (x < hi)), None, None


# x as NumPy's second operand: ties (0.0 vs -0.0) keep the input's sign, as PyTorch's
HARDTANH = _fused("hardtanh", lambda x, lo, hi: np.minimum(hi, np.maximum(lo, x)),
                  lambda x, lo, hi: x.clamp(lo, hi), _hardtanh_vjp, allowed={1, 2},
                  schema="hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor")


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _run(HARDTANH, input, (min_val, max_val), inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    return _run(HARDTANH, input, (0.0, 6.0), inplace)


# ---------------------------------------------------------- softplus and shrinkage

def _softplus_kernel(x, beta, threshold):
    bx = x * beta
    return np.where(bx > threshold, x, np.logaddexp(bx, 0) / beta)


def _softplus_decomp(x, beta, threshold):
    bx = x * beta
    return _where(bx > threshold, x, bx.logaddexp(bx.new_zeros(())) / beta)


def _softplus_vjp(ctx, g):
    x, beta, threshold = ctx.args
    bx = x * beta
    return _where(bx > threshold, g, g * bx.sigmoid()), None, None


SOFTPLUS = _fused("softplus", _softplus_kernel, _softplus_decomp, _softplus_vjp,
                  schema="softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor")


def softplus(input, beta=1.0, threshold=20.0):
    return dispatch(SOFTPLUS, (input, beta, threshold))


def _shrink_mask(x, lambd):
    return (x < -lambd) | (x > lambd)


def _shrink_vjp(ctx, g):
    x, lambd = ctx.args
    return g * _shrink_mask(x, lambd), None


HARDSHRINK = _fused("hardshrink", lambda x, l: np.where((x >= -l) & (x <= l), 0, x),
                    lambda x, l: x * _shrink_mask(x, l), _shrink_vjp,
                    schema="hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor")
SOFTSHRINK = _fused("softshrink",
                    lambda x, l: np.where(x > l, x - l, np.where(x < -l, x + l, x * 0 + 0)),
                    lambda x, l: (x - x.clamp(-l, l)), _shrink_vjp,
                    schema="softshrink(Tensor self, Scalar lambd=0.5) -> Tensor")


def _check_lambd(input, lambd):
    if isinstance(input, Tensor) and input.dtype._kind == 2 and lambd < 0:
        hi = D.finfo(input.dtype).max
        raise RuntimeError(f"lambda must be in range [0, {hi:g}] for input dtype "
                           f"{input.dtype}, but found {lambd}")


def hardshrink(input, lambd=0.5):
    return dispatch(HARDSHRINK, (input, lambd))


def softshrink(input, lambd=0.5):
    _check_lambd(input, lambd)
    return dispatch(SOFTSHRINK, (input, lambd))


def tanhshrink(input):
    return input - input.tanh()


def softsign(input):
    return input / (input.abs() + 1)


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


# -------------------------------------------------------------------------- glu

def _glu_meta(x, dim):
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, x.ndim, "glu")
    if x.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{x.shape[d]}")
    if x.dtype._kind != 2:
        raise NotImplementedError(f"\"glu_cpu\" not implemented for '{x.dtype}'")
    shape = list(x.shape)
    shape[d] //= 2
    return tuple(shape), x.dtype


def _glu_kernel(x, dim):
    a, b = np.split(x, 2, axis=dim)
    comp = D.compute_dtype(D.from_numpy_dtype(x.dtype)).np
    return (a * _sigmoid_np(b.astype(comp))).astype(x.dtype)


def _glu_decomp(x, dim):
    a, b = x.chunk(2, dim)
    return a * b.sigmoid()


def _glu_vjp(ctx, g):
    from ...ops.shape import cat
    x, dim = ctx.args
    a, b = x.chunk(2, dim)
    s = b.sigmoid()
    return cat([g * s, g * a * s * (1 - s)], dim), None


GLU = register("glu", _glu_kernel, meta=_glu_meta, vjp=_glu_vjp, decomp=_glu_decomp,
               check=True, tags=("composite",),
               schema="glu(Tensor self, int dim=-1) -> Tensor")
GLU.meta_layout = "first"     # fake strides: the halves keep the input's axis order


def glu(input, dim=-1):
    if isinstance(input, Tensor) and input.ndim:
        dim = _wrap_dim(dim, input.ndim, "glu")
    return dispatch(GLU, (input, dim))


# ------------------------------------------------------------------------ prelu

def _prelu_weight_shape(x, w):
    """The shape that broadcasts `w` over input channels (dim 1, or dim 0 if 1-d)."""
    if x.ndim < 2 or w.size == 1:
        return (1,) * x.ndim if w.ndim else ()
    return (1, w.shape[0]) + (1,) * (x.ndim - 2)


def _prelu_meta(x, w):
    if w.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {w.ndim}")
    n = w.numel()
    if n != 1:
        if x.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = x.shape[1] if x.ndim >= 2 else 1
        if n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
    if x.dtype._kind != 2:
        raise NotImplementedError(f"\"prelu_cpu\" not implemented for '{x.dtype}'")
    return tuple(x.shape), D.result_dtype((x, w))


def _prelu_kernel(x, w):
    wb = w.reshape(_prelu_weight_shape(x, w))
    return np.where(x > 0, x, x * wb).astype(np.result_type(x, w))


def _prelu_decomp(x, w):
    wb = w.reshape(_prelu_weight_shape(x, w))
    return _where(x > 0, x, x * wb)


def _prelu_vjp(ctx, g):
    x, w = ctx.args
    shape = _prelu_weight_shape(x, w)
    wb = w.reshape(shape)
    pos = x > 0
    gx = _where(pos, g, g * wb) if ctx.needs_input_grad[0] else None
    gw = None
    if ctx.needs_input_grad[1]:
        gw = pos.logical_not() * x * g
        dims = [i for i, s in enumerate(shape) if s == 1] if shape else list(range(x.ndim))
        if w.numel() == 1:
            dims = list(range(x.ndim))
        gw = (gw.sum(dims) if dims else gw).reshape(w.shape)
    return gx, gw


PRELU = register("prelu", _prelu_kernel, meta=_prelu_meta, vjp=_prelu_vjp,
                 decomp=_prelu_decomp, check=True, tags=("composite",),
                 amp_policy="lower_precision",
                 schema="prelu(Tensor self, Tensor weight) -> Tensor")


def prelu(input, weight):
    return dispatch(PRELU, (input, weight))


# ------------------------------------------------------------------------ rrelu

def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training each negative element gets a slope drawn from
    U(lower, upper); in eval the slope is (lower + upper) / 2."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    from ...autograd.grad_mode import no_grad
    from ..._dtype import float64
    with no_grad():
        # PyTorch's rrelu_with_noise: one double U(lower, upper) per element <= 0, in order,
        # with the bounds first rounded to the input's compute type (float unless double)
        neg = input <= 0
        noise = input.new_ones(input.shape)
        if input.dtype is not float64:
            lower, upper = float(np.float32(lower)), float(np.float32(upper))
        from ...ops.random import rand
        u = rand(int(neg.sum()), dtype=float64)     # u * (upper - lower) + lower, unfused
        slopes = u * (upper - lower) + lower
        noise[neg] = slopes.to(input.dtype)
    return input.mul_(noise) if inplace else input * noise


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)
