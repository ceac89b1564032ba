"""Samples for the rearranging ops (ember/ops/rearrange.py): repeat, flip, roll,
triangles, the index form of repeat_interleave and the triangle-index factories."""
import ember

from ._util import t, idx, X

# integer-valued results: indices and factories
NON_DIFFERENTIABLE = {"repeat_interleave", "tril_indices", "triu_indices"}

NO_GRADCHECK = {}

SAMPLES = {
    "repeat": lambda: (lambda x: x.repeat(2, 1, 3), [X()]),
    "flip": lambda: (lambda x: ember.flip(x, (0, -1)), [X()]),
    "roll": lambda: (lambda x: ember.roll(x, (1, -2), (0, 1)), [X()]),
    "tril": lambda: (lambda x: ember.tril(x, -1), [t(2, 3, 3)]),
    "triu": lambda: (lambda x: x.triu(1), [X()]),
    "repeat_interleave": lambda: (lambda r: ember.repeat_interleave(r), [idx(1, 0, 2)]),
    "tril_indices": lambda: (lambda: ember.tril_indices(3, 4, 1), []),
    "triu_indices": lambda: (lambda: ember.triu_indices(4, 3, -1), []),
}
