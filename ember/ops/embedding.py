"""Embedding lookups: embedding (+ its dense backward) and _embedding_bag.

Note: `embedding` is a gather of weight rows whose gradient is its own op,
`embedding_dense_backward` (PyTorch's name), because padding_idx (that row gets no
gradient) and scale_grad_by_freq (divide by how often each index occurs) are not an
index_add. The backward kernel sums rows per index after a stable sort (deterministic):
one vectorized add per repeat when indices repeat at most 16 times, else np.add.reduceat.
`_embedding_bag` reduces each bag (a run of indices given by offsets) with reduceat over
the non-empty bags; its vjp
reuses embedding_dense_backward (sum/mean) or scatter_add at the recorded argmax rows
(max), all in ember ops. max_norm renormalisation (embedding_renorm_) is a composite
of ember ops run under no_grad.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor
from ._registry import register
from .creation import zeros

__all__ = ["embedding", "embedding_bag", "embedding_renorm_"]


def _index_type(t):
    return {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
            "bfloat16": "BFloat16Tensor", "bool": "BoolTensor", "int16": "ShortTensor",
            "int8": "CharTensor", "uint8": "ByteTensor"}.get(t.name, str(t))


def _check_indices(dtype, opname, arg="indices"):
    if dtype not in (D.int64, D.int32):
        raise RuntimeError(f"Expected tensor for argument #1 '{arg}' to have one of the "
                           "following scalar types: Long, Int; but got torch."
                           f"{_index_type(dtype)} instead (while checking arguments for "
                           f"{opname})")


def _dt(x):
    return x.dtype if isinstance(x, Tensor) else D._FROM_NP[x.dtype]


# ------------------------------------------------------------------ embedding

def _emb_check(weight, indices):
    _check_indices(_dt(indices), "embedding")
    if len(weight.shape) != 2:
        raise RuntimeError("'weight' must be 2-D")


def _emb_kernel(weight, indices, padding_idx, scale_grad_by_freq, sparse):
    _emb_check(weight, indices)
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    return weight[indices]


def _emb_meta(weight, indices, padding_idx, scale_grad_by_freq, sparse):
    _emb_check(weight, indices)
    arr = indices._data      # meta tensors hold zero-strided zeros: always in range
    if arr.size and (arr.min() < 0 or arr.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    return tuple(indices.shape) + (weight.shape[1],), weight.dtype


def _emb_vjp(ctx, g):
    _, indices, padding_idx, scale, _ = ctx.args
    return (dispatch(EMBEDDING_BACKWARD, (g, indices, ctx.shapes[0][0], padding_idx, scale)),
            None, None, None, None)


def _embedding_decomp(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """index_select of the flattened indices, viewed back; the padding row enters detached,
    so it gets no gradient (as the kernel's vjp)."""
    from .. import _prims as P
    if scale_grad_by_freq:
        raise NotImplementedError("embedding: the decomposition does not scale gradients by "
                                  "frequency (scale_grad_by_freq=True)")
    if padding_idx is not None and padding_idx >= 0:
        rows = P.eq(P.arange(0, 1, weight.shape[0], D.int64), padding_idx)
        weight = P.where(P.unsqueeze(rows, 1), P.detach(weight), weight)
    out = P.index_select(weight, 0, P.view(indices, [-1]))
    return P.view(out, list(indices.shape) + [weight.shape[1]])


EMBEDDING = register("embedding", _emb_kernel, meta=_emb_meta, vjp=_emb_vjp, tags=("gather",),
                     save=(1,), decomp=_embedding_decomp,
                     schema="embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
                            "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor")


def _row_sums(rows, idx, n):
    """(n, D) array whose row i is the sum of rows[idx == i] (sorted segments)."""
    out = np.zeros((n,) + rows.shape[1:], rows.dtype)
    if idx.size == 0:
        return out
    order = np.argsort(idx, kind="stable")
    s = idx[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    rows = rows[order]
    lens = np.diff(np.r_[starts, s.size])
    if lens.max() <= 16:
        # few repeats (the usual batch of token ids): the k-th row of every segment that
        # has one is added in one vectorized step; reduceat's per-segment loop over
        # mostly one-row segments is ~10x slower. Sums run in index order either way.
        acc = rows[starts]
        for k in range(1, int(lens.max())):
            sel = np.flatnonzero(lens > k)
            acc[sel] += rows[starts[sel] + k]
        out[s[starts]] = acc
    else:
        out[s[starts]] = np.add.reduceat(rows, starts, axis=0)
    return out


def _emb_bw_kernel(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    idx = indices.reshape(-1).astype(np.int64, copy=False)
    comp = np.float32 if grad.dtype.itemsize == 2 else grad.dtype
    rows = grad.reshape(idx.size, grad.shape[-1] if grad.ndim else 1).astype(comp, copy=False)
    if scale_grad_by_freq:
        rows = rows / np.bincount(idx, minlength=num_weights)[idx][:, None].astype(comp)
    if padding_idx >= 0:
        keep = idx != padding_idx
        idx, rows = idx[keep], rows[keep]
    return _row_sums(rows, idx, num_weights).astype(grad.dtype, copy=False)


def _emb_bw_meta(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    return (num_weights, grad.shape[-1] if grad.dim() else 1), grad.dtype


def _row_factor(indices, num_weights, padding_idx, scale, dtype):
    """Per-index factor of the gradient rows: 0 at padding_idx, 1/count with scale."""
    f = (indices != padding_idx).to(dtype)
    if scale:
        from .histogram import bincount
        counts = bincount(indices.reshape(-1), minlength=num_weights)
        f = f / counts[indices].to(dtype)
    return f


def _emb_bw_vjp(ctx, gg):
    _, indices, num_weights, padding_idx, scale = ctx.args
    rows = dispatch(EMBEDDING, (gg, indices, -1, False, False))
    return (rows * _row_factor(indices, num_weights, padding_idx, scale, gg.dtype).unsqueeze(-1),
            None, None, None, None)


def _emb_bw_decomp(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """scatter_add of the grad rows at their indices (padding rows zeroed; with
    scale_grad_by_freq each row divided by how often its index occurs)."""
    from .. import _prims as P
    dim = grad.shape[-1]
    idx = P._reshape_copy(indices, [-1])
    g = P._reshape_copy(grad, [-1, dim])
    if padding_idx is not None and padding_idx >= 0:
        g = P.where(P.unsqueeze(P.ne(idx, padding_idx), 1), g, P.full((), 0, g.dtype))
    if scale_grad_by_freq:
        ones = P.full([idx.shape[0]], 1, D.int64)
        counts = P.scatter_add(P.full([num_weights], 0, D.int64), 0, idx, ones)
        g = P.div(g, P._to_copy(P.unsqueeze(P.index_select(counts, 0, idx), 1), g.dtype))
    rows = P.expand(P.unsqueeze(idx, 1), [idx.shape[0], dim])
    return P.scatter_add(P.full([num_weights, dim], 0, g.dtype), 0, rows, g)


EMBEDDING_BACKWARD = register("embedding_dense_backward", _emb_bw_kernel, meta=_emb_bw_meta,
                              vjp=_emb_bw_vjp, tags=("scatter",), save=(1,),
                              decomp=_emb_bw_decomp,
                              schema="embedding_dense_backward(Tensor grad_output, "
                                     "Tensor indices, SymInt num_weights, SymInt padding_idx, "
                                     "bool scale_grad_by_freq) -> Tensor")


def embedding(weight, input, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding (weight first): rows of weight at the indices in input."""
    if sparse:
        raise NotImplementedError("embedding: sparse=True (sparse gradients) is not supported "
                                  "by ember; use sparse=False")
    return dispatch(EMBEDDING, (weight, input, int(padding_idx), bool(scale_grad_by_freq), False))


def embedding_renorm_(weight, input, max_norm, norm_type):
    """Rescale, in place, the rows of weight that input refers to so that their
    norm_type-norm is at most max_norm (PyTorch's scale max_norm / (norm + 1e-7))."""
    from ..autograd.grad_mode import no_grad
    from .sorting import unique
    _check_indices(input.dtype, "embedding_renorm_")
    with no_grad():
        rows = unique(input.reshape(-1))
        if rows.numel() == 0:
            return weight
        sel = weight.index_select(0, rows)
        norms = sel.norm(norm_type, 1, keepdim=True)
        scale = (max_norm / (norms + 1e-7)).where(norms > max_norm, 1.0)
        weight.index_copy_(0, rows, (sel * scale).to(weight.dtype))
    return weight


# --------------------------------------------------------------- embedding_bag

_MODES = ("sum", "mean", "max")


def _bag_check(weight, indices, offsets, mode, psw):
    _check_indices(_dt(indices), "embedding_bag")
    _check_indices(_dt(offsets), "embedding_bag")
    if len(weight.shape) != 2:
        raise RuntimeError("embedding_bag: weight has to be a 2D Tensor")
    if psw is not None and mode != 0:
        raise NotImplementedError("embedding_bag: per_sample_weights only supported with "
                                  "mode='sum'")


def _bag_layout(n, offsets, include_last_offset):
    """(bag count, start and end of each bag, offset2bag: the bag of each index or -1)."""
    offs = offsets.astype(np.int64, copy=False)
    if offs.size and offs[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {offs[0]}")
    if offs.size and offs[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {offs[-1]}")
    if include_last_offset:
        nb, starts, ends = max(offs.size - 1, 0), offs[:-1], offs[1:]
    else:
        nb, starts, ends = offs.size, offs, np.r_[offs[1:], n]
    if np.any(ends < starts):
        raise RuntimeError("embedding_bag: offsets must be non-decreasing")
    o2b = np.full(n, -1, np.int64)
    if nb:
        o2b[starts[0]:ends[-1]] = np.repeat(np.arange(nb), ends - starts)
    return nb, starts, ends, o2b


def _bag_kernel(weight, indices, offsets, scale, mode, sparse, psw, include_last_offset,
                padding_idx):
    _bag_check(weight, indices, offsets, mode, psw)
    idx = indices.astype(np.int64, copy=False)
    num, d = weight.shape
    bad = np.flatnonzero((idx < 0) | (idx >= num))
    if bad.size:
        raise RuntimeError(f"Index {bad[0]} of input takes value {idx[bad[0]]} which is not in "
                           f"the valid range [0, {num})")
    nb, starts, ends, o2b = _bag_layout(idx.size, offsets, include_last_offset)
    comp = np.float32 if weight.dtype.itemsize == 2 else weight.dtype
    valid = o2b >= 0
    if padding_idx is not None:
        valid &= idx != padding_idx
    bag_size = np.bincount(o2b[valid], minlength=nb).astype(np.int64)[:nb]
    rows = weight[idx].astype(comp, copy=False)
    if psw is not None:
        rows = rows * psw.astype(comp)[:, None]
    out = np.zeros((nb, d), comp)
    max_idx = np.full((nb, d) if mode == 2 else (nb,), -1, np.int64)
    full = ends > starts
    if full.any():
        end = ends[-1]
        seg = starts[full]
        if mode == 2:
            rows = np.where(valid[:, None], rows, -np.inf)[:end]
            m = np.maximum.reduceat(rows, seg, axis=0)
            pos_bag = np.cumsum(full) - 1           # bag -> row of m
            at = np.where(rows == m[pos_bag[o2b[:end]]], np.arange(end)[:, None], end)
            first = np.minimum.reduceat(at, seg, axis=0)
            got = np.isfinite(m) & (first < end)
            out[full] = np.where(got, m, 0)
            max_idx[full] = np.where(got, idx[np.minimum(first, end - 1)], -1)
        else:
            rows = np.where(valid[:, None], rows, 0)[:end]
            out[full] = np.add.reduceat(rows, seg, axis=0)
            if mode == 1:
                out /= np.maximum(bag_size, 1)[:, None]
    return out.astype(weight.dtype, copy=False), o2b, bag_size, max_idx


def _bag_meta(weight, indices, offsets, scale, mode, sparse, psw, include_last_offset,
              padding_idx):
    _bag_check(weight, indices, offsets, mode, psw)
    nb = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    nb = max(nb, 0)
    d = weight.shape[1]
    return (((nb, d), weight.dtype), ((indices.shape[0],), D.int64), ((nb,), D.int64),
            ((nb, d) if mode == 2 else (nb,), D.int64))


def _bag_vjp(ctx, g, *_):
    weight, indices, _, scale, mode, _, psw, _, padding_idx = ctx.args
    _, o2b, bag_size, max_idx = ctx.out
    num = ctx.shapes[0][0]
    nw = ctx.needs_input_grad[0]
    npsw = ctx.needs_input_grad[6]
    if mode == 2:
        hit = max_idx >= 0
        gw = zeros((num, g.shape[1]), dtype=g.dtype).scatter_add(
            0, max_idx.clamp(min=0), g * hit) if nw else None
        return gw, None, None, None, None, None, None, None, None
    pad = -1 if padding_idx is None else padding_idx
    f = _row_factor(indices, num, pad, False, g.dtype) * (o2b >= 0)
    if scale:
        f = f / _bag_freq(indices, num).to(g.dtype)
    if mode == 1:
        f = f / bag_size.clamp(min=1)[o2b.clamp(min=0)].to(g.dtype)
    rows = g.index_select(0, o2b.clamp(min=0)) * f.unsqueeze(-1)
    gw = gpsw = None
    if nw:
        r = rows if psw is None else rows * psw.unsqueeze(-1)
        gw = dispatch(EMBEDDING_BACKWARD, (r, indices, num, -1, False))
    if npsw:
        gpsw = (rows * weight.index_select(0, indices)).sum(1)
    return gw, None, None, None, None, None, gpsw, None, None


def _bag_freq(indices, num):
    """The divisor PyTorch's CPU embedding_bag backward applies with scale_grad_by_freq:
    for the k-th distinct index (in sorted order) it divides by the count of the k-th
    element of the *sorted* indices (its loop reads counts[indices[k]]), not by that
    index's own count; ember follows it so that gradients agree."""
    from .histogram import bincount
    from .sorting import searchsorted, sort, unique
    flat = indices.reshape(-1)
    counts = bincount(flat, minlength=num)
    rank = searchsorted(unique(flat), flat)
    return counts[sort(flat).values[rank]]


EMBEDDING_BAG = register("_embedding_bag", _bag_kernel, meta=_bag_meta, vjp=_bag_vjp,
                         tags=("prim", "gather"), save=(0, 1, 6), save_out=True,
                         nondiff_outputs=(1, 2, 3),
                         schema="_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, "
                                "bool scale_grad_by_freq=False, int mode=0, bool sparse=False, "
                                "Tensor? per_sample_weights=None, "
                                "bool include_last_offset=False, "
                                "int? padding_idx=None) -> (Tensor, Tensor, Tensor, Tensor)")


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """torch.embedding_bag (weight first): returns (output, offset2bag, bag_size,
    max_indices); mode 0/1/2 = sum/mean/max. Unused padding_idx is None or negative."""
    if sparse:
        raise NotImplementedError("embedding_bag: sparse=True (sparse gradients) is not "
                                  "supported by ember; use sparse=False")
    if padding_idx is not None and padding_idx < 0:
        padding_idx = None
    return dispatch(EMBEDDING_BAG, (weight, indices, offsets, bool(scale_grad_by_freq),
                                    int(mode), False, per_sample_weights,
                                    bool(include_last_offset), padding_idx))
