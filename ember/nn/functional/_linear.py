"""nn.functional.linear and bilinear.

Note: `linear` is one registry op (PyTorch's aten::linear, on the CPU autocast
lower-precision list): y = x W^T + b in a single matmul over the flattened batch,
with its own vjp (grad_x = g W, grad_W = g^T x over the batch, grad_b = sum g) and
a decomposition into matmul + add. `bilinear` is a composition (einsum), as
PyTorch's own is built on _trilinear.
"""
import numpy as np

from ... import _dtype as D
from ..._dispatch import dispatch
from ..._tensor import Tensor
from ...ops._registry import register
from ...ops._lowp import cast
from ...ops.matmul import _product, _product_f32, _C10, einsum

__all__ = ["linear", "bilinear"]


def _dtype_name(t):
    return _C10[t.dtype.name]


def _linear_meta(x, w, b):
    if w.ndim not in (1, 2):
        raise RuntimeError(f"linear(): weight must be 1-D or 2-D, got {w.ndim}-D")
    if x.ndim == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are 0D "
                           f"and {w.ndim}D")
    k = w.shape[-1]
    if x.shape[-1] != k:
        rows = int(np.prod(x.shape[:-1]))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{x.shape[-1]} "
                           f"and {k}x{w.shape[0] if w.ndim == 2 else 1})")
    if x.dtype is not w.dtype:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{_dtype_name(x)} != {_dtype_name(w)}")
    if x.dtype is D.bool:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    shape = tuple(x.shape[:-1]) + ((w.shape[0],) if w.ndim == 2 else ())
    if b is not None and w.ndim == 1 and x.ndim in (2, 3):
        raise RuntimeError("mat2 must be a matrix, got 1-D tensor")   # PyTorch's addmm path
    if b is not None:
        if b.dtype is not x.dtype:
            raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                               f"{_dtype_name(b)} != {_dtype_name(x)}")
        # b broadcasts to shape when each of its trailing sizes is 1 or equal (compared
        # size by size, so symbolic batch sizes are not specialized)
        bs = tuple(b.shape)
        ok = len(bs) <= len(shape) and all(
            n == 1 or n == m for n, m in zip(bs[::-1], shape[::-1]))
        if not ok:
            raise RuntimeError(f"The expanded size of the tensor ({shape[-1] if shape else 1})"
                               " must match the existing size "
                               f"({b.shape[-1] if b.ndim else 1}) at non-singleton dimension "
                               f"{len(shape) - 1}.  Target sizes: {list(shape)}.  Tensor "
                               f"sizes: {list(b.shape)}")
    return shape, x.dtype


def _linear_kernel(x, w, b):
    if x.dtype == np.float16 or x.dtype == D.bfloat16.np:   # bias added before rounding
        y = _product_f32(np.matmul, x, w.T)
        if b is not None:
            y += cast(b, np.float32)
        return cast(y, x.dtype)
    y = _product(np.matmul, x, w.T)
    if b is not None:
        y = y + b
    return np.asarray(y, x.dtype)


def _linear_decomp(x, w, b):
    y = x.matmul(w.t() if w.ndim == 2 else w)
    return y if b is None else y + b


def _linear_vjp(ctx, g):
    x, w, b = ctx.args
    nx, nw, nb = ctx.needs_input_grad
    gx = gw = gb = None
    if w.ndim == 1:
        g = g.unsqueeze(-1)
        w2 = w.unsqueeze(0)
    else:
        w2 = w
    if nx:
        gx = g.matmul(w2)
    if nw:
        rows = x.numel() // x.shape[-1] if x.shape[-1] else int(np.prod(x.shape[:-1]))
        gw = g.reshape(rows, g.shape[-1]).t().mm(x.reshape(rows, x.shape[-1]))
        gw = gw.reshape(w.shape)
    if nb:
        gb = g if w.ndim == 2 else g.squeeze(-1)
    return gx, gw, gb


LINEAR = register("linear", _linear_kernel, meta=_linear_meta, vjp=_linear_vjp,
                  decomp=_linear_decomp, check=True, tags=("linalg", "composite"),
                  amp_policy="lower_precision",
                  schema="linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor")


def linear(input, weight, bias=None):
    """y = input @ weight.T + bias."""
    for name, t in (("input", input), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linear(): argument '{name}' (position "
                            f"{1 if name == 'input' else 2}) must be Tensor, not "
                            f"{type(t).__name__}")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"linear(): argument 'bias' (position 3) must be Tensor, not "
                        f"{type(bias).__name__}")
    return dispatch(LINEAR, (input, weight, bias))


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got "
                           f"{weight.ndim}-dimensional")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1] if bias.ndim else 1} but expected "
                           f"{weight.shape[0]}")
    y = einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else y + bias
