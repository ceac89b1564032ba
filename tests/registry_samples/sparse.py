"""Samples for the sparse registry ops (ember/ops/sparse.py), called on the dense
components a sparse tensor holds; duplicate index pairs exercise the summing."""
import numpy as np

import ember
from ember.ops.sparse import segment_sum, sparse_mm

from ._util import idx, t


def _pairs():
    return ember.from_numpy(np.array([[0, 2, 1, 0, 2], [3, 0, 1, 3, 2]], dtype=np.int64))


SAMPLES = {
    "_sparse_mm": lambda: (lambda i, v, d: sparse_mm(i, v, d, 3), [_pairs(), t(5), t(4, 2)]),
    "_sparse_segment_sum": lambda: (lambda v, i: segment_sum(v, i, 4),
                                    [t(5, 2), idx(0, 3, 0, 1, 3)]),
}
