"""Samples for the quantized_decomposed namespace (ember/ops/quantized_decomposed.py)."""
import ember

from ._util import t

QD = ember.ops.quantized_decomposed
F32 = ember.float32


def _x():
    return t(2, 3, dtype=F32) * 4


def _q():
    return QD.quantize_per_tensor.default(_x(), 0.05, 3, -128, 127, ember.int8)


SAMPLES = {
    "quantized_decomposed_quantize_per_tensor": lambda: (
        lambda x: QD.quantize_per_tensor.default(x, 0.05, 3, -128, 127, ember.int8), [_x()]),
    "quantized_decomposed_quantize_per_tensor_tensor": lambda: (
        lambda x, s, z: QD.quantize_per_tensor.tensor(x, s, z, 0, 255, ember.uint8),
        [_x(), ember.tensor(0.03), ember.tensor(120)]),
    "quantized_decomposed_dequantize_per_tensor": lambda: (
        lambda q: QD.dequantize_per_tensor.default(q, 0.05, 3, -128, 127, ember.int8), [_q()]),
    "quantized_decomposed_dequantize_per_tensor_tensor": lambda: (
        lambda q, s, z: QD.dequantize_per_tensor.tensor(q, s, z, -128, 127, ember.int8),
        [_q(), ember.tensor([0.05], dtype=ember.float64), ember.tensor([3])]),
    "quantized_decomposed_quantize_per_channel": lambda: (
        lambda x, s, z: QD.quantize_per_channel.default(x, s, z, 1, -128, 127, ember.int8),
        [_x(), ember.tensor([0.02, 0.05, 0.1]), ember.tensor([0, 3, -2])]),
    "quantized_decomposed_dequantize_per_channel": lambda: (
        lambda q, s, z: QD.dequantize_per_channel.default(q, s, z, 0, -128, 127, ember.int8),
        [_q(), ember.tensor([0.02, 0.05]), ember.tensor([1, -2])]),
    "quantized_decomposed_choose_qparams_tensor": lambda: (
        lambda x: QD.choose_qparams.tensor(x, 0, 255, 1e-5, ember.uint8), [_x()]),
    "quantized_decomposed_choose_qparams_symmetric_tensor": lambda: (
        lambda x: QD.choose_qparams_symmetric.tensor(x, -128, 127, 1e-5, ember.int8), [_x()]),
}
NON_DIFFERENTIABLE = set(SAMPLES)

# aten's fake-quant ops (ember/ops/fake_quantize.py): float64 inputs, so gradcheck runs
# their straight-through gradient — which is not the (zero almost everywhere) derivative
# finite differences measure
SAMPLES.update({
    "fake_quantize_per_tensor_affine": lambda: (
        lambda x: ember.fake_quantize_per_tensor_affine(x, 0.1, 3, -10, 10), [t(2, 3) * 2]),
    "fake_quantize_per_tensor_affine_tensor_qparams": lambda: (
        lambda x, s, z: ember.fake_quantize_per_tensor_affine(x, s, z, 0, 255),
        [t(2, 3), ember.tensor([0.05]), ember.tensor([100], dtype=ember.int32)]),
    "fake_quantize_per_channel_affine": lambda: (
        lambda x, s, z: ember.fake_quantize_per_channel_affine(x, s, z, 1, -8, 7),
        [t(2, 3), ember.tensor([0.1, 0.2, 0.05]), ember.tensor([0, 1, -1], dtype=ember.int32)]),
})
NO_GRADCHECK = {n: "straight-through estimator: the gradient is the in-range mask"
                for n in ("fake_quantize_per_tensor_affine",
                          "fake_quantize_per_tensor_affine_tensor_qparams",
                          "fake_quantize_per_channel_affine")}
