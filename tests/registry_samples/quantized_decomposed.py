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
