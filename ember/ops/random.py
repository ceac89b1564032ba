"""Random sampling ops: rand/randn/randint/randperm/normal/bernoulli/multinomial and
the in-place samplers (uniform_, normal_, random_, bernoulli_, exponential_, ...).

Note: every sampler is a registry op tagged `random` whose args end with the
`Generator` it draws from, so a recording mode sees the op and the generator and a
replay draws fresh numbers. Kernels only turn Philox words into numbers (the
mappings are documented in ember/_random.py), or, for a generator switched to
PyTorch's engine (manual_seed(s, generator="mt19937")), call ember/_mt19937.py for
PyTorch's own numbers; the public wrappers check arguments
first, so a rejected call consumes no randomness. In-place samplers run their
functional op (`uniform`, `normal_functional`, ...) and commit it through copy_.
Gradients follow PyTorch: sampling ops are differentiable with zero gradients.
"""
import math
import operator
import warnings

import numpy as np

from .. import _dtype as D
from .. import _mt19937 as MT
from .._dispatch import dispatch
from .._random import get_generator, uniform01, normal01, integers
from .._tensor import Tensor
from ._elementwise import write_out, type_name, broadcast_shapes
from ._registry import register
from .creation import _size, _factory, _out_dtype, _result, zeros

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = ["rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
           "rand_like", "randn_like", "randint_like"]


# ------------------------------------------------------------------ helpers

def _zero_grads(ctx, *grads):
    """PyTorch's derivative of a sampling op: zeros for every input that needs one."""
    g = grads[0]
    out, k = [], 0
    for need in ctx.needs_input_grad:
        if need is None:
            out.append(None)
            continue
        out.append(zeros(ctx.shapes[k], dtype=g.dtype) if need else None)
        k += 1
    return tuple(out)


def _rand_op(name, kernel, meta, differentiable=False, schema=None):
    """A sampler op. `meta` gives (shape, dtype) so meta/fake runs never draw numbers."""
    return register(name, kernel, tags=("random", "prim"), save=(), meta=meta,
                    vjp=_zero_grads if differentiable else None, schema=schema)


def _like_self(self, *rest):
    return tuple(self.shape), self.dtype


def _grid(dtype):
    """The uniform grid transforms draw on: float64 for double, float32 otherwise."""
    return D.float64 if dtype is D.float64 or dtype is D.complex128 else D.float32


def _draw(sample, gen, shape, dtype, grid=None, scale=None):
    """numbers of `shape` and `dtype` from sample(gen, n, grid) (float64 values);
    complex dtypes take real and imaginary parts interleaved from 2n draws."""
    n = math.prod(shape)
    if dtype.is_complex:
        real = dtype.to_real()
        v = sample(gen, 2 * n, grid or real)
        if scale is not None:
            v = v * scale
        return v.astype(real.np).view(dtype.np).reshape(shape)
    return sample(gen, n, grid or dtype).astype(dtype.np).reshape(shape)


def _fmt(x):
    return f"{x:g}" if isinstance(x, float) else str(x)


_C_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short",
            "int32": "int", "int64": "long int", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _not_implemented(kernel, dtype):
    return NotImplementedError(f'"{kernel}" not implemented for \'{type_name(dtype)}\'')


def _check_floating(dtype, kernel):
    if not (dtype.is_floating_point or dtype.is_complex):
        raise _not_implemented(kernel, dtype)


def _dtype_bounds(dtype):
    """The [min, max] integers random_ may produce for dtype (floats: +-2**digits)."""
    if dtype is D.bool:
        return 0, 1
    if dtype._kind == 1:
        info = D.iinfo(dtype)
        return info.min, info.max
    return -(1 << _DIGITS[dtype.name]), 1 << _DIGITS[dtype.name]


def _check_int_arg(v, opname, argname):
    try:
        v = operator.index(v)
    except TypeError:
        raise TypeError(f"{opname}(): argument '{argname}' must be int, not "
                        f"{type(v).__name__}") from None
    if not -(1 << 63) <= v < (1 << 63):
        raise ValueError("Overflow when unpacking long long")
    return v


def _check_from_to(from_, to, dtype):
    """PyTorch's random_from_to checks: from < to, both within the dtype's range.
    `to` is exclusive; None means the dtype's largest value (inclusive)."""
    if dtype.is_complex:
        raise _not_implemented("random_from_to_kernel_cpu", dtype)
    lo, hi = _dtype_bounds(dtype)
    if to is not None and from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={from_} >= to={to}")
    if dtype._kind == 2:
        fi = D.finfo(dtype)
        for what, v in (("from", from_), ("to - 1", None if to is None else to - 1)):
            if v is None:
                continue
            if not fi.min <= v <= fi.max:
                raise RuntimeError(f"{what} is out of bounds for {_C_NAMES[dtype.name]}")
            if not lo <= v <= hi:
                d = _DIGITS[dtype.name]
                warnings.warn(f"{what} is out of bounds [-(2^{d}), 2^{d}]. Due to precision "
                              f"limitations {_C_NAMES[dtype.name]} can support discrete "
                              "uniform distribution only within this range. This warning "
                              "will become an error in version 1.7 release, please fix the "
                              "code in advance", UserWarning, stacklevel=4)
        return
    if from_ < lo:
        raise RuntimeError(f"from is out of bounds for {_C_NAMES[dtype.name]}")
    if to is not None and to - 1 > hi:
        raise RuntimeError(f"to - 1 is out of bounds for {_C_NAMES[dtype.name]}")


# ------------------------------------------- PyTorch's engine (ember/_mt19937.py)

def _mt_real(shape, dtype):
    """(element count, real dtype) of a draw; complex draws both parts interleaved as
    PyTorch's kernels do on view_as_real."""
    n = math.prod(shape)
    return (2 * n, dtype.to_real()) if dtype.is_complex else (n, dtype)


def _mt_finish(values, shape, dtype):
    real = dtype.to_real()
    return values.astype(real.np).view(dtype.np).reshape(shape) if dtype.is_complex else \
        values.astype(dtype.np).reshape(shape)


def _mt_uniform(mt, shape, dtype, a, b):
    """uniform_(a, b); a value that rounds to `b` in the dtype becomes `a` (PyTorch's
    kernel never returns the upper bound)."""
    n, real = _mt_real(shape, dtype)
    v = MT.uniform(mt, n, real.name, a, b).astype(real.np)
    v[v == np.asarray(b).astype(real.np)] = np.asarray(a).astype(real.np)
    return _mt_finish(v, shape, dtype)


def _mt_normal(mt, shape, dtype, mean, std):
    n, real = _mt_real(shape, dtype)
    if dtype.is_complex:
        std = std / math.sqrt(2)
    return _mt_finish(MT.normal(mt, n, real.name, mean, std), shape, dtype)


# ------------------------------------------------------------ rand / randn

def _rand_kernel(size, generator, dtype):
    if generator._mt is not None:
        return _mt_uniform(generator._mt, size, dtype, 0.0, 1.0)
    return _draw(uniform01, generator, size, dtype)


def _randn_kernel(size, generator, dtype):
    if generator._mt is not None:
        return _mt_normal(generator._mt, size, dtype, 0.0, 1.0)
    return _draw(normal01, generator, size, dtype, grid=_grid(dtype),
                 scale=math.sqrt(0.5) if dtype.is_complex else None)


RAND = _rand_op("rand", _rand_kernel, lambda size, gen, dtype: (size, dtype),
                schema="rand.generator(SymInt[] size, *, Generator? generator, "
                       "ScalarType dtype) -> Tensor")
RANDN = _rand_op("randn", _randn_kernel, lambda size, gen, dtype: (size, dtype),
                 schema="randn.generator(SymInt[] size, *, Generator? generator, "
                        "ScalarType dtype) -> Tensor")


def _sample(op, kernel_name, size, kw, generator, out, dtype, device, requires_grad):
    """rand/randn: `size` as ints, one tuple/list, or size=; float/complex dtypes only."""
    if "size" in kw:
        if size:
            raise TypeError(f"{op.name}() got multiple values for argument 'size'")
        size = (kw.pop("size"),)
    kw.pop("names", None)
    if kw:
        raise TypeError(f"{op.name}() got an unexpected keyword argument '{next(iter(kw))}'")
    if len(size) == 1 and isinstance(size[0], float):
        raise TypeError(f"{op.name}(): argument 'size' (position 1) must be tuple of ints, "
                        f"not float")
    shape = _size(size)
    dt = _out_dtype(dtype, out, D.get_default_dtype(), op.name)
    _check_floating(dt, kernel_name)
    res = _factory(op, (shape, get_generator(generator), dt), device)
    return _result(res, out, op.name, requires_grad, device)


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False, **kw):
    """Uniform [0, 1) numbers."""
    return _sample(RAND, "check_uniform_bounds", size, kw, generator, out, dtype, device,
                   requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False, **kw):
    """Standard normal numbers (complex: each part has variance 1/2)."""
    return _sample(RANDN, "normal_kernel_cpu", size, kw, generator, out, dtype, device,
                   requires_grad)


def _like_device(input, device):
    return input.device if device is None and input.is_meta else device


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    return rand(input.shape, generator=generator, dtype=dtype or input.dtype,
                device=_like_device(input, device), requires_grad=requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None):
    return randn(input.shape, generator=generator, dtype=dtype or input.dtype,
                 device=_like_device(input, device), requires_grad=requires_grad)


# ------------------------------------------------------------ randint / randperm

def _randint_kernel(low, high, size, generator, dtype):
    if generator._mt is not None:
        return MT.from_to(generator._mt, math.prod(size), low, high - low).astype(
            dtype.np).reshape(size)
    return integers(generator, math.prod(size), low, high - low).astype(dtype.np).reshape(size)


RANDINT = _rand_op("randint", _randint_kernel, lambda lo, hi, size, gen, dtype: (size, dtype),
                   schema="randint.low_generator(SymInt low, SymInt high, SymInt[] size, *, "
                          "Generator? generator, ScalarType dtype) -> Tensor")


def _randint_bounds(args, low, high, opname):
    """(low, high) from randint's overloads: (high), (low, high), or keywords."""
    if len(args) > 2:
        raise TypeError(f"{opname}() takes at most 3 positional arguments")
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    if high is None:
        raise TypeError(f"{opname}() missing required argument 'high'")
    low = 0 if low is None else _check_int_arg(low, opname, "low")
    return low, _check_int_arg(high, opname, "high")


def randint(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False, low=None, high=None):
    """randint(high, size) or randint(low, high, size): integers in [low, high)."""
    if size is None:
        if not args:
            raise TypeError("randint() missing required argument 'size'")
        args, size = args[:-1], args[-1]
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    lo, hi = _randint_bounds(args, low, high, "randint")
    dt = _out_dtype(dtype, out, D.int64, "randint")
    _check_from_to(lo, hi, dt)
    res = _factory(RANDINT, (lo, hi, _size((size,)), get_generator(generator), dt), device)
    return _result(res, out, "randint", requires_grad, device)


def randint_like(input, *args, low=None, high=None, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None):
    """randint_like(input, high) or randint_like(input, low, high)."""
    lo, hi = _randint_bounds(args, low, high, "randint_like")
    return randint(lo, hi, tuple(input.shape), generator=generator,
                   dtype=dtype or input.dtype, device=_like_device(input, device),
                   requires_grad=requires_grad)


def _randperm_kernel(n, generator, dtype):
    """Sorts 64-bit Philox keys (2 words per element); ties keep index order."""
    if generator._mt is not None:
        return MT.randperm(generator._mt, n).astype(dtype.np)
    w = generator._words(2 * n).astype(np.uint64)
    keys = w[0::2] | (w[1::2] << np.uint64(32))
    return np.argsort(keys, kind="stable").astype(dtype.np)


RANDPERM = _rand_op("randperm", _randperm_kernel, lambda n, gen, dtype: ((n,), dtype),
                    schema="randperm.generator(SymInt n, *, Generator? generator, "
                           "ScalarType dtype) -> Tensor")


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    n = _check_int_arg(n, "randperm", "n")
    dt = _out_dtype(dtype, out, D.int64, "randperm")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if dt is D.bool or dt.is_complex:
        raise _not_implemented("randperm", dt)
    if dt._kind == 2:
        d = _DIGITS[dt.name]
        if n > (1 << d) + 1:
            label = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
                     "float64": "Double"}[dt.name]
            raise RuntimeError(f"n cannot be greater than {(1 << d) + 1 if d < 12 else f'2^{d}+1'}"
                               f" for {label} type.")
    elif n - 1 > D.iinfo(dt).max:
        raise RuntimeError(f"value cannot be converted to type {dt.name}_t without overflow")
    res = _factory(RANDPERM, (n, get_generator(generator), dt), device)
    return _result(res, out, "randperm", requires_grad, device)


# ------------------------------------------------------------------- normal

def _normal_kernel(mean, std, generator, dtype):
    shape = np.broadcast_shapes(np.shape(mean), np.shape(std))
    if generator._mt is not None:                # PyTorch: normal_(0, 1), mul_(std), add_(mean)
        z = _mt_normal(generator._mt, shape, dtype, 0.0, 1.0)
        z = (z * np.asarray(std).astype(dtype.np)).astype(dtype.np)
        return (z + np.asarray(mean).astype(dtype.np)).astype(dtype.np)
    z = _draw(normal01, generator, shape, D.float64, grid=_grid(dtype))
    return (np.asarray(mean, np.float64) + np.asarray(std, np.float64) * z).astype(dtype.np)


NORMAL = _rand_op("normal", _normal_kernel, lambda mean, std, gen, dtype: (broadcast_shapes(
    *(tuple(t.shape) for t in (mean, std) if isinstance(t, Tensor))), dtype), differentiable=True,
                  schema="normal.Tensor_Tensor(Tensor mean, Tensor std, *, "
                         "Generator? generator=None, ScalarType dtype) -> Tensor")


def _normal_size_kernel(mean, std, size, generator, dtype):
    if generator._mt is not None:
        return _mt_normal(generator._mt, size, dtype, mean, std)
    z = _draw(normal01, generator, size, D.float64, grid=_grid(dtype))
    return (mean + std * z).astype(dtype.np)


NORMAL_SIZE = _rand_op("normal_size", _normal_size_kernel,
                       lambda mean, std, size, gen, dtype: (size, dtype),
                       schema="normal.float_float(float mean, float std, SymInt[] size, *, "
                              "Generator? generator=None, ScalarType dtype) -> Tensor")


def _check_std(std):
    if isinstance(std, Tensor):
        if std._backend == "cpu" and (std._data < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """torch.normal's overloads: (Tensor, Tensor), (Tensor, float), (float, Tensor),
    (float, float, size)."""
    gen = get_generator(generator)
    tensors = [x for x in (mean, std) if isinstance(x, Tensor)]
    if not tensors:
        if size is None or isinstance(size, (int, float)):
            raise TypeError(f"normal() received an invalid combination of arguments - got "
                            f"({type(mean).__name__}, {type(std).__name__}"
                            f"{'' if size is None else ', ' + type(size).__name__})")
        shape = _size((size,))
        dt = _out_dtype(dtype, out, D.get_default_dtype(), "normal")
        _check_floating(dt, "normal_kernel_cpu")
        _check_std(std)
        res = _factory(NORMAL_SIZE, (float(mean), float(std), shape, gen, dt), device)
        return _result(res, out, "normal", requires_grad, device)
    if size is not None or dtype is not None or requires_grad:
        raise TypeError("normal() received an invalid combination of arguments: a tensor mean "
                        "or std takes no size, dtype or requires_grad")
    for x in (mean, std):
        if not isinstance(x, (Tensor, int, float)) or isinstance(x, bool):
            raise TypeError(f"normal(): expected Tensor or float, got {type(x).__name__}")
    dt = D.result_dtype(tensors)
    if dt._kind < 2:
        dt = D.get_default_dtype() if any(t.dtype._kind >= 2 for t in tensors) else dt
    _check_floating(dt, "normal_kernel_cpu")
    if dt.is_complex:
        raise _not_implemented("normal_kernel_cpu", dt)
    shapes = [tuple(t.shape) for t in tensors]
    broadcast_shapes(*shapes)
    _check_std(std)
    res = dispatch(NORMAL, (mean, std, gen, dt))
    return res if out is None else write_out(out, res, "normal")


# ---------------------------------------------------------------- bernoulli

def _mt_bernoulli(generator, p, shape, out_dtype):
    p = np.broadcast_to(p, shape)
    hit = MT.bernoulli(generator._mt, p.reshape(-1).astype(np.float64), p.dtype != np.float64)
    return hit.reshape(shape).astype(out_dtype)


def _bernoulli_kernel(input, generator):
    if generator._mt is not None:
        return _mt_bernoulli(generator, input, input.shape, input.dtype)
    dt = D._FROM_NP[input.dtype]
    u = uniform01(generator, input.size, _grid(dt)).reshape(input.shape)
    return (u < input.astype(np.float64)).astype(input.dtype)


def _bernoulli_p_kernel(input, p, generator):
    if generator._mt is not None:
        return _mt_bernoulli(generator, np.float64(p), input.shape, input.dtype)
    u = uniform01(generator, input.size, D.float64).reshape(input.shape)
    return (u < p).astype(input.dtype)


def _bernoulli_tensor_kernel(input, p, generator):
    if generator._mt is not None:
        return _mt_bernoulli(generator, p, input.shape, input.dtype)
    p = np.broadcast_to(p, input.shape)
    u = uniform01(generator, input.size, _grid(D._FROM_NP[p.dtype])).reshape(input.shape)
    return (u < p.astype(np.float64)).astype(input.dtype)


BERNOULLI = _rand_op("bernoulli", _bernoulli_kernel, _like_self, differentiable=True,
                     schema="bernoulli(Tensor self, *, Generator? generator=None) -> Tensor")
BERNOULLI_P = _rand_op("bernoulli_p", _bernoulli_p_kernel, _like_self, differentiable=True,
                       schema="bernoulli.p(Tensor self, float p, *, "
                              "Generator? generator=None) -> Tensor")
BERNOULLI_TENSOR = _rand_op("bernoulli_tensor", _bernoulli_tensor_kernel, _like_self,
                            differentiable=True,
                            schema="bernoulli.Tensor(Tensor self, Tensor p, *, "
                                   "Generator? generator=None) -> Tensor")


def _check_p_tensor(p):
    if not p.dtype.is_floating_point:
        raise _not_implemented("bernoulli_tensor_cpu_p_", p.dtype)
    if p._backend == "cpu" and not ((p._data >= 0) & (p._data <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")


def _check_p_float(p):
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        raise TypeError(f"bernoulli(): argument 'p' must be float, not {type(p).__name__}")
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")


def bernoulli(input, p=None, *, generator=None, out=None):
    """Draws 0/1 with probabilities `input` (or a float `p`), in input's dtype."""
    gen = get_generator(generator)
    if p is None:
        _check_p_tensor(input)
        res = dispatch(BERNOULLI, (input, gen))
    else:
        _check_p_float(p)
        res = dispatch(BERNOULLI_P, (input, float(p), gen))
    return res if out is None else write_out(out, res, "bernoulli")


def _tensor_bernoulli(self, p=None, *, generator=None):
    if isinstance(p, Tensor):
        raise TypeError("bernoulli() received an invalid combination of arguments - got "
                        "(Tensor), but expected (float p) or ()")
    return bernoulli(self, p, generator=generator)


def bernoulli_(self, p=0.5, *, generator=None):
    gen = get_generator(generator)
    if isinstance(p, Tensor):
        _check_p_tensor(p)
        if p.dim() > self.dim():
            broadcast_shapes(tuple(self.shape), tuple(p.shape))
            raise RuntimeError(f"expand(torch.{type_name(p.dtype)}Tensor{{{list(p.shape)}}}, "
                               f"size={list(self.shape)}): the number of sizes provided "
                               f"({self.dim()}) must be greater or equal to the number of "
                               f"dimensions in the tensor ({p.dim()})")
        if broadcast_shapes(tuple(self.shape), tuple(p.shape)) != tuple(self.shape):
            raise RuntimeError(f"bernoulli_: p of shape {list(p.shape)} cannot be expanded "
                               f"to self's shape {list(self.shape)}")
        return self.copy_(dispatch(BERNOULLI_TENSOR, (self, p, gen)))
    _check_p_float(p)
    return self.copy_(dispatch(BERNOULLI_P, (self, float(p), gen)))


# -------------------------------------------------------------- multinomial

def _multinomial_kernel(input, num_samples, replacement, generator):
    """With replacement: inverse CDF of one uniform per sample (row by row). Without:
    the k smallest exponential(1) / p keys per row (exponential race), ties in index
    order, so zero-probability categories come last."""
    if generator._mt is not None:
        out = MT.multinomial(generator._mt, np.atleast_2d(input), num_samples, replacement)
        return out if input.ndim == 2 else out[0]
    p = np.atleast_2d(input).astype(np.float64)
    rows, k = p.shape
    grid = _grid(D._FROM_NP[input.dtype])
    if replacement:
        u = uniform01(generator, rows * num_samples, grid).reshape(rows, num_samples)
        cdf = np.cumsum(p, axis=1)
        cdf /= cdf[:, -1:]        # the last entry is exactly 1 > u: no index past the end
        out = np.stack([np.searchsorted(cdf[r], u[r], side="right") for r in range(rows)]) \
            if rows else np.zeros((0, num_samples), np.int64)
    else:
        u = uniform01(generator, rows * k, grid).reshape(rows, k)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = -np.log1p(-u) / p
        keys[np.isnan(keys)] = np.inf
        out = np.argsort(keys, axis=1, kind="stable")[:, :num_samples]
    out = out.astype(np.int64)
    return out if input.ndim == 2 else out[0]


MULTINOMIAL = _rand_op("multinomial", _multinomial_kernel, lambda input, n, repl, gen: (
    tuple(input.shape[:-1]) + (n,), D.int64),
                       schema="multinomial(Tensor self, SymInt num_samples, "
                              "bool replacement=False, *, Generator? generator=None) -> Tensor")


def _check_probs(input):
    if input._backend != "cpu":
        return                                  # meta/fake tensors have no values
    p = input._data.astype(np.float64)
    if not (np.isfinite(p) & (p >= 0)).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if p.size and (p.reshape(-1, p.shape[-1]).sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{type_name(input.dtype)}")
    num_samples = _check_int_arg(num_samples, "multinomial", "num_samples")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    _check_probs(input)
    res = dispatch(MULTINOMIAL, (input, num_samples, bool(replacement),
                                 get_generator(generator)))
    return res if out is None else write_out(out, res, "multinomial")


# -------------------------------------------------------- in-place samplers

def _inplace_op(name, kernel, schema=None):
    """A functional sampler `name(self, *params, generator)` with self's shape and dtype."""
    return _rand_op(name, kernel, _like_self, differentiable=True, schema=schema)


def _uniform_kernel(self, a, b, gen):
    dt = D._FROM_NP[self.dtype]
    if gen._mt is not None:
        return _mt_uniform(gen._mt, self.shape, dt, a, b)
    return _draw(lambda g, n, d: uniform01(g, n, d) * (b - a) + a, gen, self.shape, dt)


UNIFORM = _inplace_op("uniform", _uniform_kernel,
                      schema="uniform(Tensor self, float from=0., float to=1., *, "
                             "Generator? generator=None) -> Tensor")


def _normal_fn_kernel(self, mean, std, gen):
    """normal_: complex tensors get mean on both parts and std / sqrt(2) (PyTorch)."""
    dt = D._FROM_NP[self.dtype]
    if gen._mt is not None:
        return _mt_normal(gen._mt, self.shape, dt, mean, std)
    if dt.is_complex:
        std = std / math.sqrt(2)
    return _draw(lambda g, n, d: normal01(g, n, d) * std + mean, gen, self.shape, dt,
                 grid=_grid(dt))


NORMAL_FN = _inplace_op("normal_functional", _normal_fn_kernel,
                        schema="normal_functional(Tensor self, float mean=0., float std=1., *, "
                               "Generator? generator=None) -> Tensor")
def _random_kernel(self, lo, hi, gen):
    dt = D._FROM_NP[self.dtype]
    if gen._mt is not None:
        # random_() on int32 spans [0, 2**31): PyTorch's uniform_int draws one 32-bit word
        # there (its from/to kernel would take 64 bits for that span)
        full = lo == 0 and hi == _dtype_bounds(dt)[1] + 1 and dt is D.int32
        v = MT.full_range(gen._mt, self.size, dt.name) if full else \
            MT.from_to(gen._mt, self.size, lo, hi - lo)
        return v.astype(self.dtype).reshape(self.shape)
    return integers(gen, self.size, lo, hi - lo).astype(self.dtype).reshape(self.shape)


RANDOM = _inplace_op("random", _random_kernel,
                     schema="random.from(Tensor self, int from, int to, *, "
                            "Generator? generator=None) -> Tensor")
def _mt_or(kernel, mt_values):
    """A sampler kernel that, on PyTorch's engine, takes mt_values(mt, n, *params) (float64
    values of PyTorch's serial double distributions) cast to self's dtype."""
    def k(self, *params):
        gen = params[-1]
        if gen._mt is not None:
            v = mt_values(gen._mt, self.size, *params[:-1])
            return v.astype(self.dtype).reshape(self.shape)
        return kernel(self, *params)
    return k


EXPONENTIAL = _inplace_op("exponential", _mt_or(lambda self, lambd, gen: _draw(
    lambda g, n, d: -np.log1p(-uniform01(g, n, d)) / lambd, gen, self.shape,
    D._FROM_NP[self.dtype], grid=_grid(D._FROM_NP[self.dtype])), MT.exponential),
                          schema="exponential(Tensor self, float lambd=1., *, "
                                 "Generator? generator=None) -> Tensor")
GEOMETRIC = _inplace_op("geometric", _mt_or(lambda self, p, gen: (np.floor(
    np.log1p(-uniform01(gen, self.size, _grid(D._FROM_NP[self.dtype]))) / math.log1p(-p))
    + 1).astype(self.dtype).reshape(self.shape), MT.geometric),
                        schema="geometric(Tensor self, float p, *, "
                               "Generator? generator=None) -> Tensor")
LOG_NORMAL = _inplace_op("log_normal", _mt_or(lambda self, mean, std, gen: _draw(
    lambda g, n, d: np.exp(normal01(g, n, d) * std + mean), gen, self.shape,
    D._FROM_NP[self.dtype], grid=_grid(D._FROM_NP[self.dtype])), MT.log_normal),
                         schema="log_normal(Tensor self, float mean=1., float std=2., *, "
                                "Generator? generator=None) -> Tensor")
CAUCHY = _inplace_op("cauchy", _mt_or(lambda self, median, sigma, gen: _draw(
    lambda g, n, d: median + sigma * np.tan(np.pi * (uniform01(g, n, d) - 0.5)), gen,
    self.shape, D._FROM_NP[self.dtype], grid=_grid(D._FROM_NP[self.dtype])), MT.cauchy),
                     schema="cauchy(Tensor self, float median=0., float sigma=1., *, "
                            "Generator? generator=None) -> Tensor")


def _commit(self, op, *params, generator=None):
    return self.copy_(dispatch(op, (self,) + params + (get_generator(generator),)))


def _check_bound(v, what, dtype):
    fi = D.finfo(dtype.to_real())
    if not fi.min <= v <= fi.max:
        raise RuntimeError(f"{what} is out of bounds for {_C_NAMES[dtype.to_real().name]}")


def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    from_ = kw.pop("from", from_)
    _check_floating(self.dtype, "check_uniform_bounds")
    _check_bound(from_, "from", self.dtype)
    _check_bound(to, "to", self.dtype)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_fmt(from_)} > to={_fmt(to)}")
    return _commit(self, UNIFORM, float(from_), float(to), generator=generator)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    _check_floating(self.dtype, "normal_kernel_cpu")
    _check_std(std)
    return _commit(self, NORMAL_FN, float(mean), float(std), generator=generator)


def random_(self, *args, to=None, generator=None, **kw):
    """random_(), random_(to) or random_(from, to): integers in [from, to)."""
    from_ = kw.pop("from", 0)
    if kw:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kw))}'")
    if len(args) == 1:
        to = args[0]
    elif len(args) == 2:
        from_, to = args
    elif len(args) > 2:
        raise TypeError("random_() takes at most 2 positional arguments")
    from_ = _check_int_arg(from_, "random_", "from")
    explicit = len(args) > 0 or to is not None
    if to is not None:
        to = _check_int_arg(to, "random_", "to")
    if self.dtype.is_complex:
        raise _not_implemented("random_kernel_cpu" if not explicit else
                               "random_from_to_kernel_cpu", self.dtype)
    _check_from_to(from_, to, self.dtype)
    hi = _dtype_bounds(self.dtype)[1] + 1 if to is None else to
    return _commit(self, RANDOM, from_, hi, generator=generator)


def _continuous(self, what):
    if not self.dtype.is_floating_point:
        name = _C_NAMES[self.dtype.name] if what == "Cauchy" else type_name(self.dtype)
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {name}")


def exponential_(self, lambd=1.0, *, generator=None):
    _continuous(self, "Exponential")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    return _commit(self, EXPONENTIAL, float(lambd), generator=generator)


def geometric_(self, p, *, generator=None):
    if self.dtype is D.bool or self.dtype.is_complex:
        raise _not_implemented("geometric_cpu", self.dtype)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    return _commit(self, GEOMETRIC, float(p), generator=generator)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    if not self.dtype.is_floating_point:
        raise _not_implemented("log_normal_cpu", self.dtype)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    return _commit(self, LOG_NORMAL, float(mean), float(std), generator=generator)


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    _continuous(self, "Cauchy")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    return _commit(self, CAUCHY, float(median), float(sigma), generator=generator)


def _make_methods():
    METHODS["uniform_"] = uniform_
    METHODS["normal_"] = normal_
    METHODS["random_"] = random_
    METHODS["bernoulli_"] = bernoulli_
    METHODS["bernoulli"] = _tensor_bernoulli
    METHODS["exponential_"] = exponential_
    METHODS["geometric_"] = geometric_
    METHODS["log_normal_"] = log_normal_
    METHODS["cauchy_"] = cauchy_
    METHODS["multinomial"] = multinomial


_make_methods()
