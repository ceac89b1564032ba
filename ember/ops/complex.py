"""Complex numbers (PyTorch 1.6): complex(real, imag), polar(abs, angle), angle, and the
conjugate/negative bit queries.

Note: ember stores complex tensors as NumPy complex64/complex128 arrays; `conj()` is
eager (conj_physical) except on real tensors, where it returns the tensor itself
(PyTorch 1.7), so there is no lazy conjugate or negative bit: resolve_conj/resolve_neg
return their input and is_conj/is_neg are False. view_as_real/view_as_complex and
real/imag (views) live in shape.py, conj/conj_physical in pointwise.py.
Gradients follow PyTorch's convention: for a real input x of a complex output z the
gradient is real(conj(g) * dz/dx), for complex inputs the conjugate Wirtinger form.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor
from ._elementwise import (broadcast_shapes, pointwise, type_name, write_out,
                           COMPLEX_TO_FLOAT)
from ._registry import register

__all__ = ["complex", "polar", "angle", "resolve_neg", "is_neg"]

_TO_COMPLEX = {"float32": D.complex64, "float64": D.complex128}


def _check_parts(a, b, name):
    """PyTorch's checks for complex()/polar(): two float tensors of one dtype."""
    da, db = a.dtype, b.dtype
    if da is not db:
        raise RuntimeError(f"Expected object of scalar type {type_name(da)} but got scalar type "
                           f"{type_name(db)} for second argument")
    if da.name not in ("float16", "float32", "float64"):
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{type_name(da)} and {type_name(db)}")
    if da is D.float16:
        if name == "polar":
            raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'")
        raise NotImplementedError(f"{name}: ember has no complex32 (ComplexHalf) dtype")
    return broadcast_shapes(tuple(a.shape), tuple(b.shape)), _TO_COMPLEX[da.name]


def _complex_kernel(re, im):
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.result_type(re, 1j))
    out.real, out.imag = re, im
    return out


def _polar_kernel(r, theta):
    return _complex_kernel(r * np.cos(theta), r * np.sin(theta))


def _complex_vjp(ctx, g):
    return g.real, g.imag


def _polar_vjp(ctx, g):
    """d z/d abs = e^{i angle}, d z/d angle = i z (PyTorch multiplies by sgn(z) instead
    of e^{i angle}, which differs only where abs <= 0)."""
    r, theta = ctx.args
    na, nt = ctx.needs_input_grad
    gc = g.conj()
    ga = (gc * complex(theta.cos(), theta.sin())).real if na else None
    gt = (gc * complex(-r * theta.sin(), r * theta.cos())).real if nt else None
    return ga, gt


def _parts_meta(name):
    def meta(a, b):
        return _check_parts(a, b, name)
    return meta


COMPLEX = register("complex", _complex_kernel, meta=_parts_meta("complex"), vjp=_complex_vjp,
                   save=(), check=True, tags=("prim", "pointwise"),
                   schema="complex(Tensor real, Tensor imag) -> Tensor")
def _polar_decomp(abs, angle):
    """complex(abs cos(angle), abs sin(angle))."""
    from .. import _prims as P
    return P.complex(P.mul(abs, P.cos(angle)), P.mul(abs, P.sin(angle)))


POLAR = register("polar", _polar_kernel, meta=_parts_meta("polar"), vjp=_polar_vjp,
                 check=True, tags=("pointwise",), amp_policy="fp32", decomp=_polar_decomp,
                 schema="polar(Tensor abs, Tensor angle) -> Tensor")


def complex(real, imag, *, out=None):
    res = dispatch(COMPLEX, (real, imag))
    return res if out is None else write_out(out, res, "complex")


def polar(abs, angle, *, out=None):
    res = dispatch(POLAR, (abs, angle))
    return res if out is None else write_out(out, res, "polar")


# ------------------------------------------------------------------------ angle

def _angle_kernel(a):
    if a.dtype.kind == "c":
        return np.angle(a)
    return np.where(np.isnan(a), a, np.where(a < 0, np.pi, 0)).astype(a.dtype)


def _angle_vjp(ctx, g):
    """i z / |z|^2 (zero at z == 0) for complex z; real inputs have a zero gradient."""
    z = ctx.args[0]
    if not z.is_complex():
        return (g * 0,)
    from .indexing import where
    return (where(z == 0, 0, g * z * 1j / z.abs().square()),)


ANGLE = pointwise("angle", _angle_kernel, 1, COMPLEX_TO_FLOAT, vjp=_angle_vjp,
                  schema="angle(Tensor self) -> Tensor", tags=("pointwise", "prim"))


def angle(input, *, out=None):
    """The argument of each element; a real tensor gives 0 or pi (NaN stays NaN) and an
    integer or bool one is first made the default float dtype, as in PyTorch."""
    if input.dtype._kind < 2:
        input = input.to(D.get_default_dtype())
    res = dispatch(ANGLE, (input,))
    return res if out is None else write_out(out, res, "angle")


def resolve_neg(input):
    """ember has no lazy negative bit: the tensor itself."""
    return input


def is_neg(input):
    return False


Tensor.angle = angle
Tensor.resolve_neg = resolve_neg
Tensor.is_neg = is_neg
