"""The fused attention ops PyTorch's CPU SDPA dispatches to, as aten names them:
`_scaled_dot_product_flash_attention_for_cpu` (out, logsumexp) and its backward.

Note: both are extern prims — a compiler keeps each whole as one call to the blocked C
kernel (`_flash_kernels`), never a graph of matmul/softmax that would materialise the
L x S score matrix. Their contract is aten's: 4-D (B, H, L, D) inputs with one head dim,
key/value heads dividing the query's (GQA is native), an additive attn_mask of the query's
dtype broadcastable as (B|1, H|1, L|1, S|1), `is_causal` (top-left aligned; combined with
a mask if both are given), no dropout, and rows whose keys are all masked give zeros.
Without a C compiler the same blocked algorithm runs in NumPy (blocks of queries, so
memory stays O(L) too).
"""
import ctypes
import math

import numpy as np

from .. import _dtype as D
from . import _flash_kernels as FK
from ._registry import register
from .matmul import _C10

__all__ = ["FLASH", "FLASH_BACKWARD"]

_OP = "scaled_dot_product_attention_flash_attention"


def _check(q, k, v, dropout_p, mask):
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise RuntimeError(f"{_OP}: Accept only 4 dims inputs shape of {{B, H, T, K}}")
    if dropout_p != 0.0:
        raise RuntimeError(f"{_OP}: Currently do not support dropout > 0")
    if not (q.dtype == k.dtype == v.dtype) or q.dtype not in _FLOATS:
        raise RuntimeError(f"{_OP}: Expected query, key and value to have the same floating "
                           f"dtype, but got {_C10[q.dtype.name]}, {_C10[k.dtype.name]} and "
                           f"{_C10[v.dtype.name]}")
    B, H, L, E = q.shape
    if k.shape[0] != B or v.shape[0] != B or k.shape[2] != v.shape[2]:
        raise RuntimeError(f"{_OP}: batch sizes / key and value lengths differ: query "
                           f"{tuple(q.shape)}, key {tuple(k.shape)}, value {tuple(v.shape)}")
    if k.shape[1] != v.shape[1] or k.shape[1] == 0 or H % k.shape[1]:
        raise RuntimeError(f"{_OP}: the number of heads in key/value must divide the query's; "
                           f"got query {tuple(q.shape)}, key {tuple(k.shape)}, value "
                           f"{tuple(v.shape)}")
    if k.shape[3] != E or v.shape[3] != E:
        raise RuntimeError(f"{_OP}: q, k, v must have the same head dim; got query "
                           f"{tuple(q.shape)}, key {tuple(k.shape)}, value {tuple(v.shape)}")
    if mask is not None:
        if mask.dtype != q.dtype:
            raise RuntimeError(f"{_OP}: Attention mask is the same data type as query")
        full = (B, H, L, k.shape[2])
        shape = tuple(mask.shape)
        if mask.dim() not in (2, 4) or any(m not in (1, f) for m, f in zip(shape[::-1],
                                                                            full[::-1])):
            raise RuntimeError(f"{_OP}: attn_mask of shape {shape} does not broadcast to "
                               f"{full} as a 2-D (L, S) or 4-D (B, H, L, S) mask")


_FLOATS = (D.float32, D.float64, D.bfloat16, D.float16)


def _scale(scale, e):
    return 1.0 / math.sqrt(e) if scale is None else float(scale)


def _acc(a):
    return np.float64 if a.dtype == np.float64 else np.float32


def _mask4(mask, full, acc):
    """The mask as `acc` floats broadcast (stride 0, no copy) to (B, H, L, S)."""
    m = np.asarray(mask, dtype=acc)
    return np.broadcast_to(m.reshape((1,) * (4 - m.ndim) + m.shape), full)


def _rowlast(a):
    """A view whose last dim is contiguous (what the C kernel reads with strides)."""
    return a if a.ndim and (a.shape[-1] <= 1 or a.strides[-1] == a.itemsize) else \
        np.ascontiguousarray(a)


def _i64(*xs):
    return (ctypes.c_int64 * len(xs))(*xs)


def _st(a):
    return _i64(*(s // a.itemsize for s in a.strides[:3]))


def _c_args(q, k, v, mask, causal, scale):
    full = (q.shape[0], q.shape[1], q.shape[2], k.shape[2])
    m = None if mask is None else _mask4(mask, full, _acc(q))
    mptr = None if m is None else m.ctypes.data
    mst = None if m is None else _i64(*(s // m.itemsize for s in m.strides))
    head = (FK.DTYPE_CODE[q.dtype],)
    sizes = (q.shape[0], q.shape[1], k.shape[1], q.shape[2], k.shape[2], q.shape[3])
    return head, sizes, (m, mptr, mst, int(bool(causal)), _scale(scale, q.shape[3]))


def _flash_kernel(q, k, v, dropout_p=0.0, is_causal=False, attn_mask=None, scale=None):
    q, k, v = _rowlast(q), _rowlast(k), _rowlast(v)
    out = np.empty(q.shape, q.dtype)
    lse = np.empty(q.shape[:3], _acc(q))
    lib = FK.lib()
    if lib is None or out.size == 0 or lse.size == 0:
        return _numpy_forward(q, k, v, attn_mask, is_causal, _scale(scale, q.shape[3]))
    head, sizes, (m, mptr, mst, causal, sc) = _c_args(q, k, v, attn_mask, is_causal, scale)
    f = lib["fwd_f64" if lse.dtype == np.float64 else "fwd_f32"]
    f(*head, q.ctypes.data, k.ctypes.data, v.ctypes.data, out.ctypes.data, lse.ctypes.data,
      *sizes, _st(q), _st(k), _st(v), mptr, mst, causal, sc, FK.threads())
    return out, lse


def _flash_backward_kernel(grad_out, q, k, v, out, lse, dropout_p, is_causal,
                           attn_mask=None, scale=None):
    q, k, v, out, grad_out = map(_rowlast, (q, k, v, out, grad_out))
    grad_out = np.asarray(grad_out, q.dtype)
    lib = FK.lib()
    if lib is None or q.size == 0 or k.size == 0:
        return _numpy_backward(grad_out, q, k, v, out, lse, attn_mask, is_causal,
                               _scale(scale, q.shape[3]))
    dq, dk, dv = (np.empty(a.shape, q.dtype) for a in (q, k, v))
    lse = np.ascontiguousarray(lse, _acc(q))
    head, sizes, (m, mptr, mst, causal, sc) = _c_args(q, k, v, attn_mask, is_causal, scale)
    f = lib["bwd_f64" if lse.dtype == np.float64 else "bwd_f32"]
    f(*head, q.ctypes.data, k.ctypes.data, v.ctypes.data, out.ctypes.data,
      grad_out.ctypes.data, lse.ctypes.data, dq.ctypes.data, dk.ctypes.data, dv.ctypes.data,
      *sizes, _st(q), _st(k), _st(v), _st(out), _st(grad_out), mptr, mst, causal, sc,
      FK.threads())
    return dq, dk, dv


# ------------------------------------------------- NumPy fallback (no C compiler)

def _blocks(q, k, v, mask, causal, scale, i0, i1):
    """Scores of query rows [i0, i1) against every key, masked: (B, H, m, S) in acc."""
    acc = _acc(q)
    s = np.matmul(q[:, :, i0:i1].astype(acc), np.swapaxes(k, -1, -2).astype(acc)) * scale
    full = (q.shape[0], q.shape[1], q.shape[2], k.shape[2])
    if mask is not None:
        s = s + _mask4(mask, full, acc)[:, :, i0:i1]
    if causal:
        rows = np.arange(i0, i1)[:, None]
        s = np.where(np.arange(k.shape[2])[None, :] > rows, -np.inf, s)
    return s


def _expand_kv(q, k, v):
    group = q.shape[1] // k.shape[1]
    return np.repeat(k, group, 1), np.repeat(v, group, 1)


def _numpy_forward(q, k, v, mask, causal, scale):
    ke, ve = _expand_kv(q, k, v)
    acc = _acc(q)
    out = np.zeros(q.shape, acc)
    lse = np.full(q.shape[:3], -np.inf, acc)
    for i0 in range(0, q.shape[2], FK.BQ):
        i1 = min(i0 + FK.BQ, q.shape[2])
        s = _blocks(q, ke, ve, mask, causal, scale, i0, i1)
        if s.shape[-1] == 0:
            continue
        mx = s.max(-1, keepdims=True)
        live = np.isfinite(mx)
        p = np.where(live, np.exp(s - np.where(live, mx, 0)), 0)
        lsum = p.sum(-1, keepdims=True)
        out[:, :, i0:i1] = np.matmul(p, ve.astype(acc)) / np.where(live, lsum, 1)
        lse[:, :, i0:i1] = np.where(live, mx + np.log(np.where(live, lsum, 1)), -np.inf)[..., 0]
    return out.astype(q.dtype), lse


def _numpy_backward(g, q, k, v, out, lse, mask, causal, scale):
    ke, ve = _expand_kv(q, k, v)
    acc = _acc(q)
    g, qa, ke, ve = g.astype(acc), q.astype(acc), ke.astype(acc), ve.astype(acc)
    di = (g * out.astype(acc)).sum(-1, keepdims=True)
    dq = np.zeros(q.shape, acc)
    dk, dv = np.zeros(ke.shape, acc), np.zeros(ve.shape, acc)
    lse = np.asarray(lse, acc)
    for i0 in range(0, q.shape[2], FK.BQ):
        i1 = min(i0 + FK.BQ, q.shape[2])
        s = _blocks(q, ke, ve, mask, causal, scale, i0, i1)
        lb = lse[:, :, i0:i1, None]
        live = np.isfinite(lb)
        p = np.where(live, np.exp(s - np.where(live, lb, 0)), 0)
        gb = g[:, :, i0:i1]
        dv += np.matmul(np.swapaxes(p, -1, -2), gb)
        ds = p * (np.matmul(gb, np.swapaxes(ve, -1, -2)) - di[:, :, i0:i1]) * scale
        dq[:, :, i0:i1] = np.matmul(ds, ke)
        dk += np.matmul(np.swapaxes(ds, -1, -2), qa[:, :, i0:i1])
    B, Hk, S, E = k.shape
    dk = dk.reshape(B, Hk, -1, S, E).sum(2)
    dv = dv.reshape(B, Hk, -1, S, E).sum(2)
    return dq.astype(q.dtype), dk.astype(q.dtype), dv.astype(q.dtype)


# ------------------------------------------------------------------ registry

def _flash_meta(q, k, v, dropout_p=0.0, is_causal=False, attn_mask=None, scale=None):
    _check(q, k, v, dropout_p, attn_mask)
    lse_dtype = D.float64 if q.dtype == D.float64 else D.float32
    return (tuple(q.shape), q.dtype), (tuple(q.shape[:3]), lse_dtype)


def _flash_vjp(ctx, g_out, _g_lse=None):
    q, k, v, dropout_p, is_causal, attn_mask, scale = ctx.args
    out, lse = ctx.out
    dq, dk, dv = FLASH_BACKWARD(g_out, q, k, v, out, lse, dropout_p, is_causal, attn_mask,
                                scale)
    return dq, dk, dv, None, None, None, None


def _flash_backward_meta(grad_out, q, k, v, out, lse, dropout_p, is_causal, attn_mask=None,
                         scale=None):
    _check(q, k, v, dropout_p, attn_mask)
    return tuple((tuple(t.shape), q.dtype) for t in (q, k, v))


FLASH = register(
    "_scaled_dot_product_flash_attention_for_cpu", _flash_kernel, meta=_flash_meta,
    vjp=_flash_vjp, save_out=True, nondiff_outputs=(1,), check=True,
    tags=("prim",),
    schema="_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, "
           "Tensor value, float dropout_p=0., bool is_causal=False, *, "
           "Tensor? attn_mask=None, float? scale=None) -> (Tensor output, Tensor logsumexp)")

FLASH_BACKWARD = register(
    "_scaled_dot_product_flash_attention_for_cpu_backward", _flash_backward_kernel,
    meta=_flash_backward_meta, check=True, tags=("prim",),
    schema="_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, "
           "Tensor query, Tensor key, Tensor value, Tensor out, Tensor logsumexp, "
           "float dropout_p, bool is_causal, *, Tensor? attn_mask=None, float? scale=None) "
           "-> (Tensor grad_query, Tensor grad_key, Tensor grad_value)")
