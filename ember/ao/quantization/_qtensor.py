"""Quantized tensors: `ember.quantize_per_tensor(x, 0.1, 3, ember.qint8)` and friends.

Note: representation. A quantized tensor is a `QuantizedTensor` (an ember.Tensor subclass)
whose `_data` is the NumPy integer array of its values (int8 / uint8 / int32; quint4x2 and
quint2x4 keep one value per byte, unpacked) and whose `_dtype` is the quantized dtype; the
quantizer (scheme, scale(s), zero point(s), axis) sits in attributes. Why a subclass on its
own 'quantized' registry backend, as ember.sparse does: `OpDef.run_kernel` already routes a
tensor whose `_backend` is not 'cpu' to `op.kernels['quantized']` or to the `BACKENDS`
fallback, so the shape ops PyTorch's QuantizedCPU backend has (view, permute, select, slice,
clone, ...) run on the integers and keep the quantizer, every other op raises PyTorch's
"Could not run 'aten::add.Tensor' with arguments from the 'QuantizedCPU' backend"
NotImplementedError, and dense calls pay nothing. Shape metadata (`shape`, `stride()`,
`element_size()`) reads the integer array and is right as it is.

Numerics as PyTorch's CPU quantizer: per tensor q = clamp(nearbyint(fma(x, 1.0f/scale, zp)))
(FBGEMM's fused multiply-add), per channel nearbyint(float(x * (1.0f/scale)) + zp) unfused;
dequantize (q - zp) * scale in float per tensor, in double per channel.
"""
import numpy as np

from ... import _dtype as D
from ..._dispatch import _disabled_torch_function_impl
from ..._tensor import Tensor, wrap, wrap_view
from ...ops._registry import BACKENDS, REGISTRY

__all__ = ["QuantizedTensor", "quantize_per_tensor", "quantize_per_channel",
           "quantize_per_tensor_dynamic", "dequantize"]

# quantized dtype -> (storage dtype, quant_min, quant_max)
QRANGE = {D.qint8: (D.int8, -128, 127), D.quint8: (D.uint8, 0, 255),
          D.qint32: (D.int32, -2**31, 2**31 - 1), D.quint4x2: (D.uint8, 0, 15),
          D.quint2x4: (D.uint8, 0, 3)}
_PER_TENSOR = (D.per_tensor_affine, D.per_tensor_symmetric)
_SCALAR_NAMES = {D.float64: "Double", D.float16: "Half", D.bfloat16: "BFloat16",
                 D.int32: "Int", D.int64: "Long", D.int16: "Short", D.int8: "Char",
                 D.uint8: "Byte", D.bool: "Bool", D.qint8: "QInt8", D.quint8: "QUInt8",
                 D.qint32: "QInt32", D.quint4x2: "QUInt4x2", D.quint2x4: "QUInt2x4"}


def _name(d):
    return _SCALAR_NAMES.get(d, str(d))


class QuantizedTensor(Tensor):
    """A tensor of integers with the quantizer that maps them to reals."""

    __torch_function__ = _disabled_torch_function_impl
    is_quantized = True

    # -- the quantizer ----------------------------------------------------------
    def qscheme(self):
        return self._qscheme

    def q_scale(self):
        self._expect_per_tensor()
        return self._scale

    def q_zero_point(self):
        self._expect_per_tensor()
        return self._zero_point

    def q_per_channel_scales(self):
        self._expect_per_channel()
        return self._scales.clone()

    def q_per_channel_zero_points(self):
        self._expect_per_channel()
        return self._zero_points.clone()

    def q_per_channel_axis(self):
        self._expect_per_channel()
        return self._axis

    def _expect_per_tensor(self):
        if self._qscheme not in _PER_TENSOR:
            raise RuntimeError("Expected quantizer->qscheme() == kPerTensorAffine to be true, "
                               "but got false.")

    def _expect_per_channel(self):
        if self._qscheme in _PER_TENSOR:
            raise RuntimeError("Expected quantizer->qscheme() == kPerChannelAffine || "
                               "quantizer->qscheme() == kPerChannelAffineFloatQParams to be "
                               "true, but got false.")

    # -- values -------------------------------------------------------------------
    def int_repr(self):
        """The integers, as a plain int8/uint8/int32 tensor (a copy)."""
        return wrap(np.array(self._data), QRANGE[self._dtype][0])

    def dequantize(self):
        """(q - zero_point) * scale as float32."""
        q = self._data
        if self._qscheme in _PER_TENSOR:
            out = (q.astype(np.float32) - np.float32(self._zero_point)) * \
                np.float32(self._scale)
        else:
            shape = [1] * q.ndim
            shape[self._axis] = -1
            sc = self._scales._data.reshape(shape)
            zp = self._zero_points._data.reshape(shape)
            out = (q - zp) * sc
        return wrap(np.asarray(out, dtype=np.float32))

    def numpy(self, *, force=False):
        raise TypeError(f"Got unsupported ScalarType {_name(self._dtype)}")

    def tolist(self):
        return self.dequantize().tolist()

    def item(self):
        return self.dequantize().item()

    def requires_grad_(self, requires_grad=True):
        if requires_grad:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        return self

    def to(self, *args, **kwargs):
        dtype = kwargs.get("dtype", next((a for a in args if isinstance(a, D.dtype)), None))
        if dtype is None or dtype is self._dtype:
            return self
        raise RuntimeError("Creation of quantized tensor requires quantized dtype like "
                           "torch.quint8")

    def float(self):
        return self.to(D.float32)

    def detach(self):
        return _make(self._data, self._dtype, self._quantizer(), self)

    def double(self):
        return self.to(D.float64)

    def __repr__(self, *, tensor_contents=None):
        from ..._tensor_str import _add_suffixes, _tensor_str
        deq = self.dequantize()
        body = "[]" if deq._data.size == 0 else _tensor_str(deq, 7)
        suffixes = [f"size={tuple(self.shape)}", f"dtype={self._dtype}",
                    f"quantization_scheme={self._qscheme}"]
        if self._qscheme in _PER_TENSOR:
            suffixes += [f"scale={self._scale}", f"zero_point={self._zero_point}"]
        else:
            suffixes += [f"scale={self._scales!r}", f"zero_point={self._zero_points!r}",
                         f"axis={self._axis}"]
        return _add_suffixes("tensor(" + body, suffixes, 7)

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (from_ints, (self.int_repr(), self._quantizer(), self._dtype))

    def _quantizer(self):
        if self._qscheme in _PER_TENSOR:
            return (self._qscheme, self._scale, self._zero_point)
        return (self._qscheme, self._scales, self._zero_points, self._axis)


def _refuse_operator(aten):
    def method(self, *args):
        raise NotImplementedError(_refusal("aten::" + aten))
    method.__name__ = aten
    return method


# Python operators promote dtypes before any op dispatches, and quantized dtypes have no
# promotion: they stop here with the backend error (reflected forms included, which Python
# tries first for a subclass on the right of a dense tensor)
for _names, _aten in ((("__add__", "__radd__", "__iadd__"), "add.Tensor"),
                      (("__sub__", "__rsub__", "__isub__"), "sub.Tensor"),
                      (("__mul__", "__rmul__", "__imul__"), "mul.Tensor"),
                      (("__truediv__", "__rtruediv__", "__itruediv__"), "div.Tensor"),
                      (("__floordiv__", "__rfloordiv__"), "floor_divide"),
                      (("__matmul__", "__rmatmul__"), "matmul"),
                      (("__pow__", "__rpow__"), "pow.Tensor_Tensor"),
                      (("__eq__",), "eq.Tensor"), (("__ne__",), "ne.Tensor"),
                      (("__lt__",), "lt.Tensor"), (("__le__",), "le.Tensor"),
                      (("__gt__",), "gt.Tensor"), (("__ge__",), "ge.Tensor")):
    for _n in _names:
        setattr(QuantizedTensor, _n, _refuse_operator(_aten))
QuantizedTensor.__hash__ = Tensor.__hash__


_QDTYPE_OF = {D.int8: D.qint8, D.uint8: D.quint8, D.int32: D.qint32}


def from_ints(ints, quantizer, dtype=None):
    """A quantized tensor of `ints` (an integer tensor, quantized storage dtype or not) and
    a quantizer tuple as torch._utils._rebuild_qtensor receives it: (scheme, scale,
    zero_point) or (scheme, scales, zero_points, axis)."""
    if dtype is None:
        dtype = ints._dtype if ints._dtype in QRANGE else _QDTYPE_OF[ints._dtype]
    return _make(np.array(ints._data, dtype=QRANGE[dtype][0].np), dtype, quantizer)


def _make(arr, dtype, quantizer, view_of=None):
    t = wrap(arr) if view_of is None else wrap_view(arr, view_of)
    t.__class__ = QuantizedTensor
    t._dtype = dtype
    t._backend = "quantized"
    t._qscheme = quantizer[0]
    if quantizer[0] in _PER_TENSOR:
        t._scale, t._zero_point = float(quantizer[1]), int(quantizer[2])
    else:
        t._scales, t._zero_points, t._axis = quantizer[1], quantizer[2], int(quantizer[3])
    return t


# -------------------------------------------------------------------- creation

def _float_input(x):
    if x.dtype is not D.float32:
        raise RuntimeError(f"Quantize only works on Float Tensor, got {_name(x.dtype)}")


def _quantized_dtype(dtype):
    if dtype not in QRANGE:
        raise RuntimeError(f"ScalarType {_name(dtype)} is not supported in new_qtensor.")
    return QRANGE[dtype]


def quantize_per_tensor(input, scale, zero_point, dtype):
    """torch.quantize_per_tensor: one scale and zero point (numbers or 1-element tensors);
    a list of tensors quantizes each with its own."""
    if isinstance(input, (list, tuple)):
        return [quantize_per_tensor(x, s, z, dtype) for x, s, z in zip(
            input, scale._data.reshape(-1).tolist(), zero_point._data.reshape(-1).tolist())]
    _float_input(input)
    store, lo, hi = _quantized_dtype(dtype)
    scale = float(scale.item() if isinstance(scale, Tensor) else scale)
    zero_point = int(zero_point.item() if isinstance(zero_point, Tensor) else zero_point)
    q = quantize_array(input._data, scale, zero_point, lo, hi, store.np)
    return _make(q, dtype, (D.per_tensor_affine, scale, zero_point))


def quantize_array(x, scale, zero_point, lo, hi, out_dtype):
    """clamp(nearbyint(fma(x, 1.0f/scale, zero_point)), lo, hi) on a float32 array: the
    fma is the float64 product (exact for two floats) plus zero_point, rounded once."""
    inv = np.float64(np.float32(1) / np.float32(scale))
    t = np.asarray(np.multiply(x, inv, dtype=np.float64) + zero_point).astype(np.float32)
    np.rint(t, out=t)
    np.clip(t, lo, hi, out=t)
    return t.astype(out_dtype)


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """torch.quantize_per_channel: scale/zero point per slice along `axis`."""
    _float_input(input)
    store, lo, hi = _quantized_dtype(dtype)
    if not 0 <= axis < input.ndim:
        raise RuntimeError("Channel axis out of range in per channel affine quantization. "
                           f"Got: {axis}Expected: [0, {input.ndim})")
    n = input.shape[axis]
    if scales.ndim != 1 or scales.numel() != n:
        raise RuntimeError(f"quantize_per_channel: expected {n} scales for axis {axis} of an "
                           f"input of shape {tuple(input.shape)}, got shape {tuple(scales.shape)}")
    if zero_points.ndim != 1 or zero_points.numel() != n:
        raise RuntimeError(f"quantize_per_channel: expected {n} zero points, got shape "
                           f"{tuple(zero_points.shape)}")
    shape = [1] * input.ndim
    shape[axis] = n
    sc = scales._data.astype(np.float32).reshape(shape)
    zp = zero_points._data.reshape(shape).astype(np.float32)
    q = np.clip(np.rint(input._data * (np.float32(1) / sc) + zp), lo, hi).astype(store.np)
    float_qparams = zero_points.dtype.is_floating_point
    scheme = D.per_channel_affine_float_qparams if float_qparams else D.per_channel_affine
    return _make(q, dtype, (scheme, wrap(scales._data.astype(np.float64)),
                            wrap(zero_points._data.astype(
                                zero_points._data.dtype if float_qparams else np.int64)),
                            axis))


def quantize_per_tensor_dynamic(input, dtype, reduce_range):
    """torch.quantize_per_tensor_dynamic: qparams from the tensor's min/max (0 included),
    as the dynamic quantized ops choose them (quint8 or qint8)."""
    if dtype not in (D.quint8, D.qint8):
        raise RuntimeError(f"dtype '{_name(dtype)}' is not supported by "
                           "quantize_per_tensor_dynamic")
    scale, zero_point = choose_qparams(input._data, dtype, reduce_range)
    return quantize_per_tensor(input, scale, zero_point, dtype)


SMALL_SCALE_THRESHOLD = float(np.float32(6.1e-5))    # a float in ATen


def choose_qparams(x, dtype, reduce_range):
    """ATen's ChooseQuantizationParams on an array's min/max (the dynamic ops' choice):
    the range widened to include 0, scale = (max - min) / (qmax - qmin) in double (0.1
    when it is 0 in float, at least 6.1e-5), the zero point rounded from whichever end
    loses less and clamped into [qmin, qmax]. Returns (scale as a double, zero_point)."""
    _, qmin, qmax = QRANGE[dtype]
    if reduce_range:
        qmin, qmax = int(qmin / 2), int(qmax / 2)
    lo = min(float(x.min()), 0.0) if x.size else 0.0
    hi = max(float(x.max()), 0.0) if x.size else 0.0
    scale = (hi - lo) / (qmax - qmin)
    if np.float32(scale) == 0 or np.isinf(np.float32(1) / np.float32(scale)):
        scale = 0.1
    if scale < SMALL_SCALE_THRESHOLD:
        amplifier = float(np.float32(SMALL_SCALE_THRESHOLD / np.float32(scale)))
        if lo == 0.0:
            hi = float(np.float32(SMALL_SCALE_THRESHOLD * (qmax - qmin)))
        elif hi == 0.0:
            lo = float(np.float32(-SMALL_SCALE_THRESHOLD * (qmax - qmin)))
        else:
            lo, hi = float(np.float32(lo * amplifier)), float(np.float32(hi * amplifier))
        scale = SMALL_SCALE_THRESHOLD
    from_min, from_max = qmin - lo / scale, qmax - hi / scale
    err_min = abs(qmin) - abs(lo / scale)
    err_max = abs(qmax) - abs(hi / scale)
    initial = from_min if err_min < err_max else from_max
    zero_point = qmin if initial < qmin else qmax if initial > qmax else int(np.rint(initial))
    return scale, zero_point


def dequantize(tensor):
    """torch.dequantize: a float32 tensor (lists are dequantized one by one)."""
    if isinstance(tensor, (list, tuple)):
        return [dequantize(t) for t in tensor]
    return tensor.dequantize()


# --------------------------------------------------- the 'quantized' backend

# shape ops PyTorch's QuantizedCPU backend has: they move integers, the quantizer stays
SHAPE_OPS = ("view", "permute", "select", "slice", "unsqueeze", "squeeze", "expand",
             "_reshape_copy", "unbind", "split_with_sizes", "alias", "as_strided",
             "clone", "contiguous", "detach")
_KEEPS_AXIS = ("clone", "contiguous", "detach", "alias")


def _shape_kernel(op):
    def kernel(q, *rest):
        if q._qscheme not in _PER_TENSOR and op.name not in _KEEPS_AXIS:
            raise NotImplementedError(f"{op.name()}: ember has no QuantizedCPU kernel for "
                                      f"per-channel quantized tensors (scheme {q._qscheme})")
        res = op.kernels["cpu"](q._data, *rest)
        view = q if op.view else None
        if isinstance(res, (list, tuple)):
            return tuple(_make(r, q._dtype, q._quantizer(), view) for r in res)
        return _make(res, q._dtype, q._quantizer(), view)
    return kernel


def _relu(q):
    """relu in the integers: max(q, zero_point), the quantizer kept (quantized::relu)."""
    if q._qscheme in _PER_TENSOR:
        zp = q._zero_point
    else:
        shape = [1] * q.ndim
        shape[q._axis] = -1
        zp = q._zero_points._data.reshape(shape)
    return _make(np.maximum(q._data, zp).astype(q._data.dtype), q._dtype, q._quantizer())


def _per_tensor_only(q, name):
    if q._qscheme not in _PER_TENSOR:
        raise NotImplementedError(f"{name}: ember has no QuantizedCPU kernel for per-channel "
                                  "quantized tensors")


def _max_pool2d(op):
    """max pooling in the integers (exact: quantization is monotonic); the quantizer kept,
    the indices a plain int64 tensor."""
    def kernel(q, *rest):
        _per_tensor_only(q, "max_pool2d")
        vals, idx = op.kernels["cpu"](q._data.astype(np.float32), *rest)
        return _make(vals.astype(q._data.dtype), q._dtype, q._quantizer()), wrap(idx)
    return kernel


def _adaptive_avg_pool2d(op):
    """quantized::adaptive_avg_pool2d: per window, zero_point + nearbyint(float(sum(q -
    zero_point)) * (1.0f / window size)), the quantizer kept."""
    def kernel(q, output_size):
        _per_tensor_only(q, "adaptive_avg_pool2d")
        zp = q._zero_point
        avg = op.kernels["cpu"](q._data.astype(np.float64) - zp, output_size)
        (h, w), (oh, ow) = q.shape[-2:], avg.shape[-2:]
        counts = np.outer(*[[-(-(i + 1) * n // o) - i * n // o for i in range(o)]
                            for n, o in ((h, oh), (w, ow))])
        sums = np.rint(avg * counts).astype(np.float32)
        out = np.rint(sums * (np.float32(1) / counts.astype(np.float32))) + zp
        lo, hi = QRANGE[q._dtype][1:]
        return _make(np.clip(out, lo, hi).astype(q._data.dtype), q._dtype, q._quantizer())
    return kernel


def _refusal(name):
    return (f"Could not run '{name}' with arguments from the 'QuantizedCPU' backend. This "
            "could be because the operator doesn't exist for this backend (ember has no "
            "quantized kernel for it); call .dequantize() first.")


def _refuse(op, args):
    raise NotImplementedError(_refusal(op.name()))


def install():
    BACKENDS["quantized"] = _refuse
    for name in SHAPE_OPS:
        op = REGISTRY.get(name)
        if op is not None:
            op.kernels["quantized"] = _shape_kernel(op)
    REGISTRY["relu"].kernels["quantized"] = _relu
    REGISTRY["max_pool2d_with_indices"].kernels["quantized"] = \
        _max_pool2d(REGISTRY["max_pool2d_with_indices"])
    REGISTRY["_adaptive_avg_pool2d"].kernels["quantized"] = \
        _adaptive_avg_pool2d(REGISTRY["_adaptive_avg_pool2d"])


install()
