"""The int8 C99 kernels of ember.tiny (tiny_int8.h / tiny_int8.c, built for Cortex-M and for
the host) and the host-side constants they take: `requant_params` computes them exactly as
ember's int8 kernels do (ember.ao.quantization._kernels), so both produce the same integers.
"""
import os

import numpy as np

__all__ = ["KERNEL_SOURCES", "requant_params", "requant_params_int", "requantize_int",
           "quantize_value"]

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


def requant_params_int(x_scale, w_scale, bias, out_scale, out_zp, oc, clamp=(-np.inf, np.inf)):
    """requant_params plus the integer form's constants: qmult (Q31, in [2^30, 2^31)) and
    qshift with x_scale * w_scale[oc] / out_scale = qmult * 2^-(31 + qshift), and the bias
    in accumulator units, round_half_even(bias / (x_scale * w_scale[oc])) (int32)."""
    p = requant_params(x_scale, w_scale, bias, out_scale, out_zp, oc, clamp)
    real = (np.asarray(p["mult"], np.float64) / np.float64(out_scale))
    frac, exp = np.frexp(real)                       # real = frac * 2^exp, frac in [0.5, 1)
    qmult = np.rint(frac * 2.0 ** 31).astype(np.int64)
    carry = qmult == 2 ** 31
    qmult[carry] //= 2
    exp = exp + carry
    qshift = -exp.astype(np.int64)
    if np.any(real <= 0) or np.any(31 + qshift < 1) or np.any(31 + qshift > 62):
        raise ValueError(f"requant_params_int: multipliers {real} are out of the integer "
                         "form's range (2^-31 .. 2^30, positive)")
    p["qmult"] = qmult.astype(np.int32)
    p["qshift"] = qshift.astype(np.int32)
    p["qbias"] = None if bias is None else np.clip(
        np.rint(np.asarray(bias, np.float64) / np.asarray(p["mult"], np.float64)),
        -2 ** 31, 2 ** 31 - 1).astype(np.int32)
    return p


def requantize_int(acc, p, axis):
    """The integer form on int acc (NumPy reference of tiny_requant1's integer path);
    `axis`: the channel axis of acc."""
    shape = [1] * acc.ndim
    shape[axis] = -1
    v = acc.astype(np.int64)
    if p["qbias"] is not None:
        v = v + p["qbias"].astype(np.int64).reshape(shape)
    t = 31 + p["qshift"].astype(np.int64).reshape(shape)
    v = (v * p["qmult"].astype(np.int64).reshape(shape) + (np.int64(1) << (t - 1))) >> t
    return np.clip(v + p["zo"], p["qmin"], p["qmax"]).astype(np.int8)
