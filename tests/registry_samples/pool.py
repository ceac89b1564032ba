"""Samples for the pooling, padding and grid-sampling primitives (ember/ops/pool.py,
ember/nn/functional/_vision.py), through the public nn.functional API."""
import ember.nn.functional as F

from ._util import t


def _pooled_indices(shape, n):
    """Indices of a non-overlapping max pool (no duplicates: unpooling is injective)."""
    pool = F.max_pool2d if n == 2 else F.max_pool3d
    return pool(t(*shape, seed=5), 2, return_indices=True)[1]


SAMPLES = {
    "max_pool2d_with_indices": lambda: (
        lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
        [t(2, 2, 5, 6)]),
    "max_pool3d_with_indices": lambda: (
        lambda x: F.max_pool3d(x, 2, 1, dilation=(1, 2, 1), return_indices=True),
        [t(1, 2, 3, 5, 4)]),
    "max_pool3d": lambda: (lambda x: F.max_pool3d(x, (2, 2, 3), 2, 1, ceil_mode=True),
                           [t(2, 3, 5, 4)]),
    "avg_pool2d": lambda: (lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                  count_include_pad=False),
                           [t(2, 2, 5, 6)]),
    "avg_pool3d": lambda: (lambda x: F.avg_pool3d(x, 2, (1, 2, 2), 1), [t(1, 2, 3, 4, 5)]),
    "_adaptive_avg_pool2d": lambda: (lambda x: F.adaptive_avg_pool2d(x, (3, 4)),
                                     [t(2, 2, 5, 7)]),
    "_adaptive_avg_pool3d": lambda: (lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)),
                                     [t(1, 2, 3, 5, 4)]),
    "adaptive_max_pool2d": lambda: (lambda x: F.adaptive_max_pool2d(x, (3, 4), True),
                                    [t(2, 2, 5, 7)]),
    "adaptive_max_pool3d": lambda: (lambda x: F.adaptive_max_pool3d(x, (2, 3, 2), True),
                                    [t(2, 3, 5, 4)]),
    "max_unpool2d": lambda: (lambda x, i: F.max_unpool2d(x, i, 2),
                             [t(2, 2, 2, 3), _pooled_indices((2, 2, 4, 6), 2)]),
    "max_unpool3d": lambda: (lambda x, i: F.max_unpool3d(x, i, 2),
                             [t(1, 2, 2, 2, 1), _pooled_indices((1, 2, 4, 4, 2), 3)]),
    "constant_pad_nd": lambda: (lambda x: F.pad(x, (1, -1, 2, 0), value=0.5), [t(2, 3, 4)]),
    "reflection_pad1d": lambda: (lambda x: F.pad(x, (2, 1), mode="reflect"), [t(2, 3, 4)]),
    "reflection_pad2d": lambda: (lambda x: F.pad(x, (2, 1, -1, 2), mode="reflect"),
                                 [t(2, 3, 4)]),
    "reflection_pad3d": lambda: (lambda x: F.pad(x, (1, 1, 0, 1, 1, 0), mode="reflect"),
                                 [t(1, 2, 3, 3, 4)]),
    "replication_pad1d": lambda: (lambda x: F.pad(x, (3, 1), mode="replicate"), [t(2, 3, 4)]),
    "replication_pad2d": lambda: (lambda x: F.pad(x, (2, 1, 1, 2), mode="replicate"),
                                  [t(1, 2, 3, 4)]),
    "replication_pad3d": lambda: (lambda x: F.pad(x, (1, 2, 0, 1, 2, 0), mode="replicate"),
                                  [t(2, 2, 3, 4)]),
    "grid_sampler": lambda: (
        lambda x, g: F.grid_sample(x, g, mode="bilinear", padding_mode="reflection",
                                   align_corners=False),
        [t(2, 2, 3, 4), (t(2, 3, 2, 2, seed=3) * 0.7).detach()]),
}
