"""Samples for nansum/logsumexp/norm/count_nonzero, the scans and the counting ops."""
import ember

from ._util import t, idx, X

NON_DIFFERENTIABLE = {"count_nonzero", "bincount", "histc", "histogram"}

NO_GRADCHECK = {}

SAMPLES = {
    "nansum": lambda: (lambda x: ember.nansum(x, 1), [X()]),
    "logsumexp": lambda: (lambda x: ember.logsumexp(x, (0, 1)), [X()]),
    "norm": lambda: (lambda x: ember.norm(x, 3, dim=1, keepdim=True), [X()]),
    "count_nonzero": lambda: (lambda x: ember.count_nonzero(x, 0), [X(kind="int")]),
    "cumsum": lambda: (lambda x: ember.cumsum(x, 1), [X()]),
    "cumprod": lambda: (lambda x: ember.cumprod(x, -1), [X()]),
    "cummax": lambda: (lambda x: ember.cummax(x, 1), [X()]),
    "cummin": lambda: (lambda x: ember.cummin(x, 0), [X()]),
    "logcumsumexp": lambda: (lambda x: ember.logcumsumexp(x, 1), [X()]),
    "bincount": lambda: (lambda i, w: ember.bincount(i, w, minlength=4), [idx(1, 3, 1), t(3)]),
    "histc": lambda: (lambda x: ember.histc(x, 5, -1, 1), [X()]),
    "histogram": lambda: (lambda x: ember.histogram(x, 4), [X()]),
}
