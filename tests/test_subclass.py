"""Tensor subclasses survive operations; __torch_function__ overrides see ember calls."""
import numpy as np
import pytest

from oracle import torch, randn
import ember
from ember._dispatch import _disabled_torch_function_impl, DisableTorchFunctionSubclass


def _classes():
    class ET(ember.Tensor):
        pass

    class TT(torch.Tensor):
        pass
    return ET, TT


OPS = {
    "add_op": lambda L, x: x + 1,
    "radd_op": lambda L, x: 1 + x,
    "mul_tensor": lambda L, x: x * L.ones(3),
    "plain_first": lambda L, x: L.ones(3) * x,
    "fn": lambda L, x: L.exp(x),
    "method": lambda L, x: x.exp(),
    "sum": lambda L, x: x.sum(),
    "view": lambda L, x: x.view(3, 1),
    "transpose": lambda L, x: x.reshape(1, 3).t(),
    "clone": lambda L, x: x.clone(),
    "to": lambda L, x: x.to(L.float64),
    "detach": lambda L, x: x.detach(),
    "data": lambda L, x: x.data,
    "index": lambda L, x: x[1],
    "cmp": lambda L, x: x > 0,
    "inplace": lambda L, x: x.mul_(2),
}


@pytest.mark.parametrize("name", list(OPS))
def test_results_keep_subclass_like_torch(name):
    ET, TT = _classes()
    a = randn(3)
    re = OPS[name](ember, ember.tensor(a).as_subclass(ET))
    rt = OPS[name](torch, torch.tensor(a).as_subclass(TT))
    assert type(rt) is TT
    assert type(re) is ET
    np.testing.assert_allclose(np.asarray(re.float().as_subclass(ember.Tensor)),
                               rt.float().as_subclass(torch.Tensor).numpy(), rtol=1e-6)


def test_plain_tensors_stay_plain():
    ET, _ = _classes()
    x = ember.ones(3)
    assert type(x + x) is ember.Tensor and type(x.sum()) is ember.Tensor
    assert type(x.detach()) is ember.Tensor


def test_as_subclass_shares_memory_and_version():
    ET, _ = _classes()
    x = ember.zeros(3)
    s = x.as_subclass(ET)
    s.add_(1)
    np.testing.assert_array_equal(x.numpy(), [1, 1, 1])
    assert x._version == s._version


def test_as_subclass_rejects_non_tensor_class():
    with pytest.raises(TypeError) as te:
        torch.ones(1).as_subclass(int)
    with pytest.raises(TypeError) as ee:
        ember.ones(1).as_subclass(int)
    assert str(ee.value) == str(te.value)


def test_as_subclass_stays_on_graph():
    ET, TT = _classes()
    x = ember.tensor([1., 2.], requires_grad=True)
    xt = torch.tensor([1., 2.], requires_grad=True)
    s, st = x.as_subclass(ET), xt.as_subclass(TT)
    assert s.grad_fn.name() == type(st.grad_fn).__name__ == "AliasBackward0"
    assert not s.is_leaf
    (s * s).sum().backward()
    (st * st).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())
    assert repr((s * 2)).replace("ET", "TT") == repr(st * 2)


def test_subclass_leaf_grad_is_plain_tensor():
    ET, TT = _classes()
    a = randn(3)
    le = ember.tensor(a).as_subclass(ET).requires_grad_()
    lt = torch.tensor(a).as_subclass(TT).requires_grad_()
    (le * le.exp()).sum().backward()
    (lt * lt.exp()).sum().backward()
    assert type(lt.grad) is torch.Tensor
    assert type(le.grad) is ember.Tensor
    np.testing.assert_allclose(le.grad.numpy(), lt.grad.numpy(), rtol=1e-6)


def test_constructor_call_makes_subclass():
    ET, _ = _classes()
    s = ET(ember.ones(2))
    assert type(s) is ET and type(s + 1) is ET


def test_torch_function_override_sees_calls():
    calls = []

    class Tracked(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append((func.__name__, types))
            return super().__torch_function__(func, types, args, kwargs)
    t = ember.ones(3).as_subclass(Tracked)
    r = ember.add(t.exp(), 1)
    assert type(r) is Tracked
    assert [c[0] for c in calls] == ["exp", "add"]
    assert all(c[1] == (Tracked,) for c in calls)


def test_torch_function_can_replace_result():
    class Const(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func.__name__ == "mul":
                return "intercepted"
            return super().__torch_function__(func, types, args, kwargs)
    c = ember.ones(2).as_subclass(Const)
    assert c * 3 == "intercepted"
    assert type(c + 3) is Const


def test_more_derived_subclass_goes_first():
    order = []

    class A(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            order.append("A")
            return super().__torch_function__(func, types, args, kwargs)

    class B(A):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            order.append("B")
            return super().__torch_function__(func, types, args, kwargs)
    a, b = ember.ones(2).as_subclass(A), ember.ones(2).as_subclass(B)
    r = a + b
    assert order[0] == "B" and type(r) is B


def test_unrelated_subclasses_give_type_error():
    class A(ember.Tensor):
        pass

    class B(ember.Tensor):
        pass
    with pytest.raises(TypeError, match="no implementation found"):
        ember.ones(1).as_subclass(A) + ember.ones(1).as_subclass(B)


def test_disabled_torch_function_opt_out():
    class P(ember.Tensor):
        __torch_function__ = _disabled_torch_function_impl
    p = ember.ones(2).as_subclass(P)
    assert type(p * 2) is ember.Tensor
    q = ember.Tensor._make_subclass(P, ember.ones(2), True)
    assert type(q) is P and q.requires_grad and q.is_leaf


def test_disable_torch_function_subclass():
    ET, _ = _classes()
    s = ember.ones(2).as_subclass(ET)
    with DisableTorchFunctionSubclass():
        assert type(s + 1) is ember.Tensor
    assert type(s + 1) is ET


def test_subclass_with_attributes_and_methods():
    class Tagged(ember.Tensor):
        def double(self):
            return self * 2
    t = ember.ones(2).as_subclass(Tagged)
    r = t.double().double()
    assert type(r) is Tagged
    np.testing.assert_array_equal(r.as_subclass(ember.Tensor).numpy(), [4, 4])


def test_tuple_results_converted():
    ET, TT = _classes()
    a = randn(4)
    if not hasattr(ember, "split"):
        pytest.skip("ember.split not written yet")
    re = ember.tensor(a).as_subclass(ET).split(2)
    rt = torch.tensor(a).as_subclass(TT).split(2)
    assert [type(x) for x in rt] == [TT, TT]
    assert [type(x) for x in re] == [ET, ET]
