"""Compiled vs eager: NumPy code (PyTorch 2.1). A compiled function that takes and returns
ndarrays and calls numpy is captured as tensor ops and still returns ndarrays; NumPy math
on `t.numpy()` inside compiled code is captured too; unsupported numpy functions break."""
import numpy as np
from corpus_helpers import check_calls


def counter(lib):
    return lib._dynamo.testing.CompileCounter()


def rng():
    return np.random.default_rng(0)


def test_ndarray_in_ndarray_out(lib):
    cnt = counter(lib)

    def f(a, b):
        c = np.sin(a) * np.exp(-b) + np.dot(a, b.T).sum()
        return c / np.linalg.norm(c, axis=1, keepdims=True)

    cf = lib.compile(f, backend=cnt)
    r = rng()
    check_calls(lib, f, cf, [(r.random((3, 4)), r.random((3, 4))) for _ in range(3)])
    out = cf(r.random((3, 4)), r.random((3, 4)))
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    assert cnt.frame_count == 1


def test_numpy_reductions_where_and_dtypes(lib):
    cnt = counter(lib)

    def f(x):
        return (np.mean(x, axis=1, keepdims=True),
                np.where(x > 0.5, x, 0.0).astype(np.float32),
                np.arange(3),
                np.clip(x, 0.2, 0.8).max(axis=0),
                np.argmax(x, axis=1))

    cf = lib.compile(f, backend=cnt)
    check_calls(lib, f, cf, [(rng().random((3, 4)),), (rng().random((3, 4)) * 2,)])
    assert cnt.frame_count == 1


def test_numpy_float32_input_keeps_dtype(lib):
    cnt = counter(lib)

    def f(x):
        return np.tanh(x) * 2 + x.sum(axis=0)

    cf = lib.compile(f, backend=cnt)
    x64 = rng().random((2, 5))
    check_calls(lib, f, cf, [(x64.astype(np.float32),), (x64.astype(np.float32),)])
    check_calls(lib, f, cf, [(x64,)])
    assert cnt.frame_count == 2


def test_numpy_inplace_on_input(lib):
    cnt = counter(lib)

    def f(x):
        x += 1
        x[0] = 0.0
        return np.sin(x).sum(axis=0)

    cf = lib.compile(f, backend=cnt)
    check_calls(lib, f, cf, [(rng().random((3, 4)),) for _ in range(3)])
    assert cnt.frame_count == 1


def test_numpy_shapes_automatic_dynamic(lib):
    cnt = counter(lib)

    def f(x):
        return (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6)

    cf = lib.compile(f, backend=cnt)
    seen = []
    for n in (3, 3, 4, 5, 6):
        check_calls(lib, f, cf, [(rng().random((n, 4)),)])
        seen.append(cnt.frame_count)
    assert seen == [1, 1, 2, 2, 2]


def test_tensor_numpy_then_numpy_math(lib):
    cnt = counter(lib)

    def f(t):
        a = t.numpy()
        b = np.cumsum(np.abs(a), axis=0) ** 0.5
        return lib.from_numpy(b) + t, b.shape[0]

    cf = lib.compile(f, backend=cnt)
    check_calls(lib, f, cf, [(lib.randn(4, 2),) for _ in range(3)])
    assert cnt.frame_count == 1


def test_numpy_on_tensor_result_returns_ndarray(lib):
    cnt = counter(lib)

    def f(t):
        return np.square((t * 2).numpy()).mean()

    cf = lib.compile(f, backend=cnt)
    for _ in range(2):
        t = lib.randn(5)
        got, want = cf(t), f(t)
        # NumPy returns a scalar (np.float32) from a full reduction; PyTorch's compiled
        # NumPy returns a 0-d ndarray of the same dtype and value
        assert isinstance(got, (np.ndarray, np.generic)) and np.ndim(got) == 0
        assert np.asarray(got).dtype == np.asarray(want).dtype == np.float32
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert cnt.frame_count == 1


def test_unsupported_numpy_function_breaks(lib):
    cnt = counter(lib)

    def f(x):
        y = x * 2
        c = np.polyfit(y[0], y[1], 1)       # not in PyTorch's NumPy: a graph break
        return c + y.sum()

    cf = lib.compile(f, backend=cnt)
    check_calls(lib, f, cf, [(rng().random((3, 4)),) for _ in range(2)])
    assert cnt.frame_count == 2
    assert lib._dynamo.explain(f)(rng().random((3, 4))).graph_break_count == 1


def test_numpy_random_numbers_not_baked_in(lib):
    cnt = counter(lib)

    def f(x):
        return x + np.random.rand(*x.shape)

    cf = lib.compile(f, backend=cnt)
    x = np.zeros((2, 3))
    # PyTorch draws compiled np.random from its own generator (documented: the numbers
    # differ from NumPy's stream), so compare distributions, shapes, dtypes and freshness
    got = [cf(x) for _ in range(3)]
    want = f(x)
    for g in got:
        assert g.shape == want.shape and g.dtype == want.dtype
        assert ((g >= 0) & (g < 1)).all()
    assert not np.array_equal(got[0], got[1]) and not np.array_equal(got[1], got[2])
