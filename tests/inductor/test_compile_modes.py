"""torch.compile's modes on the C backend: cpp_wrapper / reduce-overhead (one C call per
graph, preallocated intermediates) and max-autotune, each against mode="default"."""
import logging

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember._inductor import codecache, config

pytestmark = pytest.mark.skipif(not __import__("ember._inductor.native", fromlist=["x"])
                                .available(), reason="no C compiler")


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    """A C compile error fails the test instead of falling back to eager."""
    monkeypatch.setattr(config, "fallback_on_error", False)


class _Counting:
    """A loaded library whose C functions count their calls (by name)."""

    def __init__(self, lib, calls):
        self._lib, self._calls = lib, calls

    def __getattr__(self, name):
        fn = getattr(self._lib, name)
        calls = self._calls

        class _F:
            argtypes = restype = None

            def __call__(self, *a):
                calls[name] = calls.get(name, 0) + 1
                return fn(*a)

            def __setattr__(self, k, v):
                setattr(fn, k, v)
        return _F()


@pytest.fixture
def c_calls(monkeypatch):
    calls = {}
    real = codecache.load
    monkeypatch.setattr(codecache, "load",
                        lambda code: (lambda r: (_Counting(r[0], calls), r[1]))(real(code)))
    return calls


def _mlp():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5))


def _step_fn(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _train(kw, steps=4, batches=(8,), **compile_kw):
    ember._dynamo.reset()
    model = _mlp()
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = ember.compile(_step_fn(model, opt), **kw, **compile_kw)
    rng = np.random.default_rng(0)
    losses = []
    for k in range(steps):
        b = batches[k % len(batches)]
        x = ember.from_numpy(rng.standard_normal((b, 12)).astype(np.float32))
        y = ember.from_numpy(rng.integers(0, 5, b).astype(np.int64))
        losses.append(step(x, y).item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", [dict(mode="reduce-overhead"),
                                dict(options={"cpp_wrapper": True})])
def test_inference_equals_default(kw, c_calls):
    m = _mlp().eval()
    x = ember.randn(7, 12)
    ember._dynamo.reset()
    with ember.no_grad():
        want = ember.compile(m)(x)
        ember._dynamo.reset()
        f = ember.compile(m, **kw)
        f(x)
        c_calls.clear()
        got = f(x)
        got2 = f(x)
    _close(got.numpy(), want.numpy())
    _close(got2.numpy(), want.numpy())
    assert got.data_ptr() != got2.data_ptr()       # outputs are fresh, never overwritten
    assert c_calls == {"em_graph": 2}


@pytest.mark.parametrize("kw", [dict(mode="reduce-overhead"),
                                dict(options={"cpp_wrapper": True})])
def test_training_equals_default(kw):
    losses, params = _train({})
    losses2, params2 = _train(kw)
    _close(losses2, losses)
    for a, b in zip(params2, params):
        _close(a, b)


def test_dynamic_shapes_equal_default():
    losses, params = _train({}, steps=6, batches=(8, 5, 11), dynamic=True)
    losses2, params2 = _train(dict(mode="reduce-overhead"), steps=6, batches=(8, 5, 11),
                              dynamic=True)
    _close(losses2, losses)
    for a, b in zip(params2, params):
        _close(a, b)


def test_training_step_is_one_c_call_per_graph(c_calls):
    ember._dynamo.reset()
    model = _mlp()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    step = ember.compile(_step_fn(model, opt), mode="reduce-overhead")
    x, y = ember.randn(8, 12), ember.tensor([0, 1, 2, 3, 4, 0, 1, 2])
    for _ in range(3):
        step(x, y)
    c_calls.clear()
    step(x, y)
    # forward, backward and the optimizer update: three graphs, each one C call
    assert c_calls == {"em_graph": 3}


def test_no_compiler_falls_back(monkeypatch):
    want, _ = _train({})
    monkeypatch.setattr(config.cpp, "cxx", "/nonexistent/cc")
    monkeypatch.setattr(codecache, "_LOADED", {})
    with pytest.warns(UserWarning, match="no C compiler"):
        got, _ = _train(dict(mode="reduce-overhead"))
    _close(got, want)


def test_gather_out_of_bounds_raises_as_eager():
    fn = lambda x, i: x.gather(1, i)   # noqa: E731
    x = ember.randn(3, 4)
    with pytest.raises(RuntimeError) as want:
        fn(x, ember.tensor([[0], [4], [1]]))
    ember._dynamo.reset()
    f = ember.compile(fn, mode="reduce-overhead")
    i = ember.tensor([[0], [3], [1]])
    _close(f(x, i).numpy(), fn(x, i).numpy())
    with pytest.raises(RuntimeError) as got:
        f(x, ember.tensor([[0], [4], [1]]))
    assert str(got.value) == str(want.value)


def test_views_and_batched_matmul_equal_eager():
    def fn(a, b):
        c = a.transpose(1, 2) @ b[:, 1:, :]          # strided (transposed) operands
        return c.unsqueeze(0).expand(2, -1, -1, -1).sum(0), c.permute(2, 0, 1)
    a, b = ember.randn(3, 5, 4), ember.randn(3, 6, 2)
    ember._dynamo.reset()
    got = ember.compile(fn, options={"cpp_wrapper": True})(a, b)
    for g, w in zip(got, fn(a, b)):
        assert g.shape == w.shape
        _close(g.numpy(), w.numpy())


def test_graph_without_c_extern_keeps_python_wrapper(caplog):
    fn = lambda x: F.avg_pool2d(x, 2).relu()     # noqa: E731
    x = ember.randn(1, 2, 6, 6)
    ember._dynamo.reset()
    with caplog.at_level(logging.INFO, logger="ember._inductor.compile_fx"):
        got = ember.compile(fn, mode="reduce-overhead")(x)
    _close(got.numpy(), fn(x).numpy())
    assert "avg_pool2d has no C implementation" in caplog.text


@pytest.mark.parametrize("mode", ["max-autotune", "max-autotune-no-cudagraphs"])
def test_max_autotune_records_choices_and_reuses_them(mode, monkeypatch, tmp_path):
    from ember._inductor import autotune
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    m = _mlp().eval()
    fn = lambda x: m(x).softmax(-1)     # noqa: E731
    x = ember.randn(6, 12)
    with ember.no_grad():
        want = fn(x)
        ember._dynamo.reset()
        timed = autotune.stats["timed"]
        seen = []
        real = autotune.tune_groups
        monkeypatch.setattr(autotune, "tune_groups",
                            lambda *a: (lambda r: seen.append(r) or r)(real(*a)))
        got = ember.compile(fn, mode=mode)(x)
        assert autotune.stats["timed"] > timed
        assert seen and all(v in autotune.VARIANTS for v in seen[-1].values())
        # a new process (empty memory cache) reads the choices from disk: no timing
        ember._dynamo.reset()
        monkeypatch.setattr(codecache, "_LOADED", {})
        timed, from_disk = autotune.stats["timed"], autotune.stats["from_disk"]
        got2 = ember.compile(fn, mode=mode)(x)
        assert autotune.stats["timed"] == timed and autotune.stats["from_disk"] > from_disk
    _close(got.numpy(), want.numpy())
    _close(got2.numpy(), want.numpy())


def test_max_autotune_knobs_split_as_torch(monkeypatch, tmp_path):
    from ember._inductor import autotune
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    gemm, groups = [], []
    real_mm, real_groups = autotune.tune_matmul, autotune.tune_groups
    monkeypatch.setattr(autotune, "tune_matmul", lambda *a: gemm.append(a) or real_mm(*a))
    monkeypatch.setattr(autotune, "tune_groups",
                        lambda *a: groups.append(a) or real_groups(*a))
    fn = lambda a, b: (a @ b).relu()   # noqa: E731
    a, b = ember.randn(4, 3), ember.randn(3, 5)
    ember._dynamo.reset()
    f = ember.compile(fn, options={"cpp_wrapper": True, "max_autotune_gemm": True})
    _close(f(a, b).numpy(), fn(a, b).numpy())
    assert gemm and not groups
    ember._dynamo.reset()
    f = ember.compile(fn, options={"max_autotune_pointwise": True})
    _close(f(a, b).numpy(), fn(a, b).numpy())
    assert groups


def test_max_autotune_matmul_loops_variant_is_correct(monkeypatch, tmp_path):
    from ember._inductor import autotune
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(autotune, "tune_matmul", lambda *a: "loops")
    fn = lambda a, b: (a.t() @ b).relu()   # noqa: E731
    a, b = ember.randn(5, 3), ember.randn(5, 4)
    ember._dynamo.reset()
    f = ember.compile(fn, mode="max-autotune")
    _close(f(a, b).numpy(), fn(a, b).numpy())


def _cnn():
    ember.manual_seed(0)
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3, stride=2, padding=1, dilation=2), nn.ReLU(),
                         nn.Flatten(), nn.Linear(24, 3))


def _cnn_losses(kw, steps=3):
    ember._dynamo.reset()
    model = _cnn()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    step = ember.compile(_step_fn(model, opt), **kw)
    rng = np.random.default_rng(0)
    x = ember.from_numpy(rng.standard_normal((4, 2, 10, 10)).astype(np.float32))
    y = ember.tensor([0, 1, 2, 1])
    losses = [step(x, y).item() for _ in range(steps)]
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def test_cnn_training_equals_default_in_one_c_call_per_graph(c_calls):
    want, pw = _cnn_losses({})
    got, pg = _cnn_losses(dict(mode="reduce-overhead"))
    _close(got, want)
    for a, b in zip(pg, pw):
        _close(a, b)
    c_calls.clear()
    _, _ = _cnn_losses(dict(mode="reduce-overhead"), steps=1)
    assert set(c_calls) <= {"em_graph", "em_set_blas", "em_arena_bytes", "em_set_threads"}


@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=2, padding=1, dilation=2),
                                dict(kernel_size=2, ceil_mode=True),
                                dict(kernel_size=3, stride=1, padding=1)])
def test_conv_transpose_and_max_pool_with_indices_equal_eager(kw):
    w = ember.randn(3, 2, 3, 3)

    def fn(x):
        y, i = F.max_pool2d(x, return_indices=True, **kw)
        return F.conv_transpose2d(y, w, stride=2, padding=1, output_padding=1), i
    x = ember.randn(2, 3, 9, 11)
    x[0, 0, 1, 1] = float("nan")
    ember._dynamo.reset()
    got = ember.compile(fn, options={"cpp_wrapper": True})(x)
    want = fn(x)
    np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-5, atol=1e-5)


def test_index_select_cat_split_equal_eager(c_calls):
    def fn(x, i):
        a, b = x.index_select(0, i).split([1, 3], dim=1)
        return ember.cat([b.t(), a.t() * 2], 0).relu(), b.sin()
    x, i = ember.randn(5, 4), ember.tensor([4, 0, 2])
    ember._dynamo.reset()
    f = ember.compile(fn, mode="reduce-overhead")
    for g, w in zip(f(x, i), fn(x, i)):
        _close(g.numpy(), w.numpy())
    assert c_calls["em_graph"] == 1
    with pytest.raises(IndexError, match="index out of range in self"):
        f(x, ember.tensor([0, 5, 1]))


def test_resnet_like_inference_is_one_c_call(c_calls):
    ember.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(4),
                      nn.ReLU(), nn.MaxPool2d(3, 2, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(4, 2)).eval()
    x = ember.randn(2, 3, 16, 16)
    ember._dynamo.reset()
    with ember.no_grad():
        got = ember.compile(m, mode="reduce-overhead")(x)
        want = m(x)
    _close(got.numpy(), want.numpy())
    assert c_calls["em_graph"] == 1


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_per_image_and_1x1_convolutions_equal_eager(dtype, c_calls):
    w1 = ember.randn(5, 3, 1, 1, dtype=dtype)
    w3, b3 = ember.randn(4, 5, 3, 3, dtype=dtype), ember.randn(4, dtype=dtype)
    fn = lambda x: F.conv2d(F.conv2d(x, w1).relu(), w3, b3, padding=1, dilation=1)  # noqa: E731
    x = ember.randn(2, 3, 16, 16, dtype=dtype)
    ember._dynamo.reset()
    got = ember.compile(fn, mode="reduce-overhead")(x)
    np.testing.assert_allclose(got.numpy(), fn(x).numpy(), rtol=1e-4, atol=1e-4)
    assert c_calls["em_graph"] == 1
