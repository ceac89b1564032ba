"""Complex numbers (PyTorch 1.6): complex(real, imag), polar(abs, angle), angle, and the
conjugate/negative bit queries.

Note: ember stores complex tensors as NumPy complex64/complex128 arrays; `conj()` is
eager (conj_physical) except on real tensors, where it returns the tensor itself
(PyTorch 1.7), so there is no lazy conjugate or negative bit: resolve_conj/resolve_neg
return their input and is_conj/is_neg are False. view_as_real/view_as_complex and
real/imag are views (here); conj/conj_physical are in pointwise.py.
Gradients follow PyTorch's convention: for a real input x of a complex output z the
gradient is real(conj(g) * dz/dx), for complex inputs the conjugate Wirtinger form.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from ._elementwise import (broadcast_shapes, pointwise, type_name, write_out,
                           COMPLEX_TO_FLOAT)
from ._registry import register
from .shape import select

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = ["complex", "polar", "angle", "resolve_neg", "is_neg", "view_as_real",
           "view_as_complex", "real", "imag"]

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


METHODS["angle"] = angle
METHODS["resolve_neg"] = resolve_neg
METHODS["is_neg"] = is_neg


# ------------------------------------------------------------------- complex views

def _view_as_real_kernel(a):
    r = a.real
    return np.lib.stride_tricks.as_strided(r, shape=a.shape + (2,),
                                           strides=r.strides + (r.itemsize,))


def _view_as_complex_kernel(a):
    c = np.complex64 if a.dtype == np.float32 else np.complex128
    first = a[..., 0]
    pair = np.lib.stride_tricks.as_strided(first, shape=first.shape + (2,),
                                           strides=first.strides + (a.itemsize,))
    return pair.view(c)[..., 0]


def _view_as_real_meta(a):
    if not a.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return tuple(a.shape) + (2,), a.dtype.to_real()


def _view_as_complex_meta(a):
    """dtype and size checks; the stride checks need real strides (the wrapper's)."""
    d = a.dtype
    if d is D.float16:
        raise NotImplementedError("view_as_complex: ember has no complex32 (ComplexHalf) dtype")
    if d.name not in ("float32", "float64"):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, "
                           f"but got a tensor of scalar type: {type_name(d)}")
    if a.dim() == 0 or a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return tuple(a.shape[:-1]), D.complex64 if d is D.float32 else D.complex128


VIEW_AS_REAL = register("view_as_real", _view_as_real_kernel, view=True, save=(),
                        meta=_view_as_real_meta,
                        vjp=lambda ctx, g: (view_as_complex(g.contiguous()),),
                        schema="view_as_real(Tensor(a) self) -> Tensor(a)", tags=("prim",))
VIEW_AS_COMPLEX = register("view_as_complex", _view_as_complex_kernel, view=True, save=(),
                           meta=_view_as_complex_meta, amp_policy="fp32",
                           vjp=lambda ctx, g: (view_as_real(g.contiguous()),),
                           schema="view_as_complex(Tensor(a) self) -> Tensor(a)", tags=("prim",))


def view_as_real(input):
    _view_as_real_meta(input)
    return dispatch(VIEW_AS_REAL, (input,))


def view_as_complex(input):
    _view_as_complex_meta(input)
    st = input.stride()
    if st[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in st[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return dispatch(VIEW_AS_COMPLEX, (input,))


def real(input):
    """The real part as a view (the input itself for real tensors)."""
    if not input._dtype.is_complex:
        return input
    return select(view_as_real(input), -1, 0)


def imag(input):
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return select(view_as_real(input), -1, 1)


def _set_part(get):
    def setter(self, value):
        get(self).copy_(value)
    return setter


METHODS["real"] = property(real, _set_part(real))
METHODS["imag"] = property(imag, _set_part(imag))
