"""ember.compile on NumPy programs, end to end: each program, captured through ember._numpy
into one graph, returns what NumPy itself returns (values, dtypes, shapes) on every call,
without recompiling for new data; an untraceable NumPy call (np.allclose) is a graph break
and the result is still NumPy's."""
import numpy as np
import pytest

import ember
from ember._dynamo.testing import CompileCounter

_rng = np.random.default_rng(7)


def _check(got, want, where):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _check(g, w, f"{where}[{i}]")
        return
    if isinstance(want, (np.ndarray, np.generic)):
        g, w = np.asarray(got), np.asarray(want)
        assert isinstance(got, (np.ndarray, np.generic)), f"{where}: {type(got)}"
        assert g.dtype == w.dtype, f"{where}: dtype {g.dtype} != {w.dtype}"
        assert g.shape == w.shape, f"{where}: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-9, equal_nan=True, err_msg=where)
        return
    assert got == want, f"{where}: {got!r} != {want!r}"


def stats(x):
    z = (x - x.mean(axis=0)) / x.std(axis=0, ddof=1)
    return z, np.cov(x), np.median(x, axis=1), np.percentile(x, [25, 75]), np.ptp(x)


def shapes(x):
    a = np.concatenate([x, x[::-1]], axis=0)
    b = np.stack([x.T, x.T], axis=-1).reshape(x.shape[1], -1)
    parts = np.split(a, 2)
    return (np.flip(a, 1), np.roll(b, 2), np.tile(parts[0], (2, 1)),
            np.pad(x, ((1, 0), (0, 2))), np.swapaxes(b[None], 0, 2), np.ravel(x)[3:])


def linalg(x):
    m = x[:, :3] @ x[:, :3].T + 5 * np.eye(x.shape[0])
    v = x[:, 0]
    return (np.linalg.solve(m, v), np.linalg.inv(m), np.linalg.det(m),
            np.einsum("ij,kj->ik", x, x), np.outer(v, v), np.tensordot(x, x, axes=([1], [1])),
            np.linalg.norm(x, axis=1), np.trace(m))


def int_math(x):
    i = (x * 10).astype(np.int64)
    return i // 3, i % 3, -i % 4, i ** 2, i / 4, (i > 5).sum(), np.mean(i), i & 6, i << 1


def creation(x):
    grid_x, grid_y = np.meshgrid(np.linspace(0, 1, x.shape[1]), np.arange(x.shape[0]))
    return (np.zeros_like(x) + grid_x, grid_y * x, np.eye(3, 4, k=1), np.ones(3) * 2,
            np.full((2, 2), 7), np.arange(0, 1, 0.25), np.tri(3))


def indexing(x):
    y = x.copy()
    y[0] = 0.0
    y[:, ::-2] = -1.0
    y[1:, 1] += 5
    return y, x[:, [0, 2]], x[1:, None], x[..., -1], x[::-1, 1:3]


def inplace(x):
    y = x * 1
    y += 1
    y *= 2
    z = np.arange(6).reshape(2, 3)
    z -= 1
    return y, z


def sorting(x):
    s = np.sort(x, axis=1)
    return (s, np.argsort(x[:, 0]), np.searchsorted(s[0], [0.25, 0.5]), np.cumsum(x, axis=0),
            np.diff(x, axis=1), np.argmax(x), np.max(x, axis=0))


def fft(x):
    spec = np.fft.rfft(x, axis=1)
    return np.abs(spec), np.fft.irfft(spec, n=x.shape[1], axis=1), np.fft.fftfreq(8)


def float32_stays_float32(x):
    f = x.astype(np.float32)
    g = f * 2.5 + 1 - np.sqrt(np.abs(f)) / 3
    return g, g.sum(axis=0), g.astype(np.float16), np.exp2(f), f / 3


def nan_functions(x):
    y = np.where(x > 0.7, float("nan"), x)
    return (np.nanmean(y, axis=0), np.nanmax(y, axis=1), np.nansum(y), np.isnan(y).any(),
            np.nan_to_num(y, nan=-1.0), np.clip(y, 0.2, 0.6), np.isclose(x, x + 1e-9))


def convolution_and_windows(x):
    v = x[0]
    return (np.convolve(v, [1.0, 2.0, 1.0], mode="same"), np.correlate(v, v[:2]),
            np.trapezoid(x, axis=1), np.interp([0.1, 0.5], [0.0, 1.0], [1.0, 3.0]))


PROGRAMS = [stats, shapes, linalg, int_math, creation, indexing, inplace, sorting, fft,
            float32_stays_float32, nan_functions, convolution_and_windows]


@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_program_compiles_to_one_graph_and_matches_numpy(fn):
    cnt = CompileCounter()
    cf = ember.compile(fn, backend=cnt)
    for _ in range(3):
        x = _rng.random((4, 5))
        with np.errstate(all="ignore"):
            want = fn(x.copy())
        got = cf(x.copy())
        _check(got, want, fn.__name__)
    explanation = ember._dynamo.explain(fn)(_rng.random((4, 5)))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert cnt.frame_count == 1


def test_tensor_numpy_math_is_captured():
    def f(t):
        a = t.numpy()
        b = np.tanh(a) @ a.T + np.log1p(np.abs(a)).mean(axis=1, keepdims=True)
        return ember.from_numpy(b) * 2

    cnt = CompileCounter()
    cf = ember.compile(f, backend=cnt)
    for _ in range(2):
        t = ember.randn(3, 4, dtype=ember.float64)
        assert ember.allclose(cf(t), f(t))
    assert cnt.frame_count == 1


def test_untraceable_numpy_call_breaks_the_graph():
    def f(x):
        y = np.sin(x) * 2
        close = np.allclose(y, 0)          # a Python bool from the data: a graph break
        return y + (1.0 if close else -1.0)

    x = _rng.random((3, 3))
    explanation = ember._dynamo.explain(f)(x)
    assert explanation.graph_break_count >= 1
    _check(ember.compile(f, backend="eager")(x), f(x), "allclose break")
