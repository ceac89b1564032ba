"""Complex numbers against PyTorch: complex/polar/angle, the conj family, views
(view_as_real/view_as_complex/real/imag), and gradients of the existing ops on complex
inputs with PyTorch's conjugate-Wirtinger convention (oracle grads + complex128
gradcheck)."""
import numpy as np
import pytest

import ember
from opinfo import OpInfo, S, E, make_tests, F16, F32, F64, I64, C64, C128
from oracle import NC, check, gradcheck, randn


def r(*shape, seed=0):
    return randn(*shape, dtype=np.float64, seed=seed)


def c(*shape, seed=0):
    return r(*shape, seed=seed) + 1j * r(*shape, seed=seed + 9)


def pos(*shape, seed=0):
    return np.abs(r(*shape, seed=seed)) + 0.5


CX = (C64, C128)
GC = (C128,)
Z = np.array([1 + 2j, 0j, -0.5 + 0.1j, -3 - 1j, np.nan + 1j])

OPS = [
    # constructors: real parts in, complex out (gradients are real(g)/imag(g) and
    # real(conj(g) dz/dx))
    OpInfo("complex", [S(r(2, 3), r(2, 3, seed=1)), S(r(2, 3), r(3, seed=1)), S(r(0), r(0)),
                       S(np.array(1.0), r(3)), S(NC(r(2, 3)), r(2, 3, seed=1)),
                       S(np.array([np.inf, np.nan]), np.array([np.nan, -np.inf]), grad=False)],
           dtypes=(F32, F64), errors=[
        E(r(3), r(3).astype(F32)), E(np.ones(3, np.int64), np.ones(3, np.int64)),
        E(r(2, 3), r(4)), E(c(3), c(3))]),
    OpInfo("polar", [S(pos(2, 3), r(2, 3, seed=1)), S(pos(3), r(2, 3, seed=1)), S(r(0), r(0)),
                     S(NC(pos(2, 3)), r(2, 3, seed=1))],
           dtypes=(F32, F64), errors=[
        E(r(3), r(3).astype(F32)), E(np.ones(3, np.int64), np.ones(3, np.int64)),
        E(r(3).astype(F16), r(3).astype(F16))]),
    OpInfo("angle", [S(c(2, 3)), S(Z, grad=False), S(NC(c(2, 3))), S(c(0)), S(np.array(1j))],
           dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("angle", [S(np.array([-1.0, 0.0, -0.0, 2.0, np.nan, -np.inf]), grad=False),
                     S(r(2, 3))],
           dtypes=(F16, F32, F64)),
    OpInfo("angle", [S(np.array([-2, 0, 3]))], dtypes=(I64,)),
    OpInfo("Tensor.angle", [S(c(3))], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("angle", [S(np.array([True, False]))], dtypes=(np.bool_,), grad=False),
    # views
    OpInfo("view_as_real", [S(c(2, 3)), S(c(0)), S(np.array(1 + 1j))], dtypes=CX,
           gradcheck_dtypes=GC, errors=[E(r(3))]),
    OpInfo("view_as_complex", [S(r(3, 2)), S(r(2, 3, 2))], dtypes=(F32, F64),
           errors=[E(r(3, 3)), E(np.ones((3, 2), np.int64))]),
    OpInfo("real", [S(c(2, 3)), S(r(2, 3))], dtypes=CX + (F32,), gradcheck_dtypes=GC),
    OpInfo("imag", [S(c(2, 3))], dtypes=CX, gradcheck_dtypes=GC, errors=[E(r(3))]),
    OpInfo("conj", [S(c(2, 3)), S(NC(c(2, 3)))], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("conj_physical", [S(c(2, 3)), S(r(3))], dtypes=CX + (F32,), gradcheck_dtypes=GC),
    OpInfo("resolve_conj", [S(c(2, 3))], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("resolve_neg", [S(c(2, 3))], dtypes=CX + (F32,), gradcheck_dtypes=GC),
    # existing ops on complex inputs
    OpInfo("add", [S(c(2, 3), c(3, seed=1)), S(c(2, 3), r(3, seed=1))], dtypes=CX,
           gradcheck_dtypes=GC),
    OpInfo("add", [S(c(2, 3), c(3, seed=1), alpha=2 - 1j)], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("sub", [S(c(2, 3), c(3, seed=1))], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("mul", [S(c(2, 3), c(3, seed=1)), S(NC(c(2, 3)), c(2, 3, seed=1))], dtypes=CX,
           gradcheck_dtypes=GC),
    OpInfo("mul", [S(c(2, 3), r(3, seed=1))], fn=lambda L, a, b: a * b.real,
           dtypes=(C128,), gradcheck_dtypes=GC),                    # complex * real input
    OpInfo("div", [S(c(2, 3), c(3, seed=1))], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("pow", [S(c(2, 3), c(3, seed=1)), S(c(2, 3), 2), S(c(3), 0.5 + 1j)], dtypes=CX,
           gradcheck_dtypes=GC),
    *[OpInfo(n, [S(c(2, 3)), S(c(0))], dtypes=CX, gradcheck_dtypes=GC)
      for n in ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "abs", "neg",
                "reciprocal", "square", "sgn")],
    OpInfo("sum", [S(c(2, 3)), S(c(2, 3), 1), S(c(2, 3), (0, 1), keepdim=True)], dtypes=CX,
           gradcheck_dtypes=GC),
    OpInfo("mean", [S(c(2, 3)), S(c(2, 3), -1)], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("prod", [S(c(2, 3)), S(c(2, 3), 1)], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("matmul", [S(c(2, 3), c(3, 4, seed=1)), S(c(2, 2, 3), c(3, seed=1)),
                      S(c(3), c(2, 3, 2, seed=1))], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("mm", [S(c(2, 3), c(3, 4, seed=1))], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("bmm", [S(c(2, 2, 3), c(2, 3, 2, seed=1))], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("mv", [S(c(2, 3), c(3, seed=1))], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("dot", [S(c(3), c(3, seed=1))], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("vdot", [S(c(3), c(3, seed=1))], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("einsum", [S(c(2, 3), c(3, 4, seed=1))], fn=lambda L, a, b: L.einsum("ij,jk", a, b),
           dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("einsum", [S(c(3, 3))], fn=lambda L, a: L.einsum("ii", a), dtypes=CX,
           gradcheck_dtypes=GC),
    OpInfo("Tensor.reshape", [S(c(2, 3), (3, 2))], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("Tensor.permute", [S(c(2, 3), (1, 0))], dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("cat", [S(c(2, 3), c(1, 3, seed=1))], fn=lambda L, a, b: L.cat([a, b]),
           dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("stack", [S(c(2, 3), c(2, 3, seed=1))], fn=lambda L, a, b: L.stack([a, b], 1),
           dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("index", [S(c(3, 4))], fn=lambda L, a: a[1:, [0, 2, 2]], dtypes=CX,
           gradcheck_dtypes=GC),
    OpInfo("gather", [S(c(2, 3))], fn=lambda L, a: a.gather(1, L.tensor([[0, 0], [2, 1]])),
           dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("where", [S(c(2, 3), c(2, 3, seed=1))],
           fn=lambda L, a, b: L.where(a.real > 0, a, b), dtypes=CX, gradcheck_dtypes=GC),
    OpInfo("softmax", [], errors=[E(c(2, 3), 1)]),      # PyTorch's CPU softmax has no complex
    OpInfo("complex_chain", [S(r(2, 3), r(2, 3, seed=1))], dtypes=(F64,),
           fn=lambda L, x, y: (L.complex(x, y).exp() * L.polar(x.abs() + 1, y)).abs()),
]

test_forward, test_gradcheck, test_errors = make_tests(OPS)


def test_conj_of_real_is_the_tensor_itself():
    x = ember.randn(3)
    assert x.conj() is x and ember.conj(x) is x
    z = ember.randn(3, dtype=ember.complex64)
    assert not z.is_conj() and not z.is_neg() and z.resolve_conj() is z
    assert ember.is_complex(z) and not ember.is_complex(x)


def test_views_share_memory():
    z = ember.zeros(3, dtype=ember.complex128)
    z.real[0] = 1.0
    z.imag[1] = 2.0
    ember.view_as_real(z)[2, 1] = 3.0
    np.testing.assert_array_equal(z.numpy(), [1, 2j, 3j])
    x = ember.zeros(2, 2)
    ember.view_as_complex(x)[1] = 1 + 1j
    np.testing.assert_array_equal(x.numpy(), [[0, 0], [1, 1]])


def test_complex_with_out_and_halves():
    check(lambda L, a, b: L.complex(a, b, out=L.empty(0, dtype=L.complex128)),
          r(3), r(3, seed=1), grad=False)
    check(lambda L, a: L.angle(a, out=L.empty(0)), c(3).astype(C64), grad=False)
    with pytest.raises(NotImplementedError, match="complex32"):
        ember.complex(ember.ones(2, dtype=ember.float16), ember.ones(2, dtype=ember.float16))


def test_real_loss_through_complex_graph():
    """backward of a real loss built from complex intermediates (|z|^2 of a product)."""
    check(lambda L, a, b: (L.complex(a, b) @ L.complex(b, a).t()).abs().square().sum(),
          r(2, 3), r(2, 3, seed=1))
    gradcheck(lambda L, a, b: L.view_as_real(a * b.conj()), c(3), c(3, seed=1))
