"""Dispatch modes run in one fixed order (DESIGN §6), whatever order they were entered in.

autocast -> user / fake / recording modes -> profiler -> determinism -> autograd -> kernel;
user modes keep PyTorch's order among themselves. Anomaly detection and the profiler's
backward events are engine node wrappers, registered only while they are on.
"""
import warnings

import numpy as np
import pytest

from oracle import torch
import ember
from ember import _dispatch
from ember.autograd import engine
from ember.utils._python_dispatch import (TorchDispatchMode, _get_current_dispatch_mode,
                                          _get_current_dispatch_mode_stack,
                                          _len_torch_dispatch_stack, _pop_mode_temporarily)


class Log(TorchDispatchMode):
    def __init__(self, tag, log):
        super().__init__()
        self.tag, self.log = tag, log

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.log.append((self.tag, func.name, [getattr(a, "dtype", None) for a in args]))
        return func(*args, **(kwargs or {}))


def _step(L):
    a = L.ones(4, 4)
    b = L.ones(4, 4)
    return (a @ b).sum()


def _names(prof):
    return [e.name for e in prof.events()]


def _profile_autocast(L, profiler_inside):
    if profiler_inside:
        with L.autocast("cpu"):
            with L.profiler.profile() as p:
                _step(L)
    else:
        with L.profiler.profile() as p:
            with L.autocast("cpu"):
                _step(L)
    return _names(p)


def test_profiler_inside_or_outside_autocast_records_the_same_ops():
    outside = _profile_autocast(ember, False)
    inside = _profile_autocast(ember, True)
    assert inside == outside
    assert outside.count("aten::_to_copy") == 2          # autocast's casts of a and b
    # PyTorch's profiler also sees both casts, in either order of entry
    for order in (False, True):
        assert _names_torch(order).count("aten::_to_copy") == 2


def _names_torch(inside):
    warnings.filterwarnings("ignore")
    return _profile_autocast(torch, inside)


def test_user_mode_sees_autocast_casts_in_either_entry_order():
    for inside in (False, True):
        log = []
        if inside:
            with ember.autocast("cpu"), Log("u", log):
                ember.ones(2, 2) @ ember.ones(2, 2)
        else:
            with Log("u", log), ember.autocast("cpu"):
                ember.ones(2, 2) @ ember.ones(2, 2)
        mm = [e for e in log if e[1] == "matmul"]
        assert mm and mm[0][2] == [ember.bfloat16, ember.bfloat16], inside
        assert sum(e[1] == "_to_copy" for e in log) == 2


def test_profiler_sees_what_user_modes_run():
    class Double(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func.name == "exp":
                out = out * 2          # an op the profiler (after user modes) records
            return out
    x = ember.ones(3)
    with ember.profiler.profile() as p:           # profiler entered first (outside)
        with Double():
            r = x.exp()
    np.testing.assert_allclose(r.numpy(), 2 * np.e * np.ones(3), rtol=1e-6)
    assert _names(p) == ["aten::exp", "aten::mul"]


def test_user_modes_keep_pytorch_order_among_themselves():
    log = []
    with Log("outer", log):
        with Log("inner", log):
            ember.ones(1) + 1
    tags = [t for t, name, _ in log if name == "add"]
    assert tags == ["inner", "outer"]              # innermost entered runs first


def test_stack_api_sees_user_modes_only_and_exit_order_across_ranks():
    a = Log("a", [])
    with ember.profiler.profile():
        with ember.autocast("cpu"):
            with a:
                assert _get_current_dispatch_mode() is a
                assert _get_current_dispatch_mode_stack() == [a]
                assert _len_torch_dispatch_stack() == 1
                with _pop_mode_temporarily() as m:
                    assert m is a and _get_current_dispatch_mode() is None
                assert _get_current_dispatch_mode() is a
    # modes of different ranks may exit in any order; one rank is still LIFO
    prof = ember.profiler.profile()
    ac = ember.autocast("cpu")
    prof.__enter__()
    ac.__enter__()
    prof.__exit__(None, None, None)
    ac.__exit__(None, None, None)
    assert _dispatch.STATE.modes == []
    b, c = Log("b", []), Log("c", [])
    b.__enter__()
    c.__enter__()
    with pytest.raises(RuntimeError, match="reverse order"):
        b.__exit__(None, None, None)
    c.__exit__(None, None, None)
    b.__exit__(None, None, None)
    assert _dispatch.STATE.modes == []


def test_fake_mode_under_autocast_sees_casts():
    from ember._subclasses.fake_tensor import FakeTensorMode
    for inside in (False, True):
        fm = FakeTensorMode()
        x = fm.from_tensor(ember.ones(2, 2))
        if inside:
            with ember.autocast("cpu"), fm:
                r = x @ x
        else:
            with fm, ember.autocast("cpu"):
                r = x @ x
        assert r._fake and r.dtype == ember.bfloat16


def test_backward_wrappers_only_while_on():
    assert engine._WRAPPED[0] is None
    x = ember.ones(3, requires_grad=True)
    with ember.profiler.profile() as p:
        (x * 2).sum().backward()
        assert engine._WRAPPED[0] is not None
    assert engine._WRAPPED[0] is None
    names = _names(p)
    assert "autograd::engine::evaluate_function: MulBackward0" in names
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly():
            assert engine._WRAPPED[0] is not None
            with ember.profiler.profile() as p2:       # both wrappers, ranked
                (x * 2).sum().backward()
    assert engine._WRAPPED[0] is None
    assert "autograd::engine::evaluate_function: MulBackward0" in _names(p2)


def test_anomaly_nan_check_runs_inside_profiled_backward():
    class NanBack(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")
    x = ember.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly(), ember.profiler.profile():
            with pytest.raises(RuntimeError, match="returned nan values"):
                NanBack.apply(x).sum().backward()
    assert engine._WRAPPED[0] is None


def test_determinism_check_runs_after_user_modes_and_profiler(monkeypatch):
    """The check sits after every dispatch mode: they see the op, then it raises."""
    from ember import _determinism
    monkeypatch.setattr(_determinism, "DETERMINISTIC_BACKENDS", frozenset({"meta"}))
    x, idx, src = ember.zeros(3), ember.tensor([0, 2]), ember.ones(2)
    log = []
    ember.use_deterministic_algorithms(True)
    try:
        with ember.profiler.profile() as p, Log("u", log):
            with pytest.raises(RuntimeError, match="index_add_cpu does not have a deterministic"):
                x.index_add(0, idx, src)
    finally:
        ember.use_deterministic_algorithms(False)
    assert [name for _, name, _ in log] == ["index_add"]
    assert "aten::index_add" in _names(p)
    r = x.index_add(0, idx, src)             # mode off: runs
    np.testing.assert_array_equal(r.numpy(), [1, 0, 1])


# ------------------------------------------------------- the record fast path (point 7)

@pytest.mark.parametrize("L", [ember, torch], ids=["ember", "torch"])
def test_binary_record_fast_path_matches_torch(L):
    """`a * b` / `a + b` on tensors that require grad record through record_binary; its
    nodes (their own ctx) must behave as PyTorch's: names, double backward, release."""
    a = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = L.tensor([0.5, -1.0, 2.0])
    y = a * a + b
    assert type(y.grad_fn).__name__ == "AddBackward0"
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "MulBackward0"
    (g,) = L.autograd.grad(y.sum(), a, create_graph=True)
    (gg,) = L.autograd.grad(g.sum(), a)
    np.testing.assert_allclose(g.detach().numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_allclose(gg.numpy(), [2.0, 2.0, 2.0])
    z = a * b
    z.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.5, -1.0, 2.0])
    w = a + b                              # add saves nothing: backward runs twice
    w.sum().backward()
    w.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.5, 1.0, 4.0])
