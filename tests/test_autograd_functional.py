"""autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) against torch."""
import numpy as np
import pytest

from oracle import torch
import ember


def _conv(x, L):
    if isinstance(x, (tuple, list)):
        return type(x)(_conv(v, L) for v in x)
    if isinstance(x, np.ndarray):
        return (ember.from_numpy if L is ember else torch.from_numpy)(x.copy())
    return x


def _np(x):
    if isinstance(x, (tuple, list)):
        return type(x)(_np(v) for v in x)
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return (x.detach().numpy().copy(), x.requires_grad)
    return x


def _close(a, b):
    if isinstance(b, tuple) and len(b) == 2 and isinstance(b[0], np.ndarray):
        assert isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], np.ndarray), (a, b)
        assert a[0].shape == b[0].shape and a[0].dtype == b[0].dtype
        np.testing.assert_allclose(a[0], b[0], rtol=1e-6, atol=1e-8)
        assert a[1] == b[1], "requires_grad differs"
        return
    assert type(a) is type(b) and len(a) == len(b), (a, b)
    for x, y in zip(a, b):
        _close(x, y)


def same(fn, *arrays, **kw):
    """fn(L, *inputs) in ember and torch give equal structures, values and requires_grad."""
    e = fn(ember, *_conv(arrays, ember), **kw)
    t = fn(torch, *_conv(arrays, torch), **kw)
    _close(_np(e), _np(t))


rng = np.random.default_rng(0)
A = rng.standard_normal((2, 3))
B = rng.standard_normal(3)
S = rng.standard_normal(())


def f1(x):
    return (x.exp() * x).sum(1)


def f2(x, y):
    return x * y + x.sin(), (y * y).sum()


def scal(x, y):
    return (x.exp() * y).sum() + (y ** 3).sum()


@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_single_and_tuple(create_graph):
    same(lambda L, x: L.autograd.functional.jacobian(f1, x, create_graph=create_graph), A)
    same(lambda L, x, y: L.autograd.functional.jacobian(f2, (x, y), create_graph=create_graph),
         A, B)
    same(lambda L, x: L.autograd.functional.jacobian(lambda t: t * 2, x), S)


def test_jacobian_vectorize_and_unused():
    same(lambda L, x, y: L.autograd.functional.jacobian(lambda a, b: a * 2, (x, y),
                                                        vectorize=True), A, B)
    same(lambda L, x, y: L.autograd.functional.jacobian(lambda a, b: a * 2, (x, y)), A, B)


@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian(create_graph):
    same(lambda L, x: L.autograd.functional.hessian(lambda t: (t ** 3).sum(), x,
                                                    create_graph=create_graph), B)
    same(lambda L, x, y: L.autograd.functional.hessian(scal, (x, y)), A, B)


@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_jvp(create_graph):
    v_out = rng.standard_normal(2)
    same(lambda L, x, v: L.autograd.functional.vjp(f1, x, v, create_graph=create_graph), A, v_out)
    same(lambda L, x, v: L.autograd.functional.jvp(f1, x, v, create_graph=create_graph), A, A)
    same(lambda L, x, y, v1, v2: L.autograd.functional.vjp(f2, (x, y), (v1, v2)),
         A, B, A, S)
    same(lambda L, x, y, v1, v2: L.autograd.functional.jvp(f2, (x, y), (v1, v2)), A, B, A, B)
    same(lambda L, x: L.autograd.functional.vjp(lambda t: (t * t).sum(), x), A)


@pytest.mark.parametrize("create_graph", [False, True])
def test_hvp_vhp(create_graph):
    for name in ("hvp", "vhp"):
        same(lambda L, x, y, v1, v2: getattr(L.autograd.functional, name)(
            scal, (x, y), (v1, v2), create_graph=create_graph), A, B, A, B)
        same(lambda L, x, v: getattr(L.autograd.functional, name)(
            lambda t: (t.sin() * t).sum(), x, v), B, B)


@pytest.mark.parametrize("fn", [
    lambda L, x: L.autograd.functional.vjp(f1, x),                             # v needed
    lambda L, x: L.autograd.functional.vjp(f1, x, L.ones(5)),                  # bad size
    lambda L, x: L.autograd.functional.jvp(f1, (x, x), (x,)),                  # bad length
    lambda L, x: L.autograd.functional.jacobian(f1, [x]),                      # list input
    lambda L, x: L.autograd.functional.jacobian(lambda t: t.detach(), x, strict=True),
    lambda L, x: L.autograd.functional.jacobian(lambda t, u: t * 2, (x, x), strict=True),
    lambda L, x: L.autograd.functional.hessian(lambda t: t * 2, x),            # not scalar
    lambda L, x: L.autograd.functional.hessian(lambda t: t.sum() * 2, x, strict=True),
    lambda L, x: L.autograd.functional.hvp(lambda t: t, x, x),
    lambda L, x: L.autograd.functional.jacobian(f1, x, strategy="sideways"),
    lambda L, x: L.autograd.functional.jacobian(f1, x, vectorize=True, strict=True),
])
def test_errors(fn):
    errs = []
    for L in (torch, ember):
        with pytest.raises(Exception) as e:
            fn(L, _conv(A, L))
        errs.append(e.value)
    assert type(errs[0]) is type(errs[1]) and str(errs[0]) == str(errs[1]), errs
