"""ember.nested (strided layout) against torch.nested."""
import warnings

import numpy as np
import pytest

import ember
import ember.nested as EN

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")

A = np.arange(6.0).reshape(2, 3)
B = np.arange(3.0).reshape(1, 3) + 10


def pair():
    ne = EN.nested_tensor([ember.tensor(A), ember.tensor(B)])
    nt = torch.nested.nested_tensor([torch.tensor(A), torch.tensor(B)])
    return ne, nt


def test_structure_matches_torch():
    ne, nt = pair()
    assert ne.is_nested and ne.dim() == nt.dim() == 3
    assert ne.size(0) == nt.size(0) and ne.size(2) == nt.size(2) and ne.size(-1) == 3
    assert ne.numel() == nt.numel()
    for fn in (lambda n: n.size(), lambda n: n.size(1)):
        with pytest.raises(RuntimeError) as te:
            fn(nt)
        with pytest.raises(RuntimeError) as ee:
            fn(ne)
        assert str(ee.value) == str(te.value)
    assert [tuple(t.shape) for t in ne] == [tuple(t.shape) for t in nt]
    for a, b in zip(ne.unbind(), nt.unbind()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert repr(ne) == repr(nt)


def test_to_padded_tensor_matches_torch():
    ne, nt = pair()
    np.testing.assert_array_equal(EN.to_padded_tensor(ne, 0.0).numpy(),
                                  torch.nested.to_padded_tensor(nt, 0.0).numpy())
    np.testing.assert_array_equal(ne.to_padded_tensor(-1.0, (3, 3, 4)).numpy(),
                                  nt.to_padded_tensor(-1.0, (3, 3, 4)).numpy())
    with pytest.raises(RuntimeError, match="Truncation is not supported"):
        EN.to_padded_tensor(ne, 0.0, (1, 3, 3))


def test_arithmetic_and_pointwise():
    ne, nt = pair()
    for fe, ft in [(ne + ne, nt + nt), (ne * 2, nt * 2), (ne - 1.0, nt - 1.0),
                   (ne.sin(), nt.sin()), (ne.relu(), nt.relu())]:
        for a, b in zip(fe.unbind(), ft.unbind()):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="NestedTensor.sum is not implemented"):
        ne.sum()


def test_as_nested_tensor_keeps_autograd_and_errors():
    c = ember.ones(2, requires_grad=True)
    ne = EN.as_nested_tensor([c, c * 2])
    assert ne.requires_grad and not ne.is_leaf
    EN.to_padded_tensor(ne, 0.0).sum().backward()
    np.testing.assert_array_equal(c.grad.numpy(), [3.0, 3.0])
    leaf = EN.nested_tensor([ember.ones(2), ember.ones(3)], requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf
    with pytest.raises(RuntimeError, match="must have the same dimension"):
        EN.nested_tensor([ember.ones(2, 3), ember.ones(2)])
    with pytest.raises(NotImplementedError, match="jagged"):
        EN.nested_tensor([ember.ones(2)], layout="torch.jagged")
    lists = EN.nested_tensor([[1.0, 2.0], [3.0]])
    assert [tuple(t.shape) for t in lists] == [(2,), (1,)]
