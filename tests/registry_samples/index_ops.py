"""Samples for the index reductions and copies (ember/ops/index_ops.py)."""
import ember

from ._util import t, idx

NON_DIFFERENTIABLE = set()
NO_GRADCHECK = {}

SAMPLES = {
    "index_copy": lambda: (lambda x, i, s: x.index_copy(1, i, s),
                           [t(2, 3), idx(2, 0), t(2, 2, seed=1)]),
    "index_reduce": lambda: (lambda x, i, s: x.index_reduce(0, i, s, "prod"),
                             [t(2, 3, kind="pos"), idx(1, 1, 0), t(3, 3, kind="pos", seed=1)]),
    "scatter_reduce": lambda: (lambda x, i, s: x.scatter_reduce(1, i, s, "amax",
                                                                include_self=False),
                               [t(2, 3), idx([0, 0, 2], [1, 1, 1]), t(2, 3, seed=2)]),
    "cdist": lambda: (lambda a, b: ember.cdist(a, b, p=3.0), [t(2, 3), t(4, 3, seed=1)]),
    "trace": lambda: (ember.trace, [t(3, 4)]),
}
