"""PyTorch's underscore-named helpers that programs, decompositions and PyTorch's OpInfo
database call at top level: _safe_softmax, _softmax_backward_data, _chunk_cat,
_unsafe_masked_index(_put_accumulate) and segment_reduce.

Why here: each is a composite of public ember ops (as PyTorch's own decompositions write
them), so autograd, fake tensors and dispatch modes see the ember ops they are made of and
nothing needs a kernel of its own.
"""
import math

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import _wrap_dim
from ._elementwise import type_name
from .grid_sampler import GRID_SAMPLER

__all__ = ["_safe_softmax", "_softmax_backward_data", "_chunk_cat", "_unsafe_masked_index",
           "_unsafe_masked_index_put_accumulate", "segment_reduce", "grid_sampler",
           "grid_sampler_2d", "grid_sampler_3d"]


def _safe_softmax(input, dim, dtype=None):
    """softmax, with rows that are all -inf giving zeros instead of NaN (what
    scaled_dot_product_attention wants for fully masked rows)."""
    from .activation import softmax
    from .indexing import where
    out = softmax(input, dim, dtype=dtype)
    masked = (input == -math.inf).all(dim, keepdim=True) if input.dim() else input == -math.inf
    return where(masked, out.new_zeros(()), out)


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    """The gradient of softmax from its output; the result has `input_dtype`."""
    from ._aten import aten
    return aten._softmax_backward_data.default(grad_output, output, dim).to(input_dtype)


def _chunk_cat(tensors, dim, num_chunks, *, out=None):
    """Each tensor split into num_chunks along dim (zero-padded to equal chunks), chunks
    flattened past dim and concatenated: shape (*lead, num_chunks, sum of chunk sizes)."""
    from .join import cat
    from .pool import constant_pad_nd
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    first = tensors[0]
    d = _wrap_dim(dim, first.dim())
    pieces = []
    for t in tensors:
        if t.dim() <= d or tuple(t.shape[:d]) != tuple(first.shape[:d]):
            raise RuntimeError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for "
                               "all tensors")
        if t.dtype is not first.dtype:
            raise RuntimeError("_chunk_cat expects all input tensors with the same dtype")
        size = t.shape[d]
        chunk = -(-size // num_chunks)
        pad = chunk * num_chunks - size
        if pad:
            t = constant_pad_nd(t, [0, 0] * (t.dim() - d - 1) + [0, pad])
        pieces.append(t.reshape(tuple(t.shape[:d]) + (num_chunks, -1)))
    res = cat(pieces, d + 1)
    if out is not None:
        out.resize_(res.shape).copy_(res)
        return out
    return res


def _check_index_args(x, mask, indices, name):
    for i in indices:
        if i is not None and i.dtype not in (D.int64, D.int32):
            raise RuntimeError(f"{name}: expected indices to be long or int, but got "
                               f"{i.dtype}")
    if mask.dtype is not D.bool:
        raise RuntimeError(f"{name}: expected mask dtype to be Bool but got {mask.dtype}")
    if len(indices) > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()} (got "
                         f"{len(indices)})")


def _unsafe_masked_index(input, mask, indices, fill):
    """input[indices] where mask holds, `fill` elsewhere; out-of-range indices (only under
    a False mask, by contract) are clamped instead of raising."""
    from .creation import full
    from .indexing import masked_fill
    _check_index_args(input, mask, indices, "_unsafe_masked_index")
    if input.numel() == 0:
        shape = tuple(mask.shape)
        return full(shape, fill, dtype=input.dtype)
    key = tuple(slice(None) if i is None else i.clamp(0, input.shape[k] - 1)
                for k, i in enumerate(indices))
    return masked_fill(input[key], ~mask, fill)


def _unsafe_masked_index_put_accumulate(input, mask, indices, values):
    """input.index_put(indices, values where mask else 0, accumulate=True), indices
    clamped as in _unsafe_masked_index."""
    from .indexing import index_put, masked_fill
    _check_index_args(input, mask, indices, "_unsafe_masked_index_put_accumulate")
    if input.numel() == 0:
        return input.clone()
    idx = [None if i is None else i.clamp(-input.shape[k], input.shape[k] - 1)
           for k, i in enumerate(indices)]
    return index_put(input, idx, masked_fill(values, ~mask, 0), accumulate=True)


_EMPTY = {"max": -math.inf, "min": math.inf, "sum": 0.0, "prod": 1.0, "mean": math.nan}


def _segment(x, reduce, initial):
    """One segment (a slice along dim 0) reduced; `initial` joins the reduction."""
    n = x.shape[0]
    if n == 0:
        v = _EMPTY[reduce] if initial is None else initial
        return x.new_full(tuple(x.shape[1:]), v)
    if reduce == "max":
        r = x.amax(0)
        return r if initial is None else r.clamp(min=initial)
    if reduce == "min":
        r = x.amin(0)
        return r if initial is None else r.clamp(max=initial)
    if reduce == "prod":
        r = x.prod(0)
        return r if initial is None else r * initial
    r = x.sum(0)
    if initial is not None:
        r = r + initial
    return r / n if reduce == "mean" else r


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduces consecutive segments of `data` along `axis` (lengths or offsets per leading
    index); empty segments give `initial`, else the reduction's identity (NaN for mean)."""
    from .join import stack
    if reduce not in _EMPTY:
        raise RuntimeError(f"reduce argument must be either sum, prod, max, min or mean, "
                           f"got {reduce}")
    if not data.dtype.is_floating_point:
        raise NotImplementedError(f'"_segment_reduce_cpu" not implemented for '
                                  f"'{type_name(data.dtype)}'")
    if indices is not None:
        raise NotImplementedError("segment_reduce(): indices based reduction is not "
                                  "supported yet (as in PyTorch)")
    if (lengths is None) == (offsets is None):
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    axis = _wrap_dim(axis, data.dim())
    if offsets is not None:
        if offsets.dim() != axis + 1:
            raise RuntimeError("Expected all rows of offsets to match the data's leading dims")
        bounds = offsets.tolist()
    else:
        if lengths.dim() != axis + 1:
            raise RuntimeError("Expected all rows of lengths to match the data's leading dims")
        lens = lengths.tolist()

        def _acc(row):
            if row and isinstance(row[0], list):
                return [_acc(r) for r in row]
            out, s = [0], 0
            for v in row:
                if v < 0:
                    raise RuntimeError("lengths contains negative value!")
                s += v
                out.append(s)
            return out
        bounds = _acc(lens)

    def _run(x, b):
        if isinstance(b[0], list):                   # a leading dimension: one row each
            return stack([_run(x[k], bk) for k, bk in enumerate(b)])
        if not unsafe and b[-1] != x.shape[0]:
            raise RuntimeError("Expected all rows of lengths along axis to sum to "
                               "data.size(lengths.dim()-1) when !unsafe.")
        return stack([_segment(x[b[i]:b[i + 1]], reduce, initial) for i in range(len(b) - 1)])
    return _run(data, bounds)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """aten::grid_sampler: F.grid_sample with the modes as integers (bilinear 0, nearest 1,
    bicubic 2; zeros 0, border 1, reflection 2)."""
    return dispatch(GRID_SAMPLER, (input, grid, int(interpolation_mode), int(padding_mode),
                                   bool(align_corners)))


def _grid_sampler_nd(nd):
    def fn(input, grid, interpolation_mode, padding_mode, align_corners):
        if input.dim() != nd + 2:
            raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same "
                               f"number of dimensions, but got input with sizes "
                               f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
        return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)
    fn.__name__ = fn.__qualname__ = f"grid_sampler_{nd}d"
    fn.__doc__ = f"grid_sampler on {nd + 2}-D input (aten::grid_sampler_{nd}d)."
    return fn


grid_sampler_2d = _grid_sampler_nd(2)
grid_sampler_3d = _grid_sampler_nd(3)
