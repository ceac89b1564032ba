"""Samples for the torch.ops.aten-only composites (ember/ops/aten_only.py)."""
import ember
import ember.nn.functional as F

from ._util import t

A = ember.ops.aten


def _pool_backward(n):
    def fn(g, x):
        pool = F.max_pool2d if n == 2 else F.max_pool3d
        _, ind = pool(x.detach(), 2, return_indices=True)
        op = A.max_pool2d_with_indices_backward if n == 2 else A.max_pool3d_with_indices_backward
        return op.default(g, x, [2] * n, [2] * n, [0] * n, [1] * n, False, ind)
    return fn


SAMPLES = {
    "native_dropout_backward": lambda: (
        lambda g, m: A.native_dropout_backward.default(g, m, 1.25), [t(2, 3), t(2, 3, kind="bool")]),
    "max_pool2d_with_indices_backward": lambda: (_pool_backward(2), [t(1, 2, 2, 3), t(1, 2, 4, 6)]),
    "max_pool3d_with_indices_backward": lambda: (_pool_backward(3),
                                                 [t(1, 1, 2, 1, 2), t(1, 1, 4, 2, 4)]),
    "_upsample_bilinear2d_aa": lambda: (
        lambda x: A._upsample_bilinear2d_aa.default(x, [3, 4], False), [t(1, 2, 6, 7)]),
    "_upsample_bilinear2d_aa_vec": lambda: (
        lambda x: A._upsample_bilinear2d_aa.vec(x, None, True, [0.6, 1.5]), [t(1, 2, 6, 5)]),
}
