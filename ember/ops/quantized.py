"""`ember.ops.onednn`: the fused int8 linear/conv2d ops (PyTorch's `torch.ops.onednn.
qlinear_pointwise` / `qconv2d_pointwise` schemas) that the int8 lowering puts in place of
dequantize -> linear/conv (-> relu/hardtanh) (-> quantize) patterns.

Note: the arguments are PyTorch's, with one difference of representation: `qw` is the
plain int8 weight — (out, in) for linear, (out, in / groups, kh, kw) for conv — rather than
a prepacked oneDNN tensor (ember's kernel reads the row-major weight as it is; its 4-byte
k groups are the natural layout). Symmetric weights (w_zero_point all 0, as PyTorch's x86 and
XNNPACK quantizers make them) run the C kernels; others take the exact NumPy path.
`output_dtype` None or uint8/int8 gives the quantized output (None: uint8, as PyTorch);
float32 gives real values and then output_scale must be 1.0 and output_zero_point 0.
Post ops: "none", "relu", "hardtanh" (post_op_args [min, max]): clamps, applied exactly in
the quantized domain.
The ops are extern primitives (tags prim + linalg), so a compiler keeps them whole;
they are not differentiable (inference kernels, as in PyTorch).
"""
import math

import numpy as np

from .. import _dtype as D
from ._registry import namespace_getattr, register

NS = "onednn"
_QDTYPES = (D.uint8, D.int8)


__getattr__ = namespace_getattr(NS)   # ember.ops.onednn.qlinear_pointwise


# ------------------------------------------------------------------ argument checks

def _out_dtype(op, output_dtype, output_scale, output_zero_point):
    if output_dtype is None:
        return D.uint8
    if output_dtype in _QDTYPES:
        return output_dtype
    if output_dtype == D.float32:
        if output_scale != 1.0 or output_zero_point != 0:
            raise RuntimeError(f"{op}: a float32 output needs output_scale 1.0 and "
                               f"output_zero_point 0 (got {output_scale}, {output_zero_point})")
        return D.float32
    raise NotImplementedError(f"{op}: output_dtype {output_dtype} (uint8, int8 or float32 "
                              "are supported)")


def _clamp(op, name, args):
    """(lo, hi) real-valued bounds of the post op."""
    if name in ("none", "", None):
        return -math.inf, math.inf
    if name == "relu":
        return 0.0, math.inf
    if name == "hardtanh":
        if len(args) != 2:
            raise RuntimeError(f"{op}: hardtanh takes post-op args [min_val, max_val], "
                               f"got {list(args)}")
        return float(args[0]), float(args[1])
    raise NotImplementedError(f"{op}: post op '{name}' (none, relu and hardtanh are fused)")


def _check_common(op, qx, qw, w_scale, w_zero_point, bias, wdim):
    if qx.dtype not in _QDTYPES:
        raise RuntimeError(f"{op}: expected a uint8 or int8 input, got {qx.dtype}")
    if qw.dtype != D.int8 or qw.dim() != wdim:
        raise RuntimeError(f"{op}: expected a {wdim}-D int8 weight, got {qw.dtype} of shape "
                           f"{list(qw.shape)}")
    n = qw.shape[0]
    for what, t in (("w_scale", w_scale), ("w_zero_point", w_zero_point)):
        if t.numel() not in (1, n):
            raise RuntimeError(f"{op}: {what} has {t.numel()} elements for a weight with "
                               f"{n} output channels")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != n):
        raise RuntimeError(f"{op}: bias of shape {list(bias.shape)} for {n} output channels")


def _kernel_common(op, bias, output_dtype, output_scale, output_zero_point, post,
                   post_args):
    dt = _out_dtype(op, output_dtype, output_scale, output_zero_point)
    lo, hi = _clamp(op, post, post_args)
    return dt.np, (lo, hi), None if bias is None else bias.astype(np.float32)


# ------------------------------------------------------------------ qlinear_pointwise

def _qlinear_meta(qx, x_scale, x_zero_point, qw, w_scale, w_zero_point, bias, output_scale,
                  output_zero_point, output_dtype, post_op_name, post_op_args,
                  post_op_algorithm):
    op = "onednn.qlinear_pointwise"
    _check_common(op, qx, qw, w_scale, w_zero_point, bias, 2)
    if qx.dim() < 1 or qx.shape[-1] != qw.shape[1]:
        raise RuntimeError(f"{op}: input of shape {list(qx.shape)} and weight of shape "
                           f"{list(qw.shape)} cannot be multiplied")
    _clamp(op, post_op_name, post_op_args)
    dt = _out_dtype(op, output_dtype, output_scale, output_zero_point)
    return (*qx.shape[:-1], qw.shape[0]), dt


def _qlinear_kernel(qx, x_scale, x_zero_point, qw, w_scale, w_zero_point, bias, output_scale,
                    output_zero_point, output_dtype, post_op_name, post_op_args,
                    post_op_algorithm):
    from ..ao.quantization import _kernels
    dt, clamp, b = _kernel_common("onednn.qlinear_pointwise", bias, output_dtype,
                                  output_scale, output_zero_point, post_op_name, post_op_args)
    return _kernels.qlinear(qx, x_scale, x_zero_point, qw, w_scale, w_zero_point, b,
                            output_scale,
                            output_zero_point, dt, clamp)


QLINEAR_POINTWISE = register(
    "onednn_qlinear_pointwise", _qlinear_kernel, meta=_qlinear_meta, tags=("prim", "linalg"),
    check=True, namespace=NS,
    schema="qlinear_pointwise(Tensor qx, float x_scale, int x_zero_point, Tensor qw, "
           "Tensor w_scale, Tensor w_zero_point, Tensor? bias, float output_scale, "
           "int output_zero_point, ScalarType? output_dtype, str post_op_name, "
           "Scalar?[] post_op_args, str post_op_algorithm) -> Tensor")
QLINEAR_POINTWISE.meta_layout = "contiguous"


# ------------------------------------------------------------------ qconv2d_pointwise

def _pair(v):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * 2 if len(v) == 1 else v


def _qconv_meta(qx, x_scale, x_zero_point, qw, w_scale, w_zero_point, bias, stride, padding,
                dilation, groups, output_scale, output_zero_point, output_dtype, attr,
                scalars, algorithm):
    from ..ao.quantization._kernels import conv_out_size
    op = "onednn.qconv2d_pointwise"
    _check_common(op, qx, qw, w_scale, w_zero_point, bias, 4)
    if qx.dim() != 4:
        raise RuntimeError(f"{op}: expected a 4-D (N, C, H, W) input, got shape "
                           f"{list(qx.shape)}")
    n, c, h, w = qx.shape
    oc, cg, kh, kw = qw.shape
    if groups < 1 or c != cg * groups or oc % groups:
        raise RuntimeError(f"{op}: input of shape {list(qx.shape)}, weight of shape "
                           f"{list(qw.shape)} and groups={groups} do not match")
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    if min(sh, sw, dh, dw) < 1 or min(ph, pw) < 0:
        raise RuntimeError(f"{op}: stride {stride} and dilation {dilation} must be positive, "
                           f"padding {padding} non-negative")
    oh, ow = conv_out_size(h, kh, sh, ph, dh), conv_out_size(w, kw, sw, pw, dw)
    if oh < 1 or ow < 1:
        raise RuntimeError(f"{op}: input of shape {list(qx.shape)} is smaller than the "
                           f"kernel {list(qw.shape[2:])} (dilation {dilation}, padding "
                           f"{padding})")
    _clamp(op, attr, scalars)
    dt = _out_dtype(op, output_dtype, output_scale, output_zero_point)
    return (n, oc, oh, ow), dt


def _qconv_kernel(qx, x_scale, x_zero_point, qw, w_scale, w_zero_point, bias, stride, padding,
                  dilation, groups, output_scale, output_zero_point, output_dtype, attr,
                  scalars, algorithm):
    from ..ao.quantization import _kernels
    dt, clamp, b = _kernel_common("onednn.qconv2d_pointwise", bias, output_dtype,
                                  output_scale, output_zero_point, attr, scalars)
    return _kernels.qconv2d(qx, x_scale, x_zero_point, qw, w_scale, w_zero_point, b,
                            _pair(stride),
                            _pair(padding), _pair(dilation), groups, output_scale,
                            output_zero_point, dt, clamp)


QCONV2D_POINTWISE = register(
    "onednn_qconv2d_pointwise", _qconv_kernel, meta=_qconv_meta, tags=("prim", "linalg"),
    check=True, namespace=NS,
    schema="qconv2d_pointwise(Tensor qx, float x_scale, int x_zero_point, Tensor qw, "
           "Tensor w_scale, Tensor w_zero_point, Tensor? bias, int[] stride, int[] padding, "
           "int[] dilation, int groups, float output_scale, int output_zero_point, "
           "ScalarType? output_dtype, str attr, Scalar?[] scalars, str? algorithm) -> Tensor")
QCONV2D_POINTWISE.meta_layout = "contiguous"
