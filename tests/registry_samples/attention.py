"""Samples for the fused attention ops (ember/ops/attention.py): GQA heads, a key length
that is not a multiple of the kernel's block, a float mask and causal masking at once.
The mask is a constant of the sample: like aten's, the flash op gives it no gradient
(F.scaled_dot_product_attention sends a mask that requires grad to the math path)."""
import ember
from ember.ops.attention import FLASH, FLASH_BACKWARD

from ._util import t


def _mask(*shape):
    """A fixed additive mask made by factory ops (so fake-tensor runs make it fake too)."""
    n = 1
    for s in shape:
        n *= s
    return (ember.arange(n, dtype=ember.float64).reshape(shape) % 3.0 - 1.0) * 0.5


def _flash(q, k, v):
    return FLASH(q, k, v, 0.0, True, _mask(5, 70), None)[0]


def _flash_backward(g, q, k, v):
    m = _mask(1, 2, 1, 6)
    out, lse = FLASH(q, k, v, 0.0, True, m, 0.7)
    return FLASH_BACKWARD(g, q, k, v, out, lse, 0.0, True, m, 0.7)


SAMPLES = {
    "_scaled_dot_product_flash_attention_for_cpu":
        lambda: (_flash, [t(1, 4, 5, 3), t(1, 2, 70, 3), t(1, 2, 70, 3)]),
    "_scaled_dot_product_flash_attention_for_cpu_backward":
        lambda: (_flash_backward, [t(1, 2, 5, 3), t(1, 2, 5, 3), t(1, 1, 6, 3), t(1, 1, 6, 3)]),
}
NON_DIFFERENTIABLE = {"_scaled_dot_product_flash_attention_for_cpu_backward"}  # as aten's
