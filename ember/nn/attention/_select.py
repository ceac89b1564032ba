"""Which backend serves one scaled_dot_product_attention call on CPU (PyTorch's
`select_sdp_backend_cpp`): FLASH_ATTENTION when enabled and every flash constraint holds,
else MATH when enabled; when neither can, the reasons flash refused are warned and
RuntimeError("No available kernel. Aborting execution.") is raised.

The constraints, in PyTorch's order (2.13 CPU): not runtime-disabled, no dropout, 4-D
inputs, equal batch sizes and key/value heads dividing the query's (GQA with enable_gqa),
a 2-D or 4-D mask of broadcastable shape, one head dim, non-empty, last dim contiguous, a
floating dtype. ember also sends a mask that requires grad to math (the flash op gives
the mask no gradient).
"""
import warnings

from ... import _dtype as D
from ...ops.matmul import _C10
from . import SDPBackend, _enabled

__all__ = ["select_backend"]

_FLASH_DTYPES = (D.float32, D.float64, D.bfloat16, D.float16)


def _sizes(t):
    return list(t.shape)


def _flash_refusal(q, k, v, mask, dropout_p, enable_gqa):
    """Why flash cannot serve these inputs (one sentence, PyTorch's text), or None."""
    if not _enabled(SDPBackend.FLASH_ATTENTION):
        return "Flash attention has been runtime disabled."
    if dropout_p > 0.0:
        return "Both fused kernels do not support non-zero dropout."
    if not (q.dim() == k.dim() == v.dim() == 4):
        return ("All fused kernels requires query, key and value to be 4 dimensional, but got "
                f"Query dim: {q.dim()}, Key dim: {k.dim()}, Value dim: {v.dim()} instead.")
    if not (q.shape[0] == k.shape[0] == v.shape[0]):
        return ("For dense inputs, both fused kernels require query, key and value to have "
                f"the same batch_size. Query.sizes(): {_sizes(q)}, Key.sizes(): {_sizes(k)}, "
                f"Value.sizes(): {_sizes(v)} instead. To broadcast dense inputs, try using "
                "unsqueeze and expand_to before passing them into the kernel.")
    hq, hk, hv = q.shape[1], k.shape[1], v.shape[1]
    if enable_gqa and hk and hv and (hq % hk or hq % hv or hk != hv):
        return ("The number of heads in key/value must divide number of heads in query."
                f"Got input Key sizes(): {hk}, Value sizes(): {hv}, Query sizes(): {hq} "
                "instead.")
    if not enable_gqa and not (hq == hk == hv):
        return ("For dense input, both fused kernels require query, key and value to have "
                f"the same num_heads. Query.sizes(): {_sizes(q)}, Key sizes(): {_sizes(k)}, "
                f"Value sizes(): {_sizes(v)} instead. To broadcast dense inputs, try using "
                "unsqueeze and expand_to before passing them into the kernel.")
    if mask is not None:
        full = (q.shape[0], hq, q.shape[2], k.shape[2])
        ok = mask.dim() in (2, 4) and all(m in (1, f) for m, f in
                                          zip(tuple(mask.shape)[::-1], full[::-1]))
        if not ok:
            return ("Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x "
                    "{KV_seq_len, 1}); 4d - ({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x "
                    f"{{KV_seq_len, 1}}); got attn_mask.sizes(): {_sizes(mask)}")
        if mask.requires_grad:
            return "Flash attention does not compute a gradient for an attn_mask."
    if not (q.shape[-1] == k.shape[-1] == v.shape[-1]):
        return ("Flash attention requires q,k,v to have the same last dimension. Got "
                f"Query.size(-1): {q.shape[-1]}, Key.size(-1): {k.shape[-1]}, "
                f"Value.size(-1): {v.shape[-1]} instead.")
    if 0 in q.shape or 0 in k.shape or 0 in v.shape:
        return ("All fused kernels do not support zero-sized inputs. Got Query.sizes(): "
                f"{_sizes(q)}, Key.sizes(): {_sizes(k)}, Value.sizes(): {_sizes(v)} instead.")
    strides = [t.stride(-1) for t in (q, k, v)]
    if strides != [1, 1, 1]:
        return ("All fused kernels require the last dimension of the input to have stride 1. "
                f"Got Query.stride(-1): {strides[0]}, Key.stride(-1): {strides[1]}, "
                f"Value.stride(-1): {strides[2]}")
    if q.dtype not in _FLASH_DTYPES:
        return ("Expected query, key and value to all be of dtype: {Float, Double, BFloat16, "
                f"Half}}. Got Query dtype: {_C10.get(q.dtype.name, q.dtype.name)}, Key dtype: "
                f"{_C10.get(k.dtype.name, k.dtype.name)}, and Value dtype: "
                f"{_C10.get(v.dtype.name, v.dtype.name)} instead.")
    return None


def select_backend(q, k, v, mask, dropout_p, enable_gqa):
    """SDPBackend.FLASH_ATTENTION or SDPBackend.MATH for these CPU inputs, or RuntimeError."""
    flash_on, math_on = _enabled(SDPBackend.FLASH_ATTENTION), _enabled(SDPBackend.MATH)
    if not (flash_on or math_on):
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. "
                           "This is likely due to turning off both the math kernel and the "
                           "fused kernels.")
    why = _flash_refusal(q, k, v, mask, dropout_p, enable_gqa)
    if why is None:
        return SDPBackend.FLASH_ATTENTION
    if math_on:
        return SDPBackend.MATH
    warnings.warn("Flash attention kernel not used because:", UserWarning, stacklevel=3)
    warnings.warn(why, UserWarning, stacklevel=3)
    raise RuntimeError("No available kernel.  Aborting execution.")
