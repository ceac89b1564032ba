"""ember.masked against torch.masked: values (incl. fully-masked slices) and gradients."""
import numpy as np
import pytest

import ember
import ember.masked as EM

torch = pytest.importorskip("torch")
TM = torch.masked

X = np.array([[1.0, -2.0, 3.0, 0.5], [4.0, 5.0, 6.0, -1.0], [0.3, 0.2, -0.7, 2.0]])
MASK = np.array([[True, False, True, True], [False, False, False, False],
                 [True, True, False, True]])


def both(fn, *args, mask=MASK, grad=False, **kw):
    xe = ember.tensor(X, requires_grad=grad)
    xt = torch.tensor(X, requires_grad=grad)
    me = None if mask is None else ember.tensor(mask)
    mt = None if mask is None else torch.tensor(mask)
    re = getattr(EM, fn)(xe, *args, mask=me, **kw)
    rt = getattr(TM, fn)(xt, *args, mask=mt, **kw)
    return xe, xt, re, rt


def check(re, rt):
    assert tuple(re.shape) == tuple(rt.shape)
    assert str(re.dtype) == str(rt.dtype)
    np.testing.assert_allclose(re.detach().numpy(), rt.detach().numpy(), rtol=1e-6,
                               atol=1e-9, equal_nan=True)


RED = ["sum", "prod", "amax", "amin", "mean", "logsumexp", "norm", "var", "std"]


@pytest.mark.parametrize("fn", RED)
@pytest.mark.parametrize("dim", [1, 0, (0, 1), None])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(fn, dim, keepdim):
    if fn in ("logsumexp",) and dim is None:
        dim = (0, 1)
    args = (2.0, dim) if fn == "norm" else (dim,)
    _, _, re, rt = both(fn, *args, keepdim=keepdim)
    check(re, rt)


@pytest.mark.parametrize("fn", ["argmax", "argmin", "median"])
def test_index_reductions(fn):
    _, _, re, rt = both(fn, 1)
    check(re, rt)
    _, _, re, rt = both(fn, 1, mask=None)
    check(re, rt)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "softmin", "cumsum", "cumprod"])
@pytest.mark.parametrize("dim", [0, 1])
def test_normalizations(fn, dim):
    _, _, re, rt = both(fn, dim)
    check(re, rt)


def test_normalize_var_correction_and_grads():
    _, _, re, rt = both("normalize", 2.0, 1)
    check(re, rt)
    _, _, re, rt = both("var", 1, correction=0)
    check(re, rt)
    m2 = MASK.copy()
    m2[1, 0] = True
    xe, xt, re, rt = both("softmax", 1, mask=m2, grad=True)
    w = np.arange(12.0).reshape(3, 4)
    (re * ember.tensor(w)).sum().backward()
    (rt * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-12)
    xe, xt, re, rt = both("mean", 1, mask=m2, grad=True)
    re.sum().backward()
    rt.sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


def test_logaddexp_broadcast_mask_and_maskedtensor_missing():
    a, b = X, X[::-1].copy()
    me = ember.tensor(MASK)
    mt = torch.tensor(MASK)
    check(EM.logaddexp(ember.tensor(a), ember.tensor(b), input_mask=me, other_mask=me),
          TM.logaddexp(torch.tensor(a), torch.tensor(b), input_mask=mt, other_mask=mt))
    row = np.array([True, False, True, True])
    check(EM.sum(ember.tensor(X), 1, mask=ember.tensor(row)),
          TM.sum(torch.tensor(X), 1, mask=torch.tensor(row)))
    with pytest.raises(NotImplementedError, match="MaskedTensor"):
        EM.masked_tensor(ember.tensor(X), ember.tensor(MASK))
    assert not EM.is_masked_tensor(ember.tensor(X))
