"""Pointwise math: arithmetic, comparisons, logic, and the unary functions.

Each op is one `pointwise(...)` line (kernel on arrays in the compute dtype) plus
its vjp in ember ops. `_public` turns an op into the `ember.<name>` function (with
`out=`), the Tensor method and the in-place method.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor
from ._elementwise import (pointwise, inplace, write_out, fast_binary, operator_methods, DEFAULT,
                           INT_TO_FLOAT, ALWAYS_BOOL, COMPLEX_TO_FLOAT)
from . import _lowp
from ._lowp import cast
from ._registry import REGISTRY, register

_BF16 = D.bfloat16.np
METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

FLOATING = {2, 3}
INTEGRAL = {0, 1}
NOT_COMPLEX = {0, 1, 2}

__all__ = []


def _public(op, name=None, method=True, inplace_method=True, arity=None):
    """Make ember.<name>(input, ..., *, out=None), Tensor.<name> and Tensor.<name>_."""
    name = name or op.name

    def fn(*args, out=None):
        res = dispatch(op, args)
        return res if out is None else write_out(out, res, name)
    fn.__name__ = name
    globals()[name] = fn
    __all__.append(name)
    if method:
        METHODS[name] = fn
    if inplace_method:
        def ifn(self, *args):
            return inplace(op, self, (self,) + args)
        ifn.__name__ = name + "_"
        METHODS[name + "_"] = ifn
    return fn


# ------------------------------------------------------------------------ unary

def _unary(name, kernel, vjp, promotion=INT_TO_FLOAT, save_out=False, allowed=None, **kw):
    kw.setdefault("schema", f"{name}(Tensor self) -> Tensor")
    kw.setdefault("tags", ("pointwise", "prim"))      # elementwise math: primitives
    op = pointwise(name, kernel, 1, promotion, vjp=vjp, save=() if save_out else None,
                   save_out=save_out, allowed=allowed, **kw)
    _public(op)
    return op


NEG = _unary("neg", np.negative, lambda ctx, g: (-g,), DEFAULT, allowed={1, 2, 3})
_unary("exp", np.exp, lambda ctx, g: (g * ctx.out.conj(),), save_out=True)
_unary("log", np.log, lambda ctx, g: (g / ctx.args[0].conj(),))
_unary("sqrt", np.sqrt, lambda ctx, g: (g / (2 * ctx.out.conj()),), save_out=True)
_unary("sin", np.sin, lambda ctx, g: (g * ctx.args[0].cos().conj(),))
_unary("cos", np.cos, lambda ctx, g: (-g * ctx.args[0].sin().conj(),))
_unary("tanh", np.tanh, lambda ctx, g: (g * (1 - ctx.out * ctx.out).conj(),), save_out=True)


def _sigmoid(a):
    if a.dtype.kind == "c":
        return 1 / (1 + np.exp(-a))
    out = np.empty_like(a)
    pos = a >= 0
    out[pos] = 1 / (1 + np.exp(-a[pos]))
    e = np.exp(a[~pos])
    out[~pos] = e / (1 + e)
    return out


_unary("sigmoid", _sigmoid, lambda ctx, g: (g * (ctx.out * (1 - ctx.out)).conj(),),
       save_out=True)


def _abs_vjp(ctx, g):
    x = ctx.args[0]
    if x.is_complex():
        return (g * x.sgn(),)
    return (g * x.sign(),)


_unary("abs", np.abs, _abs_vjp, COMPLEX_TO_FLOAT, allowed={1, 2, 3})


def _relu_kernel(a):
    # NumPy's maximum returns its second operand on ties: relu(-0.0) is -0.0, as PyTorch's.
    # A 0-d zero array of a's dtype: ~2.5x faster than a Python 0 on small inputs
    if a.dtype.kind == "b":
        return a.copy()
    if a.itemsize == 2 and a.dtype.kind != "i":   # bf16/fp16 as they are (half_native)
        r = _lowp.relu(a)
        return r if r is not None else cast(np.maximum(0, cast(a, np.float32)), a.dtype)
    z = _ZEROS.get(a.dtype)
    if z is None:
        z = _ZEROS[a.dtype] = np.zeros((), a.dtype)
    return np.maximum(z, a)


_ZEROS = {}


_unary("relu", _relu_kernel, lambda ctx, g: (dispatch(THRESHOLD_BACKWARD, (g, ctx.out, 0)),),
       DEFAULT, save_out=True, allowed={1, 2}, half_native=True)


def _threshold_backward_vjp(ctx, gg):
    _, out, threshold = ctx.args
    return (dispatch(THRESHOLD_BACKWARD, (gg, out, threshold)), None, None)


# relu's backward as one op (PyTorch's threshold_backward): 0 where out <= threshold, else grad
# (so a NaN input passes its gradient through, as in PyTorch)
def _threshold_backward_decomp(g, out, threshold):
    """where(out <= threshold, 0, grad)."""
    from .. import _prims as P
    return P.where(P.le(out, threshold), P.full((), 0, g.dtype), g)


def _threshold_backward_kernel(g, out, threshold):
    """Zeroes the gradient's bits where out <= threshold (an integer AND with an all-ones or
    all-zeros mask: bit-identical to np.where(out <= t, 0, g), ~6x faster; ~(out <= t) keeps
    a NaN's gradient as PyTorch does)."""
    if (g.dtype.kind != "f" and g.dtype != _BF16) or g.shape != out.shape \
            or g.dtype.itemsize not in (2, 4, 8) or not g.ndim or not isinstance(out, np.ndarray):
        return np.where(out <= threshold, 0, g).astype(g.dtype, copy=False)
    if threshold == 0 and out.itemsize == 2:
        r = _lowp.relu_backward(g, out)         # bf16/fp16 relu: on the bits, one pass
        if r is not None:
            return r
    it = np.dtype(f"i{g.dtype.itemsize}")
    if out.itemsize == 2:        # bf16/fp16: compare in float32 (exact), not element-wise
        out = cast(out, np.float32)
    keep = np.less_equal(out, threshold)
    np.logical_not(keep, out=keep)
    mask = keep.astype(it)
    np.negative(mask, out=mask)
    res = np.empty(g.shape, g.dtype)
    np.bitwise_and(np.ascontiguousarray(g).view(it), mask, out=res.view(it))
    return res


THRESHOLD_BACKWARD = register(
    "threshold_backward",
    _threshold_backward_kernel,
    meta=lambda g, out, threshold: (tuple(g.shape), g.dtype), vjp=_threshold_backward_vjp,
    save=(1, 2), tags=("pointwise",), decomp=_threshold_backward_decomp,
                              schema="threshold_backward(Tensor grad_output, Tensor self, "
                                     "Scalar threshold) -> Tensor")
def _sign(a):
    """np.sign, but sign(nan) is 0 as in PyTorch."""
    if a.dtype.kind == "b":
        return a.copy()
    r = np.sign(a)
    if r.dtype.kind == "f" and r.size and np.isnan(np.max(r)):    # max: a cheap NaN probe
        r = np.where(np.isnan(r), r.dtype.type(0), r)
    return r


_unary("sign", _sign, lambda ctx, g: (g * 0,), DEFAULT, allowed=NOT_COMPLEX)


def _sgn(a):
    if a.dtype.kind != "c":
        return _sign(a)
    m = np.abs(a)
    return np.where(m == 0, 0, a / np.where(m == 0, 1, m)).astype(a.dtype)


def _sgn_vjp(ctx, g):
    x = ctx.args[0]
    if not x.is_complex():
        return (g * 0,)
    a = x.abs()
    s = x.sgn()
    return (((g - (s.conj() * g).real * s) / a).masked_fill(a == 0, 0),)


_unary("sgn", _sgn, _sgn_vjp, DEFAULT)
_unary("logical_not", np.logical_not, None, ALWAYS_BOOL)


def _bitwise_not(a):
    return np.logical_not(a) if a.dtype.kind == "b" else np.invert(a)


_unary("bitwise_not", _bitwise_not, None, DEFAULT, allowed=INTEGRAL)
_unary("isnan", np.isnan, None, ALWAYS_BOOL)
_unary("conj_physical", np.conj, lambda ctx, g: (g.conj(),), DEFAULT)
_unary("reciprocal", np.reciprocal,
       lambda ctx, g: (-g * (ctx.out * ctx.out).conj(),), save_out=True)
_unary("square", np.square, lambda ctx, g: (2 * g * ctx.args[0].conj(),), DEFAULT)
_square_op_fn = globals()["square"]


def square(input, *, out=None):
    """torch.square is pow(input, 2): a bool input promotes to int64 with the int 2."""
    if isinstance(input, Tensor) and input.dtype is D.bool:
        input = input.to(D.int64)
    return _square_op_fn(input, out=out)


METHODS["square"] = square
_unary("floor", lambda a: np.floor(a) if a.dtype.kind == "f" else a.copy(),
       lambda ctx, g: (g * 0,), DEFAULT, allowed=NOT_COMPLEX)


# ----------------------------------------------------------------------- binary

def _binary(name, kernel, vjp, promotion=DEFAULT, allowed=None, save=None, **kw):
    kw.setdefault("tags", ("pointwise", "prim"))      # elementwise math: primitives
    op = pointwise(name, kernel, 2, promotion, vjp=vjp, allowed=allowed, save=save, **kw)
    return op


def _add_kernel(a, b, alpha=1):
    return np.add(a, b) if alpha == 1 else np.add(a, np.multiply(b, alpha))


def _sub_kernel(a, b, alpha=1):
    return np.subtract(a, b) if alpha == 1 else np.subtract(a, np.multiply(b, alpha))


ADD = _binary("add", _add_kernel, lambda ctx, g: (g, g if ctx.args[2] == 1 else
                                                  g * _conj(ctx.args[2]), None), save=(),
              schema="add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
SUB = _binary("sub", _sub_kernel, lambda ctx, g: (g, -g if ctx.args[2] == 1 else
                                                  g * (-_conj(ctx.args[2])), None), save=(),
              schema="sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
MUL = _binary("mul", np.multiply, lambda ctx, g: _mul_vjp(ctx, g),
              schema="mul.Tensor(Tensor self, Tensor other) -> Tensor")
MUL.self_grad_uses_self = False


def _mul_vjp(ctx, g):
    a, b = ctx.args
    na, nb = ctx.needs_input_grad
    return (g * _conj(b) if na else None, g * _conj(a) if nb else None)


def _conj(x):
    return x.conj() if isinstance(x, Tensor) else (x.conjugate() if isinstance(x, complex) else x)


def _div_kernel(a, b, rounding_mode=None):
    if rounding_mode is None:
        return np.true_divide(a, b)
    if rounding_mode == "trunc":
        if a.dtype.kind in "iu" if isinstance(a, np.ndarray) else False:
            _check_int_zero(b)
            q = np.abs(a) // np.abs(b)
            return (q * np.sign(a) * np.sign(b)).astype(a.dtype)
        return np.trunc(np.true_divide(a, b))
    if rounding_mode == "floor":
        if isinstance(a, np.ndarray) and a.dtype.kind in "iu":
            _check_int_zero(b)
            return np.floor_divide(a, b)
        return np.floor(np.true_divide(a, b))
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                       f"but found '{rounding_mode}'")


def _check_int_zero(b):
    if np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError (integer division or remainder by zero)")


def _div_vjp(ctx, g):
    a, b, mode = ctx.args
    if mode is not None:
        return (g * 0 if isinstance(a, Tensor) else None, g * 0 if isinstance(b, Tensor) else None,
                None)
    na, nb = ctx.needs_input_grad[:2]
    ga = g / _conj(b) if na else None
    gb = -g * _conj(a) / _conj(b * b) if nb else None
    return ga, gb, None


DIV = _binary("div", _div_kernel, _div_vjp, INT_TO_FLOAT,
              schema="div.Tensor(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor")
DIV.self_grad_uses_self = False
DIV_ROUND = _binary("div_rounding", _div_kernel, _div_vjp, DEFAULT, allowed=NOT_COMPLEX,
                    schema="div.Tensor_mode(Tensor self, Tensor other, *, "
                           "str? rounding_mode) -> Tensor")


def _floor_divide(a, b):
    if isinstance(a, np.ndarray) and a.dtype.kind in "iub":
        _check_int_zero(b)
    return np.floor_divide(a, b)


def _not_implemented_vjp(name):
    """PyTorch records a node for these ops whose backward raises."""
    def vjp(ctx, g):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return vjp


FLOOR_DIVIDE = _binary("floor_divide", _floor_divide, _not_implemented_vjp("floor_divide"),
                       DEFAULT, allowed={1, 2}, save=(),      # no bool, as PyTorch
                       schema="floor_divide(Tensor self, Tensor other) -> Tensor")


def _remainder(a, b):
    if isinstance(a, np.ndarray) and a.dtype.kind in "iu":
        _check_int_zero(b)
    return np.remainder(a, b)


REMAINDER = _binary("remainder", _remainder,
                    lambda ctx, g: (g, -g * ctx.args[0].div(ctx.args[1], rounding_mode="floor")
                                    if ctx.needs_input_grad[1] else None), allowed={1, 2},
                    schema="remainder.Tensor(Tensor self, Tensor other) -> Tensor")


def _pow_kernel(a, b):
    a_int = not isinstance(a, np.ndarray) or a.dtype.kind in "iub"
    b_int = not isinstance(b, np.ndarray) or b.dtype.kind in "iub"
    if a_int and b_int:
        b_arr = np.asarray(b)
        if np.any(b_arr < 0):
            # PyTorch: x ** -n for integers is 1 for x == 1, +-1 for x == -1, else 0
            a_arr = np.asarray(a)
            neg = b_arr < 0
            safe = np.power(a_arr, np.where(neg, 0, b_arr))
            odd = (np.abs(b_arr) % 2) == 1
            small = np.where(a_arr == 1, 1, np.where(a_arr == -1, np.where(odd, -1, 1), 0))
            return np.where(neg, small, safe).astype(safe.dtype)
    return np.power(a, b)


def _pow_vjp(ctx, g):
    a, b = ctx.args
    na, nb = ctx.needs_input_grad
    ga = gb = None
    if na:
        if isinstance(b, Tensor):
            ga = g * (b * a ** (b - 1)).conj()
            ga = ga.masked_fill((b == 0) & (a == 0), 0) if not b.is_complex() else ga
        else:
            ga = g * 0 if b == 0 else g * (b * a ** (b - 1)).conj()
    if nb:
        out = a ** b
        if isinstance(a, Tensor):
            gb = (g * (out * a.log()).conj()).masked_fill((a == 0) & (b >= 0), 0) \
                if not (a.is_complex() or b.is_complex()) else g * (out * a.log()).conj()
        else:
            import math
            if a > 0:
                gb = g * (out * math.log(a)).conj()
            else:
                gb = (g * (out * 0)).masked_fill(b < 0, float("nan"))
    return ga, gb


POW = _binary("pow", _pow_kernel, _pow_vjp,
              schema="pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor")


def _maximum_vjp(ctx, g, loses):
    """PyTorch's formula: ties split the gradient, the losing side gets 0; with a NaN
    neither side loses, so both get the gradient."""
    a, b = ctx.args
    h = g * (1 - (a == b).to(g.dtype) * 0.5)
    ga = h.masked_fill(loses(a, b), 0) if ctx.needs_input_grad[0] else None
    gb = h.masked_fill(loses(b, a), 0) if ctx.needs_input_grad[1] else None
    return ga, gb


MAXIMUM = _binary("maximum", np.maximum, lambda ctx, g: _maximum_vjp(ctx, g, lambda a, b: a < b),
                  allowed=NOT_COMPLEX,
                  schema="maximum(Tensor self, Tensor other) -> Tensor")
MINIMUM = _binary("minimum", np.minimum, lambda ctx, g: _maximum_vjp(ctx, g, lambda a, b: a > b),
                  allowed=NOT_COMPLEX,
                  schema="minimum(Tensor self, Tensor other) -> Tensor")

_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal}
for _n, _k in _CMP.items():
    _public(_binary(_n, _k, None, ALWAYS_BOOL, allowed=None if _n in ("eq", "ne") else
                    NOT_COMPLEX, schema=f"{_n}.Tensor(Tensor self, Tensor other) -> Tensor"))
for _n, _k in {"logical_and": np.logical_and, "logical_or": np.logical_or,
               "logical_xor": np.logical_xor}.items():
    _public(_binary(_n, _k, None, ALWAYS_BOOL,
                    schema=f"{_n}(Tensor self, Tensor other) -> Tensor"))
for _n, _k in {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
               "bitwise_xor": np.bitwise_xor}.items():
    _public(_binary(_n, _k, None, DEFAULT, allowed=INTEGRAL,
                    schema=f"{_n}.Tensor(Tensor self, Tensor other) -> Tensor"))
for _op in (MUL, MAXIMUM, MINIMUM, FLOOR_DIVIDE, REMAINDER):
    _public(_op)
for _alias, _target in {"greater": "gt", "greater_equal": "ge", "less": "lt",
                        "less_equal": "le", "not_equal": "ne", "multiply": "mul",
                        "negative": "neg", "absolute": "abs", "max_elementwise": None}.items():
    if _target:
        globals()[_alias] = globals()[_target]
        METHODS[_alias] = globals()[_target]
        __all__.append(_alias)


def _alpha_check(a, b, alpha):
    """PyTorch's alpha rules: a bool alpha only for bool results, no float alpha for ints."""
    res = D.result_dtype((a, b))
    if isinstance(alpha, bool) and res is not D.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and res._kind < 2:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           f"point number (got alpha={alpha} with {res} inputs).")


def add(input, other, *, alpha=1, out=None):
    if alpha.__class__ is not int:
        _alpha_check(input, other, alpha)
    res = dispatch(ADD, (input, other, alpha))
    return res if out is None else write_out(out, res, "add")


def _sub_check(a, b):
    ab = D.scalar_dtype(a) if not isinstance(a, Tensor) else a._dtype
    bb = D.scalar_dtype(b) if not isinstance(b, Tensor) else b._dtype
    if ab is D.bool and bb is D.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if ab is D.bool or bb is D.bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def sub(input, other, *, alpha=1, out=None):
    if (isinstance(input, Tensor) and input._dtype is D.bool) or \
            (isinstance(other, Tensor) and other._dtype is D.bool):
        _sub_check(input, other)
    if alpha.__class__ is not int:
        _alpha_check(input, other, alpha)
    res = dispatch(SUB, (input, other, alpha))
    return res if out is None else write_out(out, res, "sub")


def _pow_check(a, b):
    """A Python negative int exponent of an integer tensor is an error (a tensor one is not)."""
    if isinstance(b, int) and not isinstance(b, bool) and b < 0 and \
            isinstance(a, Tensor) and a._dtype._kind < 2:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def pow(input, exponent, *, out=None):
    _pow_check(input, exponent)
    res = dispatch(POW, (input, exponent))
    return res if out is None else write_out(out, res, "pow")


def rsub(input, other, *, alpha=1):
    return sub(other, input, alpha=alpha)


def div(input, other, *, rounding_mode=None, out=None):
    op = DIV if rounding_mode is None else DIV_ROUND
    res = dispatch(op, (input, other, rounding_mode))
    return res if out is None else write_out(out, res, "div")


def true_divide(input, other, *, out=None):
    return div(input, other, out=out)


subtract, divide = sub, div
__all__ += ["pow", "add", "sub", "rsub", "div", "true_divide", "subtract", "divide"]


def _no_bool_sub(fn):
    """`-` with a bool operand is PyTorch's error, not NumPy's (or a silent int result)."""
    def op(a, b):
        if a._dtype is D.bool or (isinstance(b, Tensor) and b._dtype is D.bool):
            _sub_check(a, b)
        return fn(a, b)
    return op


def _make_methods():
    METHODS["add"] = add
    METHODS["sub"] = sub
    METHODS["subtract"] = sub
    METHODS["div"] = div
    METHODS["divide"] = div
    METHODS["true_divide"] = true_divide
    METHODS["add_"] = lambda self, other, *, alpha=1: inplace(ADD, self, (self, other, alpha))
    METHODS["sub_"] = lambda self, other, *, alpha=1: (
        _sub_check(self, other) if self._dtype is D.bool else None) or inplace(
            SUB, self, (self, other, alpha))
    METHODS["div_"] = lambda self, other, *, rounding_mode=None: inplace(
        DIV if rounding_mode is None else DIV_ROUND, self, (self, other, rounding_mode))
    METHODS["mul_"] = lambda self, other: inplace(MUL, self, (self, other))

    # Python operators
    METHODS["__add__"] = fast_binary(ADD, np.add, (1,))
    METHODS["__radd__"] = fast_binary(ADD, np.add, (1,), reverse=True)
    METHODS["__iadd__"] = lambda a, b: inplace(ADD, a, (a, b, 1))
    _fast_sub = fast_binary(SUB, np.subtract, (1,), lambda d: d if d._kind >= 1 and
                            d.np.itemsize != 2 or d is D.int16 else None)
    METHODS["__sub__"] = _no_bool_sub(_fast_sub)
    _fast_rsub = fast_binary(SUB, np.subtract, (1,), lambda d: d if d._kind == 2 and
                             d.np.itemsize != 2 else None, reverse=True)
    METHODS["__rsub__"] = _no_bool_sub(lambda a, b: _fast_rsub(a, b) if b.__class__ in (float, int)
                              else sub(b, a))
    METHODS["__isub__"] = _no_bool_sub(lambda a, b: inplace(SUB, a, (a, b, 1)))
    METHODS["__mul__"] = fast_binary(MUL, np.multiply)
    METHODS["__rmul__"] = fast_binary(MUL, np.multiply, reverse=True)
    METHODS["__imul__"] = lambda a, b: inplace(MUL, a, (a, b))
    METHODS["__truediv__"] = fast_binary(DIV, np.true_divide, (None,),
                                lambda d: d if d in (D.float32, D.float64, D.complex64,
                                                     D.complex128) else None)
    METHODS["__rtruediv__"] = fast_binary(DIV, np.true_divide, (None,),
                                 lambda d: d if d in (D.float32, D.float64) else None,
                                 reverse=True)
    METHODS["__itruediv__"] = lambda a, b: inplace(DIV, a, (a, b, None))
    # Python 2's name, kept by torch: other / self, also when other is a Tensor
    METHODS["__rdiv__"] = lambda a, b: b.__truediv__(a) if isinstance(b, Tensor) else \
        METHODS["__rtruediv__"](a, b)
    METHODS.update(operator_methods("floordiv", FLOOR_DIVIDE))
    METHODS.update(operator_methods("mod", REMAINDER))
    METHODS["__pow__"] = lambda a, b, mod=None: pow(a, b)
    METHODS["pow"] = pow
    METHODS["pow_"] = lambda self, exponent: (_pow_check(self, exponent) or
                                     inplace(POW, self, (self, exponent)))
    METHODS["__rpow__"] = lambda a, b: dispatch(POW, (b, a))
    METHODS["__ipow__"] = lambda a, b: inplace(POW, a, (a, b))
    METHODS["__neg__"] = _neg
    METHODS["__pos__"] = lambda a: a
    METHODS["__abs__"] = lambda a: abs(a)

    def _invert(a):
        if a._dtype._kind >= 2:
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                            "tensors")
        return bitwise_not(a)
    METHODS["__invert__"] = _invert
    for op_name, fn in (("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor")):
        f = globals()[fn]
        METHODS[f"__{op_name}__"] = (lambda f: lambda a, b: f(a, b))(f)
        METHODS[f"__r{op_name}__"] = (lambda f: lambda a, b: f(b, a))(f)
        METHODS[f"__i{op_name}__"] = (lambda f: lambda a, b: getattr(a, f.__name__ + "_")(b))(f)
    for cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
        ordered = cmp not in ("eq", "ne")
        fb = fast_binary(REGISTRY[cmp], _CMP[cmp], (),
                         (lambda ordered: lambda d: D.bool if (d.np.itemsize != 2 or d is D.int16)
                          and not (ordered and d._kind == 3) else None)(ordered))
        METHODS[f"__{cmp}__"] = (lambda fb: lambda a, b: fb(a, b) if _cmp_ok(b)
                                 else NotImplemented)(fb)


def _neg(a):
    if a._dtype is D.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return dispatch(NEG, (a,))


def _cmp_ok(b):
    return isinstance(b, (Tensor, int, float, bool, complex, np.generic))


_make_methods()


def conj(input):
    """PyTorch 1.7: conj of a real tensor is the tensor itself (no copy)."""
    if not input.is_complex():
        return input
    return conj_physical(input)


def resolve_conj(input):
    return input


def is_conj(input):
    return False


METHODS["conj"] = conj
METHODS["resolve_conj"] = resolve_conj
METHODS["is_conj"] = is_conj
__all__ += ["conj", "resolve_conj", "is_conj"]


def neg(input, *, out=None):
    res = _neg(input)
    return res if out is None else write_out(out, res, "neg")


negative = neg
METHODS["neg"] = METHODS["negative"] = neg

# the in-place spellings of the aliases: x.multiply_ is x.mul_
for _alias, _target in (("absolute_", "abs_"), ("negative_", "neg_"), ("multiply_", "mul_"),
                        ("divide_", "div_"), ("subtract_", "sub_"), ("true_divide_", "div_"),
                        ("greater_", "gt_"), ("greater_equal_", "ge_"), ("less_", "lt_"),
                        ("less_equal_", "le_"), ("not_equal_", "ne_")):
    METHODS[_alias] = METHODS[_target]
