"""ember.futures.Future and ember.jit.fork/wait, against torch.futures / torch.jit."""
import gc
import threading
import time

import numpy as np
import pytest

from oracle import torch
import ember


@pytest.mark.parametrize("L", [ember, torch], ids=["ember", "torch"])
def test_future_api(L):
    f = L.futures.Future()
    assert not f.done()
    seen = []
    f.add_done_callback(lambda fut: seen.append(fut.value()))
    chained = f.then(lambda fut: fut.wait() * 2)
    f.set_result(21)
    assert f.done() and f.wait() == 21 and f.value() == 21 and seen == [21]
    assert chained.wait() == 42
    late = []
    f.add_done_callback(lambda fut: late.append(1))     # added after completion: runs now
    assert late == [1]
    with pytest.raises(RuntimeError):
        f.set_result(1)


@pytest.mark.parametrize("L", [ember, torch], ids=["ember", "torch"])
def test_future_exceptions(L):
    f = L.futures.Future()
    g = f.then(lambda fut: fut.wait() + 1)
    f.set_exception(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        f.wait()
    with pytest.raises(RuntimeError, match="ValueError: boom"):
        g.wait()


@pytest.mark.parametrize("L", [ember, torch], ids=["ember", "torch"])
def test_collect_all_and_wait_all(L):
    fs = [L.futures.Future() for _ in range(3)]
    allf = L.futures.collect_all(fs)
    for i, f in enumerate(fs):
        assert not allf.done()
        f.set_result(i)
    assert [x.wait() for x in allf.wait()] == [0, 1, 2]
    assert L.futures.wait_all(fs) == [0, 1, 2]


def test_fork_wait_values_and_errors():
    fut = ember.jit.fork(lambda a, b=1: a + b, 2, b=3)
    assert ember.jit.wait(fut) == 5

    def bad():
        raise KeyError("inside fork")
    f = ember.jit.fork(bad)
    with pytest.raises(KeyError, match="inside fork"):
        ember.jit.wait(f)


def test_fork_runs_on_another_thread():
    main = threading.get_ident()
    fut = ember.jit.fork(threading.get_ident)
    deadline = time.monotonic() + 30      # let a worker pick it up (no inline run)
    while not fut.done() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ember.jit.wait(fut) != main


def test_nested_forks_do_not_deadlock():
    def fib(n):
        if n < 2:
            return n
        a = ember.jit.fork(fib, n - 1)
        b = ember.jit.fork(fib, n - 2)
        return ember.jit.wait(a) + ember.jit.wait(b)
    assert fib(12) == 144


def test_autograd_through_forked_work_matches_torch():
    def run(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        fa = L.jit.fork(lambda t: (t * t).sum(), x)
        fb = L.jit.fork(lambda t: t.exp().sum(), x)
        (L.jit.wait(fa) + L.jit.wait(fb)).backward()
        return x.grad.numpy()
    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-6)


def test_fork_keeps_grad_mode():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        y = ember.jit.wait(ember.jit.fork(lambda: x * 2))
    assert not y.requires_grad
    assert ember.jit.wait(ember.jit.fork(lambda: x * 2)).requires_grad


def test_memory_counters_stay_exact_under_fork():
    gc.collect()
    base = ember.memory_allocated()

    def work():
        for _ in range(2000):
            a = ember.ones(16) * 2
            del a
    futs = [ember.jit.fork(work) for _ in range(4)]
    ember.futures.wait_all(futs)
    del futs
    gc.collect()
    assert ember.memory_allocated() == base


def test_script_and_trace():
    fn = lambda x: x + 1          # noqa: E731
    # full coverage in tests/jit/test_jit_script.py: both capture the function as a graph
    x = ember.ones(3)
    assert ember.equal(ember.jit.script(fn)(x), x + 1)
    assert ember.equal(ember.jit.trace(fn, (x,))(x), x + 1)
