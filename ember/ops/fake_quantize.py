"""aten's fake-quantize ops: quantize and dequantize in one float op, for QAT.

Note: numerics as PyTorch's CPU kernels: inv_scale = 1.0f / float(scale) in float32,
q = int(zero_point + nearbyint(x * inv_scale)) (with a float per-channel zero point:
nearbyint(x * inv_scale + zero_point)), out = (clamp(q, quant_min, quant_max) -
zero_point) * scale. The gradient is the straight-through estimator: the incoming
gradient where quant_min <= q <= quant_max, zero elsewhere (PyTorch's cachemask).
"""
import numpy as np

from .. import _dtype as D
from ._registry import register

__all__ = ["fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"]

_FLOATS = (D.float16, D.bfloat16, D.float32, D.float64)


def _comp(x):
    """The dtype the kernel computes in: float32 for half inputs, else the input's."""
    return np.float32 if x.dtype.itemsize == 2 else x.dtype


def _fq(x, inv_scale, zero_point, scale, qmin, qmax, float_zp=False, per_channel=False):
    """(out, mask) on arrays; inv_scale/zero_point/scale broadcast against x."""
    comp = _comp(x)
    xf = x.astype(comp)
    if float_zp:
        q = np.rint((xf * inv_scale).astype(np.float32) + zero_point)
    else:
        q = np.rint(xf * inv_scale) + zero_point
    mask = (q >= qmin) & (q <= qmax)
    # (q - zero_point) * scale as PyTorch's kernels: in float32 per tensor, in float64
    # per channel (then half precision goes through float32)
    acc = np.float64 if per_channel else np.float32
    out = (np.clip(q, qmin, qmax).astype(acc) - np.asarray(zero_point, acc)) * \
        np.asarray(scale, acc)
    out = np.asarray(out)
    if x.dtype.itemsize == 2:
        out = out.astype(np.float32)
    return out.astype(x.dtype), mask


def _dequant(q, zero_point, scale, dtype, per_channel=False):
    """(q - zero_point) * scale as the kernel computes it (see _fq)."""
    from .._tensor import Tensor
    acc = D.float64 if per_channel else D.float32
    zp = zero_point.to(acc) if isinstance(zero_point, Tensor) else zero_point
    sc = scale.to(acc) if isinstance(scale, Tensor) else float(np.float32(scale))
    out = (q.to(acc) - zp) * sc
    return (out.float() if dtype.itemsize == 2 else out).to(dtype)


def _check_range(qmin, qmax):
    if qmin > qmax:
        raise RuntimeError("`quant_min` should be less than or equal to `quant_max`.")


def _check_input(name, x):
    if x.dtype not in _FLOATS:
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{_TYPE_NAMES.get(x.dtype, x.dtype)}'")


_TYPE_NAMES = {D.int32: "Int", D.int64: "Long", D.int16: "Short", D.int8: "Char",
               D.uint8: "Byte", D.bool: "Bool"}


# ---------------------------------------------------------------- per tensor

def _pt_kernel(x, scale, zero_point, qmin, qmax):
    sc = np.float32(scale)
    return _fq(x, np.float32(1) / sc, zero_point, sc, qmin, qmax)[0]


def _pt_meta(x, scale, zero_point, qmin, qmax):
    _check_input("fake_quantize_tensor_cachemask_kernel_type_handling", x)
    _check_range(qmin, qmax)
    if not qmin <= zero_point <= qmax:
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    return tuple(x.shape), x.dtype


def _ste(g, x, inv_scale, zero_point, qmin, qmax):
    """g where zero_point + round(x * inv_scale) lies in [qmin, qmax]."""
    xf = x.float() if x.dtype in (D.float16, D.bfloat16) else x
    q = (xf * inv_scale).round() + zero_point
    return g * ((q >= qmin) & (q <= qmax))


def _with_ste(out, x, q, qmin, qmax):
    """`out`'s values with the straight-through gradient: x's gradient where the
    unclamped q is in range (round's own derivative is zero almost everywhere)."""
    mask = (q >= qmin) & (q <= qmax)
    return out.detach() + (x - x.detach()) * mask


def _pt_vjp(ctx, g):
    x, scale, zero_point, qmin, qmax = ctx.args
    inv = float(np.float32(1) / np.float32(scale))
    return _ste(g, x, inv, zero_point, qmin, qmax), None, None, None, None


def _pt_decomp(x, scale, zero_point, qmin, qmax):
    sc = float(np.float32(scale))
    inv = float(np.float32(1) / np.float32(scale))
    xf = x.float() if x.dtype in (D.float16, D.bfloat16) else x
    q = (xf * inv).round() + zero_point
    return _with_ste(_dequant(q.clamp(qmin, qmax), zero_point, sc, x.dtype), x, q, qmin, qmax)


FAKE_QUANTIZE_PER_TENSOR = register(
    "fake_quantize_per_tensor_affine", _pt_kernel, meta=_pt_meta, vjp=_pt_vjp, save=(0,),
    decomp=_pt_decomp, tags=("pointwise",), check=True,
    schema="fake_quantize_per_tensor_affine(Tensor self, float scale, int zero_point, "
           "int quant_min, int quant_max) -> Tensor")


def _ptt_kernel(x, scale, zero_point, qmin, qmax):
    return _pt_kernel(x, float(scale.reshape(-1)[0]), int(zero_point.reshape(-1)[0]),
                      qmin, qmax)


def _ptt_meta(x, scale, zero_point, qmin, qmax):
    for t in (scale, zero_point):
        if t.numel() != 1:
            raise RuntimeError(f"a Tensor with {t.numel()} elements cannot be converted to "
                               "Scalar")
    _check_input("fake_quantize_tensor_cachemask_kernel_type_handling", x)
    _check_range(qmin, qmax)
    return tuple(x.shape), x.dtype


def _tensor_qparams(scale, zero_point):
    """(inv_scale, scale, zero_point) as 0-d float32, float32 and int64 tensors."""
    sc = scale.reshape(()).float()
    return sc.reciprocal(), sc, zero_point.reshape(()).long()


def _ptt_vjp(ctx, g):
    x, scale, zero_point, qmin, qmax = ctx.args
    inv, _, zp = _tensor_qparams(scale, zero_point)
    return _ste(g, x, inv, zp, qmin, qmax), None, None, None, None


def _ptt_decomp(x, scale, zero_point, qmin, qmax):
    inv, sc, zp = _tensor_qparams(scale, zero_point)
    xf = x.float() if x.dtype in (D.float16, D.bfloat16) else x
    q = (xf * inv).round() + zp
    return _with_ste(_dequant(q.clamp(qmin, qmax), zp, sc, x.dtype), x, q, qmin, qmax)


FAKE_QUANTIZE_PER_TENSOR_TENSOR = register(
    "fake_quantize_per_tensor_affine_tensor_qparams", _ptt_kernel, meta=_ptt_meta,
    vjp=_ptt_vjp, save=(0, 1, 2), decomp=_ptt_decomp, check=True,
    schema="fake_quantize_per_tensor_affine.tensor_qparams(Tensor self, Tensor scale, "
           "Tensor zero_point, int quant_min, int quant_max) -> Tensor")


# --------------------------------------------------------------- per channel

def _channel_shape(ndim, axis, n):
    shape = [1] * ndim
    shape[axis] = n
    return shape


def _pc_kernel(x, scale, zero_point, axis, qmin, qmax):
    shape = _channel_shape(x.ndim, axis % x.ndim, scale.shape[0])
    sc = scale.astype(np.float32).reshape(shape)
    float_zp = zero_point.dtype.kind == "f"
    zp = zero_point.astype(np.float32 if float_zp else np.int64).reshape(shape)
    return _fq(x, np.float32(1) / sc, zp, sc, qmin, qmax, float_zp, True)[0]


def _pc_meta(x, scale, zero_point, axis, qmin, qmax):
    _check_input("fake_quantize_channel_cachemask_cpu_type_handling", x)
    if scale.dtype not in (D.float32, D.bfloat16):
        raise RuntimeError(f"Scale must be Float or BFloat16, found {_name(scale.dtype)}")
    if zero_point.dtype not in (D.int32, D.float32, D.float16):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found "
                           f"{_name(zero_point.dtype)}")
    if scale.ndim != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.ndim != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if not -x.ndim <= axis < x.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-x.ndim}, {x.ndim - 1}], but got {axis})")
    if scale.numel() != x.shape[axis]:
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input "
                           "tensor")
    _check_range(qmin, qmax)
    if zero_point.dtype is D.int32 and zero_point.numel() and \
            not (qmin <= int(zero_point._data.min()) and int(zero_point._data.max()) <= qmax):
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    return tuple(x.shape), x.dtype


def _name(d):
    return {D.float64: "Double", D.float16: "Half", D.int64: "Long"}.get(d) or \
        _TYPE_NAMES.get(d, str(d))


def _pc_qparams(x, scale, zero_point, axis):
    shape = _channel_shape(x.ndim, axis % x.ndim, scale.shape[0])
    sc = scale.float().reshape(shape)
    float_zp = zero_point.dtype.is_floating_point
    zp = zero_point.reshape(shape).float() if float_zp else zero_point.reshape(shape).long()
    return sc.reciprocal(), sc, zp, float_zp


def _pc_round(xf, inv, zp, float_zp):
    return (xf * inv + zp).round() if float_zp else (xf * inv).round() + zp


def _pc_vjp(ctx, g):
    x, scale, zero_point, axis, qmin, qmax = ctx.args
    inv, _, zp, float_zp = _pc_qparams(x, scale, zero_point, axis)
    xf = x.float() if x.dtype in (D.float16, D.bfloat16) else x
    q = _pc_round(xf, inv, zp, float_zp)
    return g * ((q >= qmin) & (q <= qmax)), None, None, None, None, None


def _pc_decomp(x, scale, zero_point, axis, qmin, qmax):
    inv, sc, zp, float_zp = _pc_qparams(x, scale, zero_point, axis)
    xf = x.float() if x.dtype in (D.float16, D.bfloat16) else x
    q = _pc_round(xf, inv, zp, float_zp)
    return _with_ste(_dequant(q.clamp(qmin, qmax), zp, sc, x.dtype, True), x, q, qmin, qmax)


FAKE_QUANTIZE_PER_CHANNEL = register(
    "fake_quantize_per_channel_affine", _pc_kernel, meta=_pc_meta, vjp=_pc_vjp,
    save=(0, 1, 2), decomp=_pc_decomp, check=True,
    schema="fake_quantize_per_channel_affine(Tensor self, Tensor scale, Tensor zero_point, "
           "int axis, int quant_min, int quant_max) -> Tensor")


# ---------------------------------------------------------------- functions

def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """torch.fake_quantize_per_tensor_affine: float scale/zero_point, or 1-element tensors."""
    from .._dispatch import dispatch
    from .._tensor import Tensor
    if isinstance(scale, Tensor) or isinstance(zero_point, Tensor):
        return dispatch(FAKE_QUANTIZE_PER_TENSOR_TENSOR,
                        (input, scale, zero_point, quant_min, quant_max))
    return dispatch(FAKE_QUANTIZE_PER_TENSOR,
                    (input, float(scale), int(zero_point), quant_min, quant_max))


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """torch.fake_quantize_per_channel_affine."""
    from .._dispatch import dispatch
    return dispatch(FAKE_QUANTIZE_PER_CHANNEL,
                    (input, scale, zero_point, axis, quant_min, quant_max))
