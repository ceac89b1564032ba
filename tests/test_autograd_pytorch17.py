"""DESIGN §5: the PyTorch 1.7 behaviours that involve autograd, each checked against torch."""
import numpy as np
import pytest

from oracle import torch, check
import ember


def both(fn):
    res = []
    for L in (ember, torch):
        try:
            res.append(fn(L))
        except Exception as e:            # the exception is the behaviour compared
            res.append((type(e).__name__, str(e)))
    return res


def vals(*ts):
    return [None if t is None else np.round(t.detach().numpy().astype(float), 6).tolist()
            for t in ts]


def test_split_chunk_outputs_are_tracked_views():
    def fn(L):
        x = L.tensor([1., 2., 3., 4.], requires_grad=True)
        a, b = (x * 1).split(2)
        c, d = (x * 2).chunk(2)
        (a * b * c * d).sum().backward()
        return a._base is not None, c._base is not None, vals(x.grad)
    e, t = both(fn)
    assert e == t


@pytest.mark.parametrize("how", ["split", "chunk", "unbind"])
def test_inplace_on_multi_output_view_raises(how):
    def fn(L):
        y = L.tensor([1., 2.], requires_grad=True) * 1
        part = {"split": lambda: y.split(1), "chunk": lambda: y.chunk(2),
                "unbind": lambda: y.unbind(0)}[how]()
        part[1].mul_(2)
    e, t = both(fn)
    assert e[0] == t[0] == "RuntimeError"
    assert "returns multiple views" in e[1] and e[1].startswith("Output 1 of ")


def test_inplace_on_multi_output_view_ok_without_grad():
    def fn(L):
        y = L.tensor([1., 2., 3., 4.])
        y.split(2)[1].mul_(2)
        return vals(y)
    e, t = both(fn)
    assert e == t


def test_custom_function_none_grad_is_none():
    def fn(L):
        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y

            @staticmethod
            def backward(ctx, g):
                return g, None
        x = L.ones(2, requires_grad=True)
        y = L.ones(2, requires_grad=True)
        F.apply(x, y).sum().backward()
        return vals(x.grad, y.grad)
    e, t = both(fn)
    assert e == t == [[1.0, 1.0], None]


def test_inplace_detection_covers_nondifferentiable_outputs():
    """An index tensor saved for backward and then overwritten through out= is detected."""
    def fn(L):
        x = L.tensor([[1., 5., 2.], [4., 0., 3.]], requires_grad=True)
        v, i = L.max(x, 1)
        y = L.index_select(x, 1, i)
        L.max(x.detach() * -1, 1, out=(v.detach().clone(), i))
        y.sum().backward()
    e, t = both(fn)
    assert e[0] == t[0] == "RuntimeError"
    assert "modified by an inplace operation" in e[1]


def test_inplace_detection_index_tensor_add_():
    def fn(L):
        x = L.tensor([1., 5., 2.], requires_grad=True)
        i = L.tensor([2, 0])
        y = L.index_select(x, 0, i)
        i.add_(0)
        y.sum().backward()
    e, t = both(fn)
    assert e[0] == t[0] == "RuntimeError" and e[1][:60] == t[1][:60]


def test_max_min_full_reduction_spreads_grad_over_ties():
    a = np.array([[1., 3., 3.], [3., 0., -2.]], np.float32)
    check(lambda L, x: L.max(x), a)
    check(lambda L, x: x.min(), -a)


def test_max_with_dim_gives_grad_to_returned_index_only():
    a = np.array([[1., 3., 3.], [3., 0., 3.]], np.float32)
    check(lambda L, x: L.max(x, 1)[0], a)
    check(lambda L, x: L.min(x, dim=0).values, -a)
