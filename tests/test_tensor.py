"""The Tensor object's own API against PyTorch: metadata, conversion, copies, casts."""
import copy

import numpy as np
import pytest

from oracle import check, check_error, torch, randn
import ember


def both(data, **kw):
    return ember.tensor(data, **kw), torch.tensor(data, **{k: getattr(torch, v.name) if
                                                            isinstance(v, ember.dtype) else v
                                                            for k, v in kw.items()})


def test_metadata_matches_torch():
    for data in ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], 3.5, [], [[True]], [[[1, 2]], [[3, 4]]]):
        e, t = both(data)
        assert tuple(e.shape) == tuple(t.shape) and e.size() == t.size()
        assert e.dim() == t.dim() and e.ndim == t.ndim and e.numel() == t.numel()
        assert e.stride() == t.stride() and str(e.dtype) == str(t.dtype)
        assert e.element_size() == t.element_size() and e.nbytes == t.nbytes
        assert e.is_contiguous() == t.is_contiguous()
        assert e.storage_offset() == t.storage_offset()
        assert e.is_floating_point() == t.is_floating_point()
        assert repr(e.size()) == repr(t.size())


def test_size_dim_errors():
    check_error(lambda L, a: a.size(3), randn(2, 3))
    check_error(lambda L, a: a.stride(-3), randn(2, 3))


def test_views_strides_offsets():
    e = ember.arange(24).view(2, 3, 4)
    t = torch.arange(24).view(2, 3, 4)
    for f in (lambda x: x.transpose(0, 2), lambda x: x.permute(1, 2, 0),
              lambda x: x.expand(5, 2, 3, 4) if False else x.unsqueeze(0).expand(5, 2, 3, 4),
              lambda x: x.t() if x.dim() == 2 else x.flatten(1)):
        ve, vt = f(e), f(t)
        assert ve.stride() == vt.stride() and ve.is_contiguous() == vt.is_contiguous()
        assert ve.storage_offset() == vt.storage_offset()
        assert ve.data_ptr() == e.data_ptr() or ve._base is e


def test_item_tolist_numpy():
    e, t = both([[1.5, 2.0]])
    assert e.tolist() == t.tolist()
    assert ember.tensor(3).item() == 3 and isinstance(ember.tensor(3).item(), int)
    assert isinstance(ember.tensor(2.5).item(), float)
    assert ember.tensor(True).item() is True
    with pytest.raises(RuntimeError):
        ember.ones(2).item()
    a = ember.ones(3)
    n = a.numpy()
    n[0] = 7
    assert a[0].item() == 7 if hasattr(ember.Tensor, "__getitem__") else a.tolist()[0] == 7
    with pytest.raises(RuntimeError):
        ember.ones(2, requires_grad=True).numpy()
    assert ember.tensor([1.5], dtype=ember.bfloat16).tolist() == [1.5]


def test_scalar_conversions():
    assert float(ember.tensor([2.5])) == 2.5 and int(ember.tensor(3.7)) == 3
    assert bool(ember.tensor([1])) and not bool(ember.tensor(0.0))
    with pytest.raises(RuntimeError):
        bool(ember.ones(2))
    assert [1, 2, 3][ember.tensor(1)] == 2
    with pytest.raises(TypeError):
        [1, 2][ember.tensor(1.0)]
    assert len(ember.ones(4, 2)) == 4
    with pytest.raises(TypeError):
        len(ember.tensor(1.0))


@pytest.mark.parametrize("meth,dt", [("float", "float32"), ("double", "float64"),
                                     ("half", "float16"), ("bfloat16", "bfloat16"),
                                     ("long", "int64"), ("int", "int32"), ("short", "int16"),
                                     ("char", "int8"), ("byte", "uint8"), ("bool", "bool")])
def test_cast_methods(meth, dt):
    check(lambda L, a: getattr(a, meth)(), randn(3, 4) * 3, grad=meth in ("float", "double"),
          atol=1e-2)


def test_to_and_type():
    e, t = both([1.7, -2.2])
    assert str(e.to(ember.int32).dtype) == "torch.int32"
    assert e.to(ember.float32) is e and e.to("cpu") is e
    assert e.to(ember.float32, copy=True) is not e
    assert e.to(ember.ones(1, dtype=ember.float64)).dtype is ember.float64
    assert e.type() == t.type() == "torch.FloatTensor"
    assert e.type(ember.int64).tolist() == t.type(torch.int64).tolist()
    assert e.type("torch.DoubleTensor").dtype is ember.float64
    assert ember.ones(2).to(device="cpu", dtype=ember.float16).dtype is ember.float16
    with pytest.raises(RuntimeError):
        e.to("cuda")


def test_clone_copy_contiguous():
    check(lambda L, a: a.clone() * 2, randn(3, 4))
    check(lambda L, a: a.t().contiguous(), randn(3, 4))

    def f(L, a, b):
        c = a * 1
        c.copy_(b)
        return c
    check(f, randn(3, 4), randn(4))
    check(f, randn(3, 4), randn(3, 4).astype(np.float64))
    a = ember.ones(3)
    assert a.contiguous() is a
    c = a.clone()
    assert c.data_ptr() != a.data_ptr()
    check_error(lambda L, a, b: a.copy_(b), randn(3), randn(4))


def test_new_methods():
    e, t = both([1, 2], dtype=ember.int32)
    for f in (lambda x: x.new_zeros(2, 3), lambda x: x.new_ones((2,)),
              lambda x: x.new_full((2,), 7), lambda x: x.new_tensor([1.5]),
              lambda x: x.new_empty(3).fill_(0) if hasattr(x, "fill_") else x.new_zeros(3)):
        a, b = f(e), f(t)
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
        assert a.tolist() == b.tolist()


def test_leaf_detach_data_requires_grad():
    a = ember.ones(3, requires_grad=True)
    assert a.is_leaf and a.requires_grad and a.grad_fn is None
    b = a * 2
    assert not b.is_leaf and b.grad_fn is not None
    d = b.detach()
    assert d.is_leaf and not d.requires_grad and d.data_ptr() == b.data_ptr()
    assert d._version == b._version
    b.add_(1) if False else None
    assert a.data.requires_grad is False and a.data.data_ptr() == a.data_ptr()
    with pytest.raises(RuntimeError):
        ember.ones(2, dtype=ember.int64).requires_grad_()
    with pytest.raises(RuntimeError):
        b.requires_grad_(False)
    c = b.detach_()
    assert c is b and b.is_leaf and not b.requires_grad


def test_retain_grad():
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = a * a
    b.retain_grad()
    b.sum().backward()
    assert b.grad.tolist() == [1.0, 1.0] and a.grad.tolist() == [2.0, 4.0]


def test_deepcopy():
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = copy.deepcopy(a)
    assert b.requires_grad and b.tolist() == a.tolist() and b.data_ptr() != a.data_ptr()
    with pytest.raises(RuntimeError):
        copy.deepcopy(a * 2)


def test_tensor_constructor_keeps_device_and_conj_identity():
    a = ember.ones(2)
    assert ember.tensor(a).device == a.device
    assert a.conj() is a                      # PyTorch 1.7: conj of real is self
    z = ember.tensor([1 + 2j])
    assert z.conj().tolist() == [1 - 2j]


def test_inplace_on_leaf_raises_and_no_grad_allows():
    check_error(lambda L, a: a.requires_grad_().add_(1), randn(3))
    a = ember.ones(3, requires_grad=True)
    with ember.no_grad():
        a.mul_(2)
    assert a.tolist() == [2.0, 2.0, 2.0] and a._version == 1


def test_version_counter_shared_with_views():
    a = ember.zeros(4)
    v = a.view(2, 2)
    v.add_(1)
    assert a._version == v._version == 1
    assert a.tolist() == [1.0] * 4
