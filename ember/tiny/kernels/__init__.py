"""The int8 C99 kernels of ember.tiny (tiny_int8.h / tiny_int8.c, built for Cortex-M and for
the host) and the host-side constants they take: `requant_params` computes them exactly as
ember's int8 kernels do (ember.ao.quantization._kernels), so both produce the same integers.
"""
import os

import numpy as np

__all__ = ["KERNEL_SOURCES", "requant_params", "quantize_value"]

_DIR = os.path.dirname(__file__)
KERNEL_SOURCES = [os.path.join(_DIR, "tiny_int8.c")]


def quantize_value(v, inv_so, zo):
    """round_half_even(float32(v) * inv_so) + zo: the integer a real value maps to."""
    return int(np.rint(np.float32(v) * np.float32(inv_so))) + int(zo)


def requant_params(x_scale, w_scale, bias, out_scale, out_zp, oc, clamp=(-np.inf, np.inf)):
    """The fields of a C `tiny_requant` for `oc` output channels: mult = x_scale * w_scale
    (float32), bias (float32 or None), inv_so = 1 / out_scale (float32), zo, and int8
    qmin/qmax narrowed by the real clamp (lo, hi) of a fused relu/relu6."""
    mult = (np.float32(x_scale) *
            np.broadcast_to(np.asarray(w_scale, np.float32), (oc,))).astype(np.float32)
    inv_so = np.float32(1.0) / np.float32(out_scale)
    qmin, qmax = -128, 127
    if clamp[0] > -np.inf:
        qmin = max(qmin, quantize_value(clamp[0], inv_so, out_zp))
    if clamp[1] < np.inf:
        qmax = min(qmax, quantize_value(clamp[1], inv_so, out_zp))
    return {"mult": mult, "bias": None if bias is None else np.asarray(bias, np.float32),
            "inv_so": inv_so, "zo": int(out_zp), "qmin": qmin, "qmax": qmax}
