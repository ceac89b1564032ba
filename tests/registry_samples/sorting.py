"""Samples and declarations for the sorting and selection ops (ember/ops/sorting.py)."""
import numpy as np

import ember

from ._util import t, X

NON_DIFFERENTIABLE = {"searchsorted"}

NO_GRADCHECK = {
    "unique": "PyTorch records unique's node but its derivative raises (not implemented)",
    "unique_consecutive": "PyTorch records the node but its derivative raises "
                          "(not implemented)",
}


def _seq():
    return ember.from_numpy(np.array([-1.0, 0.0, 0.5, 2.0]))


SAMPLES = {
    "sort": lambda: (lambda x: ember.sort(x, 0, descending=True), [X()]),
    "topk": lambda: (lambda x: x.topk(2, largest=False), [X()]),
    "kthvalue": lambda: (lambda x: x.kthvalue(2, 0, keepdim=True), [t(3, 2)]),
    "median": lambda: (ember.median, [X()]),
    "nanmedian": lambda: (ember.nanmedian, [X()]),
    "median_dim": lambda: (lambda x: x.median(1), [X()]),
    "nanmedian_dim": lambda: (lambda x: x.nanmedian(0, keepdim=True), [X()]),
    "mode": lambda: (lambda x: x.mode(1), [X()]),
    "unique": lambda: (lambda x: ember.unique(x, return_inverse=True, return_counts=True),
                       [X(kind="int")]),
    "unique_consecutive": lambda: (lambda x: x.unique_consecutive(return_counts=True, dim=1),
                                   [X(kind="int")]),
    "searchsorted": lambda: (lambda s, v: ember.searchsorted(s, v, right=True), [_seq(), X()]),
}
