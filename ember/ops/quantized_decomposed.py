"""`ember.ops.quantized_decomposed`: PyTorch 2.1's quantize/dequantize graph ops
(`torch.ops.quantized_decomposed.*`, torch/ao/quantization/fx/_decomposed.py).

Note: pt2e's `convert_pt2e` writes these ops into a graph around int8-able ops; the
integers travel in plain int8/uint8/int32 tensors and the quantization parameters are
arguments, so a graph stays ordinary tensors. Each op is a registry op in the
`quantized_decomposed` namespace (`op.name()` is "quantized_decomposed::quantize_per_tensor")
with a NumPy kernel, a meta with PyTorch's checks (AssertionError, as PyTorch's Python
implementation raises), and a decomposition into ember ops, so the compiler emits them as
plain pointwise code and a pattern matcher can find them by name. They are not
differentiable (QAT differentiates the aten fake-quant ops instead).

Numerics as PyTorch's: quantize is `clamp(round(x * (1/scale)) + zero_point)` in float32
(round half to even; float16/bfloat16 input is widened first), dequantize is
`(q.to(out_dtype) - zero_point) * scale`.
"""
import numpy as np

from .. import _dtype as D
from ._registry import namespace_getattr, register

NS = "quantized_decomposed"

# the integer ranges a quantized value may take, per storage dtype (PyTorch's
# _DTYPE_TO_QVALUE_BOUNDS; ember has no uint16 or float8 storage for them)
QVALUE_BOUNDS = {d: (int(np.iinfo(d.np).min), int(np.iinfo(d.np).max))
                 for d in (D.uint8, D.int8, D.int16, D.int32)}
_HALF = (D.float16, D.bfloat16)


__getattr__ = namespace_getattr(NS)   # ember.ops.quantized_decomposed.quantize_per_tensor


# ------------------------------------------------------------------ checks (metas)

def _bounds_check(op, qmin, qmax, dtype):
    if dtype not in QVALUE_BOUNDS:
        raise ValueError(f"{op}: Unsupported dtype: {dtype}")
    lo, hi = QVALUE_BOUNDS[dtype]
    if qmin < lo:
        raise AssertionError(f"{op}: quant_min out of bounds for dtype, "
                             f"quant_min_lower_bound: {lo} quant_min: {qmin}")
    if qmax > hi:
        raise AssertionError(f"{op}: quant_max out of bounds for dtype, "
                             f"quant_max_upper_bound: {hi} quant_max: {qmax}")


def _float_input(op, input):
    if input.dtype not in _HALF and input.dtype is not D.float32:
        raise AssertionError(f"{op}: Expecting input to have dtype torch.float32, but got "
                             f"dtype: {input.dtype}")


def _one_element(op, scale, zero_point):
    if zero_point.numel() != 1:
        raise AssertionError(f"{op}: Expecting zero_point tensor to be one element, but "
                             f"received : {zero_point.numel()}")
    if scale.numel() != 1:
        raise AssertionError(f"{op}: Expecting scale tensor to be one element, but "
                             f"received : {scale.numel()}")


def _axis(op, input, axis):
    if axis >= input.ndim or axis < -max(input.ndim, 1):
        raise AssertionError(f"{op}: Expecting axis to be < {input.ndim}")
    return axis % max(input.ndim, 1)


def _int_input(op, input, dtype):
    if input.dtype is not dtype:
        raise AssertionError(f"{op}: Expecting input to have dtype: {dtype}, but got "
                             f"{input.dtype}")


def _out_dtype(out_dtype):
    return D.float32 if out_dtype is None else out_dtype


# ---------------------------------------------------------- quantize_per_tensor

def _quantize(x, inv_scale, zero_point, qmin, qmax, dtype):
    """clamp(rint(x * inv_scale) + zero_point, qmin, qmax) as `dtype`; x is widened to
    float32 (or the promoted float type of a per-channel inv_scale)."""
    comp = np.result_type(np.float32, getattr(inv_scale, "dtype", np.float32))
    x = x.astype(comp)
    q = np.multiply(x, np.asarray(inv_scale, comp), out=x if x.ndim else None)
    q = np.rint(q, out=q if q.ndim else None)
    q = np.add(q, np.asarray(zero_point).astype(comp), out=q if q.ndim else None)
    q = np.clip(q, comp.type(qmin), comp.type(qmax), out=q if q.ndim else None)
    return np.asarray(q).astype(dtype.np)


def _qpt_kernel(x, scale, zero_point, qmin, qmax, dtype):
    return _quantize(x, np.float32(1.0 / scale), np.float32(zero_point), qmin, qmax, dtype)


def _qpt_meta(x, scale, zero_point, qmin, qmax, dtype):
    op = "quantized_decomposed.quantize_per_tensor"
    _float_input(op, x)
    _bounds_check(op, qmin, qmax, dtype)
    return tuple(x.shape), dtype


def _qpt_decomp(x, scale, zero_point, qmin, qmax, dtype):
    if x.dtype in _HALF:
        x = x.float()
    return ((x * (1.0 / scale)).round() + zero_point).clamp(qmin, qmax).to(dtype)


def _qpt_tensor_kernel(x, scale, zero_point, qmin, qmax, dtype):
    return _qpt_kernel(x, float(scale.reshape(-1)[0]), int(zero_point.reshape(-1)[0]),
                       qmin, qmax, dtype)


def _qpt_tensor_meta(x, scale, zero_point, qmin, qmax, dtype):
    _one_element("quantized_decomposed.quantize_per_tensor.tensor", scale, zero_point)
    return _qpt_meta(x, 1.0, 0, qmin, qmax, dtype)


def _qpt_tensor_decomp(x, scale, zero_point, qmin, qmax, dtype):
    """The scalar form with the tensors' values: 1/scale in float64, then float32 (the
    float the scalar form multiplies by)."""
    if x.dtype in _HALF:
        x = x.float()
    inv = scale.reshape(()).double().reciprocal().float()
    q = (x * inv).round() + zero_point.reshape(()).float()
    return q.clamp(qmin, qmax).to(dtype)


# -------------------------------------------------------- dequantize_per_tensor

def _dequantize(q, scale, zero_point, out_dtype):
    """(q.to(out_dtype) - zero_point) * scale, each step rounded to out_dtype."""
    comp = np.dtype(np.float32) if out_dtype in _HALF else out_dtype.np
    out = np.asarray(q.astype(out_dtype.np).astype(comp))
    out = np.subtract(out, comp.type(zero_point), out=out if out.ndim else None)
    if out_dtype in _HALF:
        out = out.astype(out_dtype.np).astype(comp)
    out = np.multiply(out, comp.type(scale), out=out if out.ndim else None)
    return np.asarray(out).astype(out_dtype.np, copy=False)


def _dqpt_kernel(q, scale, zero_point, qmin, qmax, dtype, out_dtype=None):
    return _dequantize(q, scale, zero_point, _out_dtype(out_dtype))


def _dqpt_meta(q, scale, zero_point, qmin, qmax, dtype, out_dtype=None):
    op = "quantized_decomposed.dequantize_per_tensor"
    _int_input(op, q, dtype)
    if dtype not in QVALUE_BOUNDS:
        raise ValueError(f"{op}: Unsupported dtype in dequantize_per_tensor: {dtype}")
    return tuple(q.shape), _out_dtype(out_dtype)


def _dqpt_decomp(q, scale, zero_point, qmin, qmax, dtype, out_dtype=None):
    return (q.to(_out_dtype(out_dtype)) - zero_point) * scale


def _dqpt_tensor_kernel(q, scale, zero_point, qmin, qmax, dtype, out_dtype=None):
    return _dequantize(q, float(scale.reshape(-1)[0]), int(zero_point.reshape(-1)[0]),
                       _out_dtype(out_dtype))


def _dqpt_tensor_meta(q, scale, zero_point, qmin, qmax, dtype, out_dtype=None):
    _one_element("quantized_decomposed.dequantize_per_tensor.tensor", scale, zero_point)
    return _dqpt_meta(q, 1.0, 0, qmin, qmax, dtype, out_dtype)


def _dqpt_tensor_decomp(q, scale, zero_point, qmin, qmax, dtype, out_dtype=None):
    """The scalar form: zero_point and scale enter as 0-d tensors, which (as Python
    numbers do) take the dtype of `q.to(out_dtype)`."""
    out = _out_dtype(out_dtype)
    return (q.to(out) - zero_point.reshape(()).to(out)) * scale.reshape(()).to(out)


# ------------------------------------------------------------------ per channel

def _channel_shape(ndim, axis, n):
    shape = [1] * ndim
    shape[axis] = n
    return shape


def _qpc_kernel(x, scales, zero_points, axis, qmin, qmax, dtype):
    axis %= max(x.ndim, 1)
    shape = _channel_shape(x.ndim, axis, scales.shape[0])
    inv = np.asarray(1.0 / scales).astype(scales.dtype).reshape(shape)
    return _quantize(x, inv, zero_points.reshape(shape), qmin, qmax, dtype)


def _qpc_meta(x, scales, zero_points, axis, qmin, qmax, dtype):
    op = "quantized_decomposed.quantize_per_channel"
    _float_input(op, x)
    _axis(op, x, axis)
    _bounds_check(op, qmin, qmax, dtype)
    return tuple(x.shape), dtype


def _qpc_decomp(x, scales, zero_points, axis, qmin, qmax, dtype):
    if x.dtype in _HALF:
        x = x.float()
    shape = _channel_shape(x.ndim, axis % max(x.ndim, 1), scales.shape[0])
    q = (x * (1.0 / scales).reshape(shape)).round() + zero_points.reshape(shape)
    return q.clamp(qmin, qmax).to(dtype)


def _dqpc_kernel(q, scales, zero_points, axis, qmin, qmax, dtype, out_dtype=None):
    """(q - zero_points) * scales in PyTorch's promoted types, then out_dtype."""
    axis %= max(q.ndim, 1)
    shape = _channel_shape(q.ndim, axis, scales.shape[0])
    qd = D.from_numpy_dtype(q.dtype)
    if zero_points is not None:
        zd = D.from_numpy_dtype(zero_points.dtype)
        qd = D.promote_types(qd, zd)
        q = q.astype(qd.np) - zero_points.reshape(shape).astype(qd.np)
    comp = D.promote_types(qd, D.from_numpy_dtype(scales.dtype))
    res = q.astype(comp.np) * scales.reshape(shape).astype(comp.np)
    return np.asarray(res).astype(_out_dtype(out_dtype).np)


def _dqpc_meta(q, scales, zero_points, axis, qmin, qmax, dtype, out_dtype=None):
    op = "quantized_decomposed.dequantize_per_channel"
    _int_input(op, q, dtype)
    _axis(op, q, axis)
    _bounds_check(op, qmin, qmax, dtype)
    return tuple(q.shape), _out_dtype(out_dtype)


def _dqpc_decomp(q, scales, zero_points, axis, qmin, qmax, dtype, out_dtype=None):
    shape = _channel_shape(q.ndim, axis % max(q.ndim, 1), scales.shape[0])
    if zero_points is not None:
        q = q - zero_points.reshape(shape)
    return (q * scales.reshape(shape)).to(_out_dtype(out_dtype))


# --------------------------------------------------------------- choose_qparams

def _validate_qmin_qmax(qmin, qmax):
    if not qmin <= 0 <= qmax:
        raise AssertionError("Used-specified quantization range must include 0.")
    if qmin >= qmax:
        raise AssertionError("qmin must be strictly less than qmax for user-specified "
                             "quantization range.")


def _choose_meta(symmetric):
    op = "quantized_decomposed.choose_qparams" + ("_symmetric" if symmetric else "")

    def meta(x, qmin, qmax, eps, dtype):
        if x.dtype not in (D.float32, D.float16, D.bfloat16):
            raise AssertionError(f"{op}.tensor: Expecting input to have dtype "
                                 f"torch.float32/16/b16, but got dtype: {x.dtype}")
        if dtype not in QVALUE_BOUNDS:
            raise AssertionError(f"{op}.tensor: Expecting target dtype to be one of "
                                 f"{list(QVALUE_BOUNDS)}, but got: {dtype}")
        _validate_qmin_qmax(qmin, qmax)
        return ((1,), D.float64), ((1,), D.int64)
    return meta


def _choose_decomp(symmetric):
    """PyTorch's determine_qparams on the tensor's (min, max): the range always
    includes 0, scale >= eps (eps as float32); affine zero points are rounded into
    [qmin, qmax], symmetric ones are 0 (128 for uint8)."""
    def decomp(x, qmin, qmax, eps, dtype):
        lo, hi = x.amin(), x.amax()
        lo, hi = lo.clamp(max=0), hi.clamp(min=0)
        eps_t = _tensor([eps], D.float32)
        if symmetric:
            scale = (-lo).maximum(hi) / (float(qmax - qmin) / 2)
            scale = scale.maximum(eps_t)
            zp = 128 if dtype is D.uint8 else 0
            zero_point = _tensor([zp], D.int64)
        else:
            scale = ((hi - lo) / float(qmax - qmin)).maximum(eps_t)
            zero_point = (qmin - (lo / scale).round().to(D.int32)).clamp(qmin, qmax)
        return scale.to(D.float64), zero_point.to(D.int64)
    return decomp


def _tensor(values, dtype):
    from .creation import tensor
    return tensor(values, dtype=dtype)


def _choose_kernel(symmetric):
    decomp = _choose_decomp(symmetric)

    def kernel(x, qmin, qmax, eps, dtype):
        from .creation import from_numpy
        scale, zero_point = decomp(from_numpy(x), qmin, qmax, eps, dtype)
        return scale._data, zero_point._data
    return kernel


# ------------------------------------------------------------------ registration

def _register(key, schema, kernel, meta, decomp, tags=()):
    return register(key, kernel, meta=meta, decomp=decomp, tags=tags, schema=schema,
                    namespace=NS, check=True)


QUANTIZE_PER_TENSOR = _register(
    "quantized_decomposed_quantize_per_tensor",
    "quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, "
    "int quant_max, ScalarType dtype) -> Tensor",
    _qpt_kernel, _qpt_meta, _qpt_decomp, ("pointwise",))
QUANTIZE_PER_TENSOR_TENSOR = _register(
    "quantized_decomposed_quantize_per_tensor_tensor",
    "quantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, "
    "int quant_min, int quant_max, ScalarType dtype) -> Tensor",
    _qpt_tensor_kernel, _qpt_tensor_meta, _qpt_tensor_decomp)
DEQUANTIZE_PER_TENSOR = _register(
    "quantized_decomposed_dequantize_per_tensor",
    "dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, "
    "int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
    _dqpt_kernel, _dqpt_meta, _dqpt_decomp, ("pointwise",))
DEQUANTIZE_PER_TENSOR_TENSOR = _register(
    "quantized_decomposed_dequantize_per_tensor_tensor",
    "dequantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, "
    "int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
    _dqpt_tensor_kernel, _dqpt_tensor_meta, _dqpt_tensor_decomp)
QUANTIZE_PER_CHANNEL = _register(
    "quantized_decomposed_quantize_per_channel",
    "quantize_per_channel(Tensor input, Tensor scales, Tensor zero_points, int axis, "
    "int quant_min, int quant_max, ScalarType dtype) -> Tensor",
    _qpc_kernel, _qpc_meta, _qpc_decomp)
DEQUANTIZE_PER_CHANNEL = _register(
    "quantized_decomposed_dequantize_per_channel",
    "dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, "
    "int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
    _dqpc_kernel, _dqpc_meta, _dqpc_decomp)
CHOOSE_QPARAMS = _register(
    "quantized_decomposed_choose_qparams_tensor",
    "choose_qparams.tensor(Tensor input, int quant_min, int quant_max, float eps, "
    "ScalarType dtype) -> (Tensor, Tensor)",
    _choose_kernel(False), _choose_meta(False), _choose_decomp(False))
CHOOSE_QPARAMS_SYMMETRIC = _register(
    "quantized_decomposed_choose_qparams_symmetric_tensor",
    "choose_qparams_symmetric.tensor(Tensor input, int quant_min, int quant_max, float eps, "
    "ScalarType dtype) -> (Tensor, Tensor)",
    _choose_kernel(True), _choose_meta(True), _choose_decomp(True))
