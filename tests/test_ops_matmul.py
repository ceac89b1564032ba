"""matmul / mm / bmm / mv / dot and the @ operator against PyTorch."""
import numpy as np
import pytest

import ember
from oracle import check, check_error, gradcheck, randn, NC


def r(*shape, dtype=np.float32, seed=0):
    return randn(*shape, dtype=dtype, seed=seed)


def ints(*shape, dtype=np.int64):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) % 7 - 3


MATMUL = [
    ("1d-1d", r(3), r(3, seed=1)),
    ("1d-2d", r(3), r(3, 4)),
    ("2d-1d", r(2, 3), r(3)),
    ("2d-2d", r(2, 3), r(3, 4)),
    ("1d-3d", r(3), r(2, 3, 4)),
    ("3d-1d", r(2, 4, 3), r(3)),
    ("3d-2d", r(2, 4, 3), r(3, 5)),
    ("2d-3d", r(4, 3), r(2, 3, 5)),
    ("3d-3d", r(2, 4, 3), r(2, 3, 5)),
    ("batch-broadcast", r(2, 1, 4, 3), r(5, 3, 2)),
    ("batch-broadcast-1", r(1, 4, 3), r(3, 3, 2)),
    ("4d-1d", r(2, 2, 4, 3), r(3)),
    ("1d-4d", r(3), r(2, 2, 3, 4)),
    ("nc-2d", NC(r(2, 3)), NC(r(3, 4))),
    ("nc-3d", NC(r(2, 4, 3)), r(2, 3, 5)),
    ("empty-k", r(2, 0), r(0, 3)),
    ("empty-m", r(0, 3), r(3, 4)),
    ("empty-batch", r(2, 0, 3), r(3, 4)),
    ("empty-1d", r(0), r(0)),
    ("empty-mv", r(0, 3), r(3)),
    ("float64", r(2, 3, dtype=np.float64), r(3, 4, dtype=np.float64)),
    ("half", r(2, 3, dtype=np.float16), r(3, 4, dtype=np.float16)),
    ("int", ints(2, 3), ints(3, 4)),
    ("int-1d", ints(3), ints(3)),
    ("int8-wraps", np.array([[1, 2]], np.int8), np.array([[100], [100]], np.int8)),
    ("int32-batched", ints(2, 2, 3, dtype=np.int32), ints(3, 2, dtype=np.int32)),
    ("complex", (r(2, 3) + 1j * r(2, 3, seed=5)).astype(np.complex64),
     (r(3, 2) - 1j * r(3, 2, seed=6)).astype(np.complex64)),
    ("complex-1d", (r(3) + 1j * r(3, seed=5)).astype(np.complex128), r(3, 2).astype(np.complex128)),
]


@pytest.mark.parametrize("name,a,b", MATMUL, ids=[c[0] for c in MATMUL])
def test_matmul(name, a, b):
    half = getattr(a, "dtype", None) == np.float16
    tol = dict(atol=1e-2, rtol=1e-2) if half else {}
    check(lambda L, x, y: L.matmul(x, y), a, b, **tol)
    check(lambda L, x, y: x @ y, a, b, **tol)


def test_matmul_bfloat16():
    check(lambda L, x, y: x.bfloat16() @ y.bfloat16(), r(2, 3), r(3, 4), atol=5e-2, rtol=5e-2)
    check(lambda L, x, y: L.bmm(x.bfloat16(), y.bfloat16()), r(2, 2, 3), r(2, 3, 4),
          atol=5e-2, rtol=5e-2)


PRODUCTS = [
    ("mm", lambda L, a, b: L.mm(a, b), r(2, 3), r(3, 4)),
    ("mm-method-nc", lambda L, a, b: a.mm(b), NC(r(2, 3)), r(3, 4)),
    ("mm-empty", lambda L, a, b: a.mm(b), r(2, 0), r(0, 4)),
    ("mm-int", lambda L, a, b: a.mm(b), ints(2, 3), ints(3, 2)),
    ("mm-f64", lambda L, a, b: a.mm(b), r(2, 3, dtype=np.float64), r(3, 2, dtype=np.float64)),
    ("mm-half", lambda L, a, b: a.mm(b), r(2, 3, dtype=np.float16), r(3, 2, dtype=np.float16)),
    ("bmm", lambda L, a, b: L.bmm(a, b), r(2, 4, 3), r(2, 3, 5)),
    ("bmm-nc", lambda L, a, b: a.bmm(b), NC(r(2, 4, 3)), r(2, 3, 5)),
    ("bmm-empty", lambda L, a, b: a.bmm(b), r(0, 4, 3), r(0, 3, 5)),
    ("bmm-int32", lambda L, a, b: a.bmm(b), ints(2, 2, 3, dtype=np.int32),
     ints(2, 3, 2, dtype=np.int32)),
    ("mv", lambda L, a, b: L.mv(a, b), r(2, 3), r(3)),
    ("mv-nc", lambda L, a, b: a.mv(b), NC(r(2, 3)), r(3)),
    ("mv-empty", lambda L, a, b: a.mv(b), r(0, 3), r(3)),
    ("mv-int", lambda L, a, b: a.mv(b), ints(2, 3), ints(3)),
    ("dot", lambda L, a, b: L.dot(a, b), r(5), r(5, seed=1)),
    ("dot-empty", lambda L, a, b: a.dot(b), r(0), r(0)),
    ("dot-int", lambda L, a, b: a.dot(b), ints(4), ints(4)),
    ("dot-int8", lambda L, a, b: a.dot(b), np.array([1, 2], np.int8),
     np.array([100, 100], np.int8)),
    ("dot-half", lambda L, a, b: a.dot(b), r(4, dtype=np.float16), r(4, dtype=np.float16)),
    ("rmatmul", lambda L, a, b: b.__rmatmul__(a), r(2, 3), r(3, 4)),
]


@pytest.mark.parametrize("name,fn,a,b", PRODUCTS, ids=[c[0] for c in PRODUCTS])
def test_products(name, fn, a, b):
    half = getattr(a, "dtype", None) == np.float16
    check(fn, a, b, **(dict(atol=1e-2, rtol=1e-2) if half else {}))


def test_out():
    check(lambda L, a, b: L.matmul(a, b, out=L.empty(0)), r(2, 3), r(3, 4), grad=False)
    check(lambda L, a, b: L.mm(a, b, out=L.empty(2, 4)), r(2, 3), r(3, 4), grad=False)
    check(lambda L, a, b: L.bmm(a, b, out=L.empty(0)), r(2, 2, 3), r(2, 3, 1), grad=False)
    check(lambda L, a, b: L.mv(a, b, out=L.empty(0)), r(2, 3), r(3), grad=False)
    check(lambda L, a, b: L.dot(a, b, out=L.empty(0)), r(3), r(3), grad=False)


def test_imatmul_rebinds_like_torch():
    """PyTorch has no __imatmul__: `a @= b` makes a new tensor, even of a new shape."""
    def fn(L, a, b):
        c = a
        c @= b
        return c, a
    out = check(fn, r(3, 2), r(2, 3), grad=False)
    assert tuple(out[0].shape) == (3, 3) and tuple(out[1].shape) == (3, 2)


def test_matmul_gradchecks():
    for sa, sb in [((3,), (3,)), ((3,), (2, 3, 2)), ((2, 2, 3), (3,)), ((2, 1, 2, 3), (4, 3, 2)),
                   ((2, 2, 3), (3, 2)), ((2, 3), (2, 3, 2))]:
        gradcheck(lambda L, a, b: L.matmul(a, b), r(*sa, dtype=np.float64),
                  r(*sb, dtype=np.float64, seed=2))
    gradcheck(lambda L, a, b: L.mm(a, b), r(2, 3, dtype=np.float64), r(3, 2, dtype=np.float64))
    gradcheck(lambda L, a, b: L.bmm(a, b), r(2, 2, 3, dtype=np.float64),
              r(2, 3, 2, dtype=np.float64))
    gradcheck(lambda L, a, b: L.mv(a, b), r(2, 3, dtype=np.float64), r(3, dtype=np.float64))


def test_double_backward():
    """Backward formulas are ember ops, so a second derivative exists."""
    def fn(L, a, b):
        y = (L.matmul(a, b) ** 2).sum()
        (ga,) = L.autograd.grad(y, a, create_graph=True)
        return ga
    check(fn, r(2, 3), r(3, 4))


def test_amp_policy_tags():
    for name in ("matmul", "mm", "bmm"):
        assert ember.ops.get(name).amp_policy == "lower_precision"


ERRORS = [
    ("mm-shapes", lambda L, a, b: L.mm(a, b), r(2, 3), r(4, 5)),
    ("matmul-shapes", lambda L, a, b: L.matmul(a, b), r(2, 3), r(4, 5)),
    ("at-shapes", lambda L, a, b: a @ b, r(2, 3), r(4, 5)),
    ("mm-dtype", lambda L, a, b: L.mm(a, b), r(2, 3), r(3, 4, dtype=np.float64)),
    ("matmul-dtype", lambda L, a, b: L.matmul(a, b), ints(2, 3), r(3, 4)),
    ("mm-not-matrix", lambda L, a, b: L.mm(a, b), r(3), r(3, 4)),
    ("mm-mat2-not-matrix", lambda L, a, b: L.mm(a, b), r(2, 3), r(3)),
    ("bmm-2d", lambda L, a, b: L.bmm(a, b), r(2, 3), r(3, 4)),
    ("bmm-batch2-2d", lambda L, a, b: L.bmm(a, b), r(1, 2, 3), r(3, 4)),
    ("bmm-shapes", lambda L, a, b: L.bmm(a, b), r(2, 2, 3), r(3, 3, 4)),
    ("bmm-inner", lambda L, a, b: L.bmm(a, b), r(1, 2, 3), r(1, 4, 5)),
    ("bmm-dtype", lambda L, a, b: L.bmm(a, b), r(1, 2, 3), r(1, 3, 4, dtype=np.float64)),
    ("mv-size", lambda L, a, b: L.mv(a, b), r(2, 3), r(2)),
    ("mv-dims", lambda L, a, b: L.mv(a, b), r(2, 3), r(2, 3)),
    ("mv-dtype", lambda L, a, b: L.mv(a, b), r(2, 3), r(3, dtype=np.float64)),
    ("dot-size", lambda L, a, b: L.dot(a, b), r(3), r(2)),
    ("dot-2d", lambda L, a, b: L.dot(a, b), r(2, 3), r(3)),
    ("dot-dtype", lambda L, a, b: L.dot(a, b), r(3), r(3, dtype=np.float64)),
    ("matmul-0d", lambda L, a, b: L.matmul(a, b), np.array(2., np.float32), r(2, 3)),
    ("matmul-1d-1d", lambda L, a, b: L.matmul(a, b), r(3), r(2)),
    ("matmul-2d-1d", lambda L, a, b: L.matmul(a, b), r(2, 3), r(2)),
    ("matmul-3d-1d", lambda L, a, b: L.matmul(a, b), r(2, 3, 4), r(5)),
    ("matmul-1d-2d", lambda L, a, b: L.matmul(a, b), r(4), r(5, 6)),
    ("matmul-3d-2d", lambda L, a, b: L.matmul(a, b), r(2, 3, 4), r(5, 6)),
    ("matmul-3d-3d", lambda L, a, b: L.matmul(a, b), r(2, 3, 4), r(2, 5, 6)),
    ("matmul-1d-3d", lambda L, a, b: L.matmul(a, b), r(4), r(2, 5, 6)),
    ("matmul-batch", lambda L, a, b: L.matmul(a, b), r(2, 2, 3), r(3, 3, 5)),
    ("matmul-3d-dtype", lambda L, a, b: L.matmul(a, b), r(2, 3, 4), r(2, 4, 6, dtype=np.float64)),
    ("mm-bool", lambda L, a, b: L.mm(a, b), np.ones((2, 2), bool), np.ones((2, 2), bool)),
    ("dot-bool", lambda L, a, b: L.dot(a, b), np.ones(2, bool), np.ones(2, bool)),
    ("mv-bool", lambda L, a, b: L.mv(a, b), np.ones((2, 2), bool), np.ones(2, bool)),
    ("bmm-bool", lambda L, a, b: L.bmm(a, b), np.ones((1, 2, 2), bool), np.ones((1, 2, 2), bool)),
    ("matmul-3d-bool", lambda L, a, b: a @ b, np.ones((1, 2, 2), bool), np.ones((2, 2), bool)),
    ("matmul-1d-3d-bool", lambda L, a, b: a @ b, np.ones(2, bool), np.ones((1, 2, 2), bool)),
    ("matmul-3d-1d-bool", lambda L, a, b: a @ b, np.ones((1, 2, 2), bool), np.ones(2, bool)),
]


@pytest.mark.parametrize("name,fn,a,b", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(name, fn, a, b):
    import torch
    msg = check_error(fn, a, b)
    with pytest.raises(Exception) as te:
        fn(torch, torch.from_numpy(np.asarray(a)), torch.from_numpy(np.asarray(b)))
    assert msg == str(te.value), f"ember: {msg!r}\ntorch: {str(te.value)!r}"
