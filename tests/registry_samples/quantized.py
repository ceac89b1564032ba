"""Samples for the fused int8 ops (ember/ops/quantized.py, torch.ops.onednn's schemas)."""
import numpy as np

import ember

ON = ember.ops.onednn


def _u8(*shape):
    return ember.from_numpy(np.random.default_rng(0).integers(0, 256, shape).astype(np.uint8))


def _s8(*shape):
    return ember.from_numpy(np.random.default_rng(1).integers(-127, 128, shape).astype(np.int8))


def _scales(n):
    return ember.from_numpy(np.linspace(0.01, 0.02, n).astype(np.float32))


SAMPLES = {
    "onednn_qlinear_pointwise": lambda: (
        lambda x, w, s, z, b: ON.qlinear_pointwise.default(
            x, 0.05, 120, w, s, z, b, 0.3, 60, None, "relu", [], ""),
        [_u8(3, 8), _s8(5, 8), _scales(5), ember.zeros(5, dtype=ember.int64), ember.ones(5)]),
    "onednn_qconv2d_pointwise": lambda: (
        lambda x, w, s, z: ON.qconv2d_pointwise.default(
            x, 0.05, 120, w, s, z, None, [1, 1], [1, 1], [1, 1], 1, 0.3, 60, None, "none",
            [], None),
        [_u8(2, 3, 5, 5), _s8(4, 3, 3, 3), _scales(4), ember.zeros(4, dtype=ember.int64)]),
}
NON_DIFFERENTIABLE = set(SAMPLES)
