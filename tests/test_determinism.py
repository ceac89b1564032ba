"""Deterministic-algorithms mode (PyTorch 1.7 names and the newer API), against torch.

Ops tagged `nondeterministic` must raise or warn exactly when PyTorch does on CPU (it
does not for any of them: its CPU scatter/index kernels are deterministic, and so are
ember's sequential NumPy kernels); on a backend whose kernels may run in parallel
they raise PyTorch's error text.
"""
import threading
import warnings

import numpy as np
import pytest

import ember
from ember.ops import REGISTRY
from ember.ops._registry import BACKENDS
from oracle import check

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _restore():
    """Each test leaves both libraries' (global) mode as it found it."""
    e = (ember.are_deterministic_algorithms_enabled(),
         ember.is_deterministic_algorithms_warn_only_enabled())
    t = (torch.are_deterministic_algorithms_enabled(),
         torch.is_deterministic_algorithms_warn_only_enabled())
    yield
    ember.use_deterministic_algorithms(e[0], warn_only=e[1])
    torch.use_deterministic_algorithms(t[0], warn_only=t[1])


def _state(L):
    return (L.are_deterministic_algorithms_enabled(),
            L.is_deterministic_algorithms_warn_only_enabled(), L.get_deterministic_debug_mode())


# -------------------------------------------------------------------- the flag API

@pytest.mark.parametrize("mode,warn_only", [(True, False), (True, True), (False, False),
                                            (False, True)])
def test_use_deterministic_algorithms_round_trips(mode, warn_only):
    for L in (ember, torch):
        L.use_deterministic_algorithms(mode, warn_only=warn_only)
    assert _state(ember) == _state(torch)


@pytest.mark.parametrize("debug_mode", [0, 1, 2, "default", "warn", "error", True, False])
def test_set_deterministic_debug_mode(debug_mode):
    for L in (ember, torch):
        L.use_deterministic_algorithms(False)
        L.set_deterministic_debug_mode(debug_mode)
    assert _state(ember) == _state(torch)


BAD_CALLS = [
    lambda L: L.set_deterministic_debug_mode(3),
    lambda L: L.set_deterministic_debug_mode(-1),
    lambda L: L.set_deterministic_debug_mode("loud"),
    lambda L: L.set_deterministic_debug_mode(1.0),
    lambda L: L.set_deterministic_debug_mode(None),
    lambda L: L.use_deterministic_algorithms(1),
    lambda L: L.use_deterministic_algorithms("yes"),
    lambda L: L.use_deterministic_algorithms(True, warn_only=1),
    lambda L: L.use_deterministic_algorithms(True, True),       # warn_only is keyword-only
]


@pytest.mark.parametrize("i", range(len(BAD_CALLS)))
def test_bad_arguments_raise_like_torch(i):
    with pytest.raises(Exception) as t:
        BAD_CALLS[i](torch)
    with pytest.raises(type(t.value)) as e:
        BAD_CALLS[i](ember)
    if "debug_mode" in str(t.value):
        assert str(e.value) == str(t.value)
    assert _state(ember) == (False, False, 0)


def test_pytorch_17_names_are_deprecated_aliases():
    with pytest.warns(UserWarning, match="set_deterministic is deprecated"):
        ember.set_deterministic(True)
    assert ember.are_deterministic_algorithms_enabled()
    with pytest.warns(UserWarning, match="is_deterministic is deprecated"):
        assert ember.is_deterministic() is True
    with pytest.warns(UserWarning):
        ember.set_deterministic(False)
    with pytest.warns(UserWarning):
        assert ember.is_deterministic() is False


def test_the_mode_is_global_not_per_thread():
    """PyTorch keeps it in the global context: a thread's setting is seen everywhere."""
    seen = []
    t = threading.Thread(target=lambda: ember.use_deterministic_algorithms(True, warn_only=True))
    t.start()
    t.join()
    assert _state(ember) == (True, True, 1)
    ember.use_deterministic_algorithms(False)
    t = threading.Thread(target=lambda: seen.append(_state(ember)))
    ember.set_deterministic_debug_mode("error")
    t.start()
    t.join()
    assert seen == [(True, False, 2)]


# ------------------------------------------------ every tagged op, as torch on CPU

def _idx(L):
    return L.tensor([0, 2, 2, 1])


TAGGED = {   # registry op -> a public call that dispatches it, with duplicate indices
    "index_add": lambda L, x, s: x.index_add(0, _idx(L), s, alpha=2),
    "index_copy": lambda L, x, s: x.index_copy(0, L.tensor([0, 2, 3, 1]), s),
    "index_put": lambda L, x, s: x.index_put((_idx(L),), s, accumulate=True),
    "index_reduce": lambda L, x, s: x.index_reduce(0, _idx(L), s, "prod"),
    "scatter": lambda L, x, s: x.scatter(0, _idx(L)[:, None].expand(4, 3), s),
    "scatter_add": lambda L, x, s: x.scatter_add(0, _idx(L)[:, None].expand(4, 3), s),
    "scatter_reduce": lambda L, x, s: x.scatter_reduce(0, _idx(L)[:, None].expand(4, 3), s,
                                                       "sum"),
}


def test_every_tagged_op_has_a_row():
    """A newly tagged op must say here what PyTorch's CPU kernel does."""
    assert sorted(n for n, op in REGISTRY.items() if op.nondeterministic) == sorted(TAGGED)


def _run(fn, L, warn_only):
    L.use_deterministic_algorithms(True, warn_only=warn_only)
    x = L.from_numpy(np.arange(12.0).reshape(4, 3))
    s = L.from_numpy(np.linspace(-1, 1, 12).reshape(4, 3))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            out = fn(L, x, s)
        except RuntimeError as exc:
            return "raised", str(exc)
    msgs = [str(m.message) for m in w if "deterministic" in str(m.message)]
    return ("warned", msgs) if msgs else ("ok", to_np(out))


def to_np(t):
    return t.detach().numpy()


@pytest.mark.parametrize("warn_only", [False, True])
@pytest.mark.parametrize("name", sorted(TAGGED))
def test_tagged_ops_on_cpu_behave_as_torch(name, warn_only):
    fn = TAGGED[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # index_reduce's beta warning in torch
        want = _run(fn, torch, warn_only)
    got = _run(fn, ember, warn_only)
    assert got[0] == want[0]
    if want[0] == "ok":
        np.testing.assert_allclose(got[1], want[1])
    ember.use_deterministic_algorithms(False)
    check(lambda L, x, s: fn(L, x, s), np.arange(12.0).reshape(4, 3),
          np.linspace(-1, 1, 12).reshape(4, 3), grad=False)


def test_tagged_op_dispatches_the_checked_path():
    """Only tagged ops take the checked execute path; every other op's is untouched."""
    for name, op in REGISTRY.items():
        want = "_execute_checked" if "nondeterministic" in op.tags else "_execute"
        assert op.execute.__func__.__name__ == want, name


# ---------------------------------- a backend whose kernels may run in parallel

@pytest.fixture
def parallel_backend(monkeypatch):
    """Tensors on 'privateuse1', a backend running the cpu kernels (a stand-in for a
    multi-threaded one: not in DETERMINISTIC_BACKENDS)."""
    from ember._tensor import Tensor, wrap

    def runner(op, args):
        raw = [a._data if isinstance(a, Tensor) else a for a in args]
        out = wrap(op.kernels["cpu"](*raw))
        out._backend = "privateuse1"
        return out

    monkeypatch.setitem(BACKENDS, "privateuse1", runner)

    def make(arr):
        t = ember.from_numpy(np.asarray(arr, dtype=np.float64))
        t._backend = "privateuse1"
        return t
    return make


TORCH_TEXT = ("{} does not have a deterministic implementation, but you set "
              "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just "
              "for this operation, or you can use the 'warn_only=True' option, if that's "
              "acceptable for your application. You can also file an issue at "
              "https://github.com/pytorch/pytorch/issues to help us prioritize adding "
              "deterministic support for this operation.")


def test_error_text_is_pytorchs():
    """Same text as PyTorch's alert for its one CPU case (put_ without accumulate)."""
    torch.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError) as t:
        torch.zeros(3).put_(torch.tensor([0, 0]), torch.ones(2))
    assert str(t.value) == TORCH_TEXT.format("put_")
    ember.use_deterministic_algorithms(True)
    from ember._determinism import alert_not_deterministic
    with pytest.raises(RuntimeError) as e:
        alert_not_deterministic("put_")
    assert str(e.value) == str(t.value)
    torch.use_deterministic_algorithms(True, warn_only=True)
    ember.use_deterministic_algorithms(True, warn_only=True)
    with pytest.warns(UserWarning) as tw:
        torch.zeros(3).put_(torch.tensor([0, 0]), torch.ones(2))
    with pytest.warns(UserWarning) as ew:
        alert_not_deterministic("put_")
    assert str(tw[0].message).startswith(str(ew[0].message))


def test_tagged_op_raises_on_a_parallel_backend(parallel_backend):
    x, s = parallel_backend(np.zeros((4, 3))), parallel_backend(np.ones((4, 3)))
    i = ember.tensor([0, 2, 2, 1])
    out = x.index_add(0, i, s)                       # mode off: runs
    np.testing.assert_allclose(out._data[2], 2.0)
    ember.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError) as e:
        x.index_add(0, i, s)
    assert str(e.value) == TORCH_TEXT.format("index_add_privateuse1")
    ember.use_deterministic_algorithms(True, warn_only=True)
    with pytest.warns(UserWarning, match="index_add_privateuse1 does not have a "
                                         "deterministic implementation"):
        out = x.index_add(0, i, s)
    np.testing.assert_allclose(out._data[2], 2.0)
    ember.set_deterministic_debug_mode("default")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.index_add(0, i, s)


def test_untagged_op_on_a_parallel_backend_never_alerts(parallel_backend):
    ember.use_deterministic_algorithms(True)
    x = parallel_backend(np.ones(3))
    assert (x * 2)._data.tolist() == [2.0, 2.0, 2.0]
