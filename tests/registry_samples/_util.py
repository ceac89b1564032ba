"""Sample-input helpers shared by the registry sample tables."""
import numpy as np

import ember

F64 = ember.float64
C128 = ember.complex128


def t(*shape, dtype=F64, kind="randn", seed=0):
    """A sample input: random normal, positive, small ints, or a bool mask."""
    rng = np.random.default_rng(seed + 7 * len(shape))
    if kind == "pos":
        a = rng.uniform(0.5, 2.0, shape)
    elif kind == "int":
        a = rng.integers(0, 5, shape)
    elif kind == "bool":
        a = rng.integers(0, 2, shape).astype(bool)
    else:
        a = rng.standard_normal(shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return ember.from_numpy(np.asarray(a).astype(dtype.np))


def idx(*values):
    return ember.from_numpy(np.asarray(values, dtype=np.int64))


def mask():
    return ember.from_numpy(np.array([[True, False, True], [False, True, True]]))


X = lambda **k: t(2, 3, **k)            # noqa: E731


def _unary(fn, kind="randn", dtype=F64):
    return lambda: (fn, [X(kind=kind, dtype=dtype)])


def _binary(fn, kind="randn", dtype=F64):
    return lambda: (fn, [X(kind=kind, dtype=dtype), t(3, kind=kind, dtype=dtype, seed=1)])


def _fill(method):
    """An in-place sampler on a fresh copy (a leaf that requires grad refuses in-place)."""
    return lambda: (lambda x: method(x.clone()), [X()])


