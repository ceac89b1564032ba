"""torch.histogramdd: a D-dimensional histogram of the points in input's last dimension.

Why composite: per dimension the bin of each point is a searchsorted over that dimension's
edges (linspace over the range, or the given edge tensors; a point on the last edge counts in
the last bin, points outside any range are dropped, as in aten), the D bin numbers fold into
one flat index, and index_add sums ones or the weights. Built from ember ops; the
outer-range rule (min/max, +-0.5 when they are equal, 0..1 when empty) is histogram's.
"""
from ._tensor import Tensor


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    import ember
    from .ops.histogram import _outer_edges
    from .ops.reduction import return_type
    from . import _dtype as D
    if input.dtype not in (D.float32, D.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{input.dtype}'")
    nd = input.shape[-1] if input.dim() else 1
    x = input.reshape(-1, nd)
    if isinstance(bins, int):
        bins = [bins] * nd
    if len(bins) != nd:
        raise RuntimeError(f"torch.histogramdd: expected {nd} sequences of bin edges for each "
                           f"of the {nd} dimensions of the input, but got {len(bins)}")
    if range is not None and len(range) != 2 * nd:
        raise RuntimeError(f"torch.histogramdd: for a {nd}-dimensional histogram range should "
                           f"have {2 * nd} elements, but got {len(range)}")
    edges = []
    for d, b in enumerate(bins):
        if isinstance(b, Tensor):
            edges.append(b)
            continue
        if b <= 0:
            raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {b} for "
                               f"dimension {d}")
        r = None if range is None else (range[2 * d], range[2 * d + 1])
        lo, hi = _outer_edges(x[:, d].detach().numpy(), r)
        edges.append(ember.linspace(lo, hi, b + 1, dtype=input.dtype))
    flat = ember.zeros(x.shape[0], dtype=ember.int64)
    keep = ember.ones(x.shape[0], dtype=ember.bool)
    sizes = []
    for d, e in enumerate(edges):
        nb = max(e.numel() - 1, 0)
        sizes.append(nb)
        col = x[:, d].contiguous()
        pos = ember.searchsorted(e, col, right=True) - 1
        pos = ember.where(col == e[-1], nb - 1, pos)
        keep = keep & (col >= e[0]) & (col <= e[-1])
        flat = flat * nb + pos.clamp(0, max(nb - 1, 0))
    w = keep.to(input.dtype) if weight is None else \
        ember.where(keep, weight.reshape(-1), ember.zeros((), dtype=input.dtype))
    total = 1
    for s in sizes:
        total *= s
    hist = ember.zeros(total, dtype=input.dtype).index_add(0, flat, w) \
        if total else ember.zeros(0, dtype=input.dtype)
    hist = hist.reshape(sizes)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            shape = [1] * nd
            shape[d] = sizes[d]
            hist = hist / (e[1:] - e[:-1]).reshape(shape)
    return return_type("histogramdd", ("hist", "bin_edges"))(hist, tuple(edges))
