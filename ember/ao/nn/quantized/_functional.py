"""The dynamic quantized linear every dynamic module runs (FBGEMM's numerics).

Note: per call, the input's qparams come from its min/max (ATen's ChooseQuantizationParams
on uint8 [0, 255], halved by reduce_range so u8 x s8 pairs cannot saturate the int16 sums
of x86's non-VNNI kernels), the input is quantized with FBGEMM's fused multiply-add
rounding, the products accumulate in int32, and
    out[c] = acc[c] * float32(x_scale * w_scale[c]) + bias[c]        (float32).
The int32 GEMM is the int8 helper's C kernel (ember/ao/quantization/_kernels.py, AVX-512
VNNI where the CPU has it, a NumPy fallback without a compiler).
"""
import numpy as np

from ...quantization._kernels import qlinear
from ...quantization._qtensor import choose_qparams, quantize_array
from .... import _dtype as D


def linear_dynamic(x, w_int8, w_scale, w_zero_point, bias, reduce_range=True):
    """x (..., K) float32 array, w_int8 (N, K) -> (..., N) float32 array."""
    x = np.ascontiguousarray(x, np.float32)
    x_scale, x_zp = choose_qparams(x, D.quint8, reduce_range)
    qmax = 127 if reduce_range else 255
    xq = quantize_array(x, x_scale, x_zp, 0, qmax, np.uint8)
    return qlinear(xq, np.float32(x_scale), x_zp, w_int8, w_scale, w_zero_point, bias,
                   1.0, 0, np.float32)


def weight_qparams(qweight):
    """(int8 array, scale(s), zero point(s)) of a per-tensor or per-channel qint8 weight."""
    if qweight.qscheme() in (D.per_tensor_affine, D.per_tensor_symmetric):
        return qweight._data, qweight.q_scale(), qweight.q_zero_point()
    if qweight.q_per_channel_axis() != 0:
        raise NotImplementedError("dynamic quantized linear: per-channel weights must be "
                                  "quantized along axis 0 (output features)")
    return (qweight._data, qweight.q_per_channel_scales()._data.astype(np.float32),
            qweight.q_per_channel_zero_points()._data)
