"""The inductor backend: every generated kernel equals eager, fusion counts, cache, fallback.

Many ops share one compiled graph (one C compile) so the suite stays fast; the disk cache
(~/.cache/ember unless EMBER_CACHE_DIR) keeps them across runs.
"""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember._inductor import compile_fx, config, cpp_builder
from ember._inductor.compile_fx import CompiledGraph, compile_fx_inner

pytestmark = pytest.mark.skipif(
    not any(__import__("shutil").which(c) for c in ("cc", "gcc", "clang")),
    reason="no C compiler")


def compiled(fn, dynamic=None):
    """fn compiled with compile_fx_inner; `.made` lists the CompiledGraphs."""
    made = []

    def backend(gm, example_inputs):
        c = compile_fx_inner(gm, example_inputs)
        made.append(c)
        return c
    ember._dynamo.reset()
    f = ember.compile(fn, backend=backend, dynamic=dynamic)
    f.made = made
    return f


def _np(t):
    return t.numpy().astype(np.float64) if t.dtype != ember.bool else t.numpy()


def assert_same(got, want, tol=1e-5):
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == b.dtype, (k, a.dtype, b.dtype)
        assert tuple(a.shape) == tuple(b.shape), (k, a.shape, b.shape)
        np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol, equal_nan=True,
                                   err_msg=f"output {k}")


def kernels(f):
    return [c.kernel_count for c in f.made if isinstance(c, CompiledGraph)]


def test_first_target_is_one_fused_loop():
    fn = lambda x: (x.sin() * x.cos()).relu().exp().sum()   # noqa: E731
    f = compiled(fn)
    x = ember.randn(4_000_000)
    assert_same(f(x), fn(x), tol=1e-5)
    assert kernels(f) == [1]


UNARY = ["neg", "abs", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
         "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "sqrt", "rsqrt",
         "reciprocal", "sigmoid", "relu", "square", "floor", "ceil", "trunc", "frac", "sign",
         "erf", "erfc", "isnan", "isinf", "isfinite", "signbit"]


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_unary_ops_equal_eager(dtype):
    def fn(x):
        return tuple(getattr(ember, name)(x) for name in UNARY)
    f = compiled(fn)
    x = ember.randn(7, 33, dtype=dtype) * 2
    x[0, 0] = float("nan")
    x[0, 1] = float("inf")
    x[0, 2] = 0.0
    with np.errstate(all="ignore"):
        want = fn(x)
    assert_same(f(x), want, tol=1e-5 if dtype == ember.float32 else 1e-12)
    assert kernels(f) == [len(UNARY)]


def test_binary_ops_broadcast_and_scalars():
    def fn(x, y):
        return (x + y, x - 2.5 * y, x * y, x / y, ember.maximum(x, y), ember.minimum(x, y),
                ember.atan2(x, y), ember.pow(x.abs(), y), x ** 2, ember.remainder(x, y),
                ember.fmod(x, y), x.add(y, alpha=3), ember.where(x > y, x, y),
                x == y, x != y, x < y, x <= y, x > 0.5, x >= y, ember.hypot(x, y),
                ember.logaddexp(x, y), ember.fmax(x, y), ember.copysign(x, y), x + 1)
    f = compiled(fn)
    x, y = ember.randn(5, 1, 6), ember.randn(4, 6) + 0.1
    x[0, 0, 0] = float("nan")
    with np.errstate(all="ignore"):
        assert_same(f(x, y), fn(x, y), tol=1e-5)


@pytest.mark.parametrize("dtype", [ember.int64, ember.int32, ember.int16, ember.uint8])
def test_integer_ops(dtype):
    def fn(a, b):
        return (a + b, a * b, a - b, ember.maximum(a, b), a > b, a == b, (a & b), a | b,
                a ^ b, a.sum(), a.sum(1), a.amax(0), a.amin(1, keepdim=True), a * 2 + 1,
                a.to(ember.float32) / 3, (a > 2).any(), (a > 0).all(1), a.abs(),
                a.prod(1))
    f = compiled(fn)
    a = ember.randint(0, 7, (6, 5)).to(dtype)
    b = ember.randint(0, 7, (6, 5)).to(dtype)
    assert_same(f(a, b), fn(a, b))


def test_casts_and_bool():
    def fn(x):
        return (x.to(ember.int32), x.to(ember.bool), (x > 0).to(ember.float32) * 2,
                x.double() * 3, x.to(ember.int64).sum(), (x > 0).sum(), x.float())
    f = compiled(fn)
    x = ember.randn(9, 4) * 10
    assert_same(f(x), fn(x))


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.int64])
def test_reductions(dtype):
    def fn(x):
        return (x.sum(), x.sum(0), x.sum((0, 2), keepdim=True), x.amax(1), x.amin(-1),
                x.amax(), x.mean(1) if x.dtype.is_floating_point else x.sum(1),
                x.prod(2), (x > 0).any(0), (x > -100).all())
    f = compiled(fn)
    x = (ember.randn(4, 5, 6) * 3).to(dtype)
    assert_same(f(x), fn(x), tol=1e-5)


def test_amax_propagates_nan():
    fn = lambda x: (x.amax(1), x.amin(0), x.amax())   # noqa: E731
    f = compiled(fn)
    x = ember.randn(4, 40)
    x[1, 3] = float("nan")
    assert_same(f(x), fn(x))


def test_views_and_noncontiguous_inputs():
    def fn(x, y):
        return (x.t() * 2, x.permute(1, 0).sum(1), x[1:, ::2] + 1, x[2] * y[:, 0].sum(),
                x.unsqueeze(0).expand(3, 8, 6).exp(), x.reshape(6, 8) - 1,
                x.reshape(48).cumsum(0), x.t().contiguous().view(48) * 2, y.squeeze(1) + 1)
    f = compiled(fn)
    x = ember.randn(6, 8).t()             # non-contiguous input
    y = ember.randn(10, 1)[::2]           # strided input
    assert not x.is_contiguous()
    assert_same(f(x, y), fn(x, y))


def test_empty_tensors():
    fn = lambda x: (x.sin() + 1, x.sum(0), x.exp().sum())   # noqa: E731
    f = compiled(fn)
    x = ember.randn(0, 3)
    assert_same(f(x), fn(x))


def test_dynamic_sizes_one_compile():
    fn = lambda x, y: ((x.sin() * y).sum(1) + x.shape[0], x.softmax(-1))   # noqa: E731
    f = compiled(fn, dynamic=True)
    for n, m in [(3, 5), (7, 5), (4, 9), (33, 17)]:
        x, y = ember.randn(n, m), ember.randn(m)
        assert_same(f(x, y), fn(x, y))
    assert len(f.made) == 1


def test_softmax_and_mlp_fuse_around_matmul():
    f = compiled(lambda x: x.softmax(-1))
    x = ember.randn(8, 16)
    assert_same(f(x), x.softmax(-1))
    assert kernels(f) == [3]              # amax, sum(exp), exp/sum: no temporary buffers
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    fn = lambda x: F.log_softmax(m(x), -1)   # noqa: E731
    f = compiled(fn)
    x = ember.randn(32, 64)
    with ember.no_grad():
        assert_same(f(x), fn(x))
    assert kernels(f) == [4]              # bias+relu, bias, row max, row sum(exp) + final


def test_norms_and_activations():
    fn = lambda x: (F.layer_norm(x, (16,)), F.gelu(x), F.silu(x), F.softplus(x),  # noqa
                    F.gelu(x, approximate="tanh"), F.mse_loss(x, x.flip(0)))
    f = compiled(fn)
    x = ember.randn(4, 16)
    assert_same(f(x), fn(x), tol=1e-5)


def test_half_precision_computes_in_float():
    fn = lambda x: (x.to(ember.bfloat16).exp().float(), x.half().sin(), x.bfloat16().sum())  # noqa
    f = compiled(fn)
    x = ember.randn(4, 16)
    assert_same(f(x), fn(x), tol=2e-2)


def test_inductor_backend_inference_and_training():
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))
    ember._dynamo.reset()
    cm = ember.compile(m)                  # default backend: "inductor"
    x = ember.randn(5, 8)
    with ember.no_grad():
        assert_same(cm(x), m(x))
    out = cm(x).sum()
    out.backward()
    got = [p.grad.clone() for p in m.parameters()]
    for p in m.parameters():
        p.grad = None
    m(x).sum().backward()
    for g, p in zip(got, m.parameters()):
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_inplace_ops_stay_extern_and_ordered():
    def fn(x, y):
        a = x * 2
        x.add_(1)
        return a + x, y.mul_(2).sum()
    f = compiled(fn)
    x1, y1 = ember.randn(5), ember.randn(5)
    x2, y2 = x1.clone(), y1.clone()
    got = f(x1, y1)
    want = fn(x2, y2)
    assert_same(got, want)
    assert_same((x1, y1), (x2, y2))


def test_output_code_log(capfd):
    ember._logging.set_logs(output_code=True)
    try:
        f = compiled(lambda x: x.cos() * 3)
        f(ember.randn(4))
    finally:
        ember._logging.set_logs()
    err = capfd.readouterr().err
    assert "void group_0(void **bufs" in err and "em_cosf" in err


def test_no_compiler_warns_once_and_matches_eager(monkeypatch):
    monkeypatch.setattr(config.cpp, "cxx", "/nonexistent/ember-cc")
    monkeypatch.setattr(compile_fx, "_warned", set())
    fn = lambda x: x.sin().sum(0) + 2   # noqa: E731
    x = ember.randn(5, 3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f = compiled(fn)
        assert_same(f(x), fn(x))
        g = compiled(lambda x: x.exp())
        assert_same(g(x), x.exp())
    msgs = [str(m.message) for m in w if "C compiler" in str(m.message)]
    assert len(msgs) == 1, msgs
    assert not kernels(f)


_CHILD = r"""
import sys, ember
from ember._inductor import codecache, cpp_builder
if sys.argv[1] == "second":
    def boom(*a, **k):
        raise AssertionError("the C compiler was invoked")
    cpp_builder.build_shared = boom
f = ember.compile(lambda x: (x * 3).tanh().sum(1))
x = ember.ones(4, 5)
print(float(f(x)[0]), codecache.stats["compiles"], codecache.stats["disk_hits"])
"""


def test_disk_cache_second_process_does_not_compile(tmp_path):
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path))
    outs = []
    for which in ("first", "second"):
        r = subprocess.run([sys.executable, "-c", _CHILD, which], env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.split())
    assert outs[0][1:] == ["1", "0"]          # compiled once
    assert outs[1][1:] == ["0", "1"]          # loaded from disk
    assert outs[0][0] == outs[1][0]
    assert any(p.suffix == ".so" for p in tmp_path.rglob("*.so"))


def test_compiler_found():
    assert os.path.exists(cpp_builder.find_compiler())


def test_scalar_inputs_float_and_int():
    def g(x, a):
        return x * a + a
    ember._dynamo.reset()
    f = ember.compile(g, backend="inductor")
    x = ember.randn(5)
    for a in [1.5, 2.5, 3.5, -1.0]:        # a becomes a float graph input after a change
        assert_same(f(x, a), g(x, a))

    def h(x, n):
        return (x[:3] * n).sum() + n
    f = ember.compile(h, backend="inductor")
    for n in [2, 3, 4, 9]:
        assert_same(f(x, n), h(x, n))


def test_slice_by_symbolic_bound_stays_correct():
    """The capture gives x[:n] a static fake size; the inductor must not trust it."""
    def h(x, n):
        return x[:n].sum() * n
    ember._dynamo.reset()
    f = ember.compile(h, backend="inductor")
    x = ember.randn(5)
    for n in [2, 3, 4, 1, 7]:
        assert_same(f(x, n), h(x, n))


def test_returned_views_alias_inputs():
    x = ember.randn(3, 4)
    ember._dynamo.reset()
    f = ember.compile(lambda x: (x, x.t(), x[0] * 2), backend="inductor")
    same, v, _ = f(x)
    assert same is x
    v[0, 0] = 100.0
    assert x[0, 0].item() == 100.0


def test_mutation_through_view_and_extern_mix():
    def m(x):
        x[0].mul_(2)
        return x.sum(), x.argmax(1) + 1, x.var(1) + x.std(), x.cumsum(0).sin(), \
            ember.cat([x.sin(), x.cos()]).sum(0), x.max(1).values.exp()
    x1 = ember.randn(3, 4)
    x2 = x1.clone()
    ember._dynamo.reset()
    got = ember.compile(m, backend="inductor")(x1)
    assert_same(got, m(x2))
    assert_same(x1, x2)


def test_cross_entropy_and_matmul_only_graphs():
    fn = lambda x, t: F.cross_entropy(x, t)   # noqa: E731
    f = compiled(fn)
    x, t = ember.randn(4, 5), ember.tensor([1, 0, 3, 2])
    assert_same(f(x, t), fn(x, t))
    g = compiled(lambda a, b: a @ b)
    a, b = ember.randn(3, 4), ember.randn(4, 5)
    assert_same(g(a, b), a @ b)


def test_modes_and_options():
    x = ember.randn(5)
    fn = lambda x: x.sin() + 1   # noqa: E731
    for kw in [dict(mode="reduce-overhead"), dict(mode="max-autotune"),
               dict(options={"cpp.threads": 1})]:
        ember._dynamo.reset()
        assert_same(ember.compile(fn, **kw)(x), fn(x))
    ember._dynamo.reset()
    with pytest.raises(RuntimeError, match="Unexpected optimization option bogus"):
        ember.compile(fn, options={"bogus": 1})(x)
    ember._dynamo.reset()
    assert_same(ember.compile(fn, options={"cpp_wrapper": True})(x), fn(x))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=1, padding=1, dilation=2),
                                dict(kernel_size=2, ceil_mode=True)])
def test_max_pool_values_generated_when_indices_unused(kw):
    fn = lambda x: F.max_pool2d(x, **kw).relu()   # noqa: E731
    f = compiled(fn)
    x = ember.randn(2, 3, 9, 11)
    x[0, 0, 0, 0] = float("nan")
    assert_same(f(x), fn(x))
    assert kernels(f) == [1 if kw.get("ceil_mode") else 2]   # ceil_mode stays extern


def test_codecache_clear_command(tmp_path):
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path))
    (tmp_path / "inductor" / "ab").mkdir(parents=True)
    (tmp_path / "inductor" / "ab" / "x.so").write_text("")
    r = subprocess.run([sys.executable, "-m", "ember._inductor.codecache", "--clear"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "cleared" in r.stdout
    assert not (tmp_path / "inductor").exists()


def _fork_child(f, x, q):
    q.put(float(f(x)))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_kernels_run_in_a_forked_child():
    """GNU OpenMP's thread pool does not survive fork: a forked child (DataLoader worker)
    runs kernels on one thread instead of hanging."""
    import multiprocessing as mp
    ember._dynamo.reset()
    f = ember.compile(lambda x: (x.sin() * 2).sum())
    x = ember.randn(200_000)
    want = float(f(x))                       # the parent's pool is started
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_fork_child, args=(f, x, q))
    p.start()
    p.join(60)
    alive = p.is_alive()
    if alive:
        p.kill()
    assert not alive, "the forked child hung in an OpenMP region"
    assert abs(q.get(timeout=10) - want) <= 1e-3 * abs(want)


def test_integer_wraparound_and_weak_scalars():
    fn = lambda y, u: (y + 1, y * 3, u > -1, u < 256, u + 1, u == 300)   # noqa: E731
    f = compiled(fn)
    y = ember.tensor([2**31 - 1, -2**31, 5], dtype=ember.int32)
    u = ember.tensor([0, 5, 255], dtype=ember.uint8)
    assert_same(f(y, u), fn(y, u))


def test_concurrent_processes_share_the_cache(tmp_path):
    """Two processes compiling the same graph at once into one cache: both succeed (each
    builds into its own temporary file, renamed into place atomically)."""
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path))
    code = ("import ember; f = ember.compile(lambda x: (x * 5).cosh().sum(0)); "
            "print(float(f(ember.ones(3, 2))[0]))")
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-500:] for o in outs]
    assert outs[0][0] == outs[1][0]
    assert len(list(tmp_path.rglob("*.so"))) == 1
    assert not list(tmp_path.rglob("*.tmp"))


def test_var_is_two_generated_reductions():
    fn = lambda x: (x.var(1), x.var((0, 2), keepdim=True), x.var(), x.std(1, correction=0),  # noqa
                    ember.var(x, 2, correction=2), F.layer_norm(x, (6,)))
    f = compiled(fn)
    x = ember.randn(4, 5, 6)
    assert_same(f(x), fn(x))
    g = compiled(lambda x: F.batch_norm(x, None, None, training=True))
    x = ember.randn(8, 3, 5, 5)
    assert_same(g(x), F.batch_norm(x, None, None, training=True))
    assert kernels(g) == [4]           # sum, squared deviations, mean, normalize
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # var over one element: nan, with eager's warning
        h = compiled(lambda x: x.var(0))
        x = ember.randn(1, 3)
        assert_same(h(x), x.var(0))
