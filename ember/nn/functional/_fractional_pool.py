"""nn.functional.fractional_max_pool2d/3d (Graham, "Fractional Max-Pooling", 2014).

Note: window starts follow PyTorch's generate_intervals: for a sample u in [0, 1) per
(batch, channel, spatial dim), alpha = (in - k) / (out - 1) computed in the input's
dtype, start[i] = int((i + u) * alpha) - int(u * alpha), and the last start is in - k.
The samples come from `_random_samples` or `rand(N, C, nd)` (2-d: width then height;
3-d: time, height, width, as PyTorch's kernels read them), so
under ember.manual_seed(s, generator="mt19937") the pooling regions are PyTorch's. Values
are a gather of each window and a max in ember ops, so gradients flow to the maxima.
"""
import numpy as np

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _starts(samples, in_size, out_size, k, dtype):
    """(N, C, out_size) int64 window starts from samples (N, C) in the input's dtype."""
    u = samples.astype(dtype)
    starts = np.empty(samples.shape + (out_size,), np.int64)
    if out_size > 1:
        alpha = dtype.type(in_size - k) / dtype.type(out_size - 1)
        i = np.arange(out_size - 1, dtype=dtype)
        starts[..., :-1] = ((i + u[..., None]) * alpha).astype(np.int64) - \
            (u * alpha).astype(np.int64)[..., None]
    if out_size > 0:
        starts[..., -1] = in_size - k
    return starts


def _fractional(nd, input, kernel_size, output_size, output_ratio, return_indices,
                _random_samples):
    from ...ops.creation import from_numpy
    from ...ops.random import rand
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         f"output_ratio")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    spatial = tuple(input.shape[-nd:])
    k = _ntuple(kernel_size, nd)
    if output_size is None:
        ratio = _ntuple(output_ratio, nd)
        if len(ratio) > nd:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or "
                             f"tuple of Ints.")
        output_size = [int(s * r) for s, r in zip(spatial, ratio)]
    out = _ntuple(output_size, nd)
    for s, kk, o in zip(spatial, k, out):
        if o + kk - 1 > s:
            raise RuntimeError(f"{name}(): pool size {kk} too large relative to input size "
                               f"{s} and output size {o}")
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    N, C = x.shape[0], x.shape[1]
    if _random_samples is None:
        _random_samples = rand(N, C, nd, dtype=input.dtype)
    samples = _random_samples.detach().numpy()
    if tuple(samples.shape) != (N, C, nd):
        raise RuntimeError(f"{name}(): Expect _random_samples to be of size {(N, C, nd)}, "
                           f"got {tuple(samples.shape)}")
    dt = np.dtype(np.float64 if samples.dtype == np.float64 else np.float32)
    # PyTorch's sample order: 2-d (width, height); 3-d (time, height, width)
    order = [1, 0] if nd == 2 else [0, 1, 2]
    starts = [_starts(samples[..., order[d]], spatial[d], out[d], k[d], dt)
              for d in range(nd)]
    # flat index of every window element: (N, C, *out, *k)
    strides = [int(np.prod(spatial[d + 1:])) for d in range(nd)]
    flat = np.zeros((N, C) + out + k, np.int64)
    for d in range(nd):
        pos = starts[d].reshape((N, C) + tuple(out[d] if e == d else 1 for e in range(nd))
                                + (1,) * nd)
        off = np.arange(k[d]).reshape((1, 1) + (1,) * nd
                                      + tuple(k[d] if e == d else 1 for e in range(nd)))
        flat = flat + (pos + off) * strides[d]
    flat = flat.reshape(N, C, -1)
    idx = from_numpy(flat)
    win = x.reshape(N, C, -1).gather(2, idx).reshape((N, C) + out + (int(np.prod(k)),))
    values, arg = win.max(-1)
    indices = idx.reshape((N, C) + out + (-1,)).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    if not batched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional(2, input, kernel_size, output_size, output_ratio, True,
                       _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional(3, input, kernel_size, output_size, output_ratio, True,
                       _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Max over pseudo-random k x k windows that tile the input to output_size."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Max over pseudo-random k x k x k windows that tile the input to output_size."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)
