"""addmm/addmv/addr/addbmm/baddbmm, vdot, inner, outer/ger, tensordot, chain_matmul and
einsum against PyTorch (OpInfo rows: forward + grads, float64/complex128 gradcheck,
errors), plus in-place/out= variants, bfloat16, autocast and double backward."""
import warnings

import numpy as np
import pytest

import ember
from opinfo import OpInfo, S, E, make_tests, F16, F32, F64, I64, C64, C128
from oracle import NC, check, gradcheck, randn

warnings.filterwarnings("ignore", message=".*chain_matmul is deprecated")


def r(*shape, seed=0):
    return randn(*shape, dtype=np.float64, seed=seed)


def c(*shape, seed=0):
    return r(*shape, seed=seed) + 1j * r(*shape, seed=seed + 9)


NAN = np.full((2, 4), np.nan)
FLOATS = (F32, C64)                # float64 runs in the gradcheck
FUSED_GC = (F64, C128)

OPS = [
    OpInfo("addmm", [
        S(r(2, 4), r(2, 3), r(3, 4, seed=1)),
        S(r(4), r(2, 3), r(3, 4, seed=1), beta=0.5, alpha=2),          # broadcast input
        S(np.array(1.5), r(2, 3), r(3, 4, seed=1)),                    # 0-d input
        S(NAN, r(2, 3), r(3, 4, seed=1), beta=0),                       # beta=0 ignores NaN
        S(r(0, 4), r(0, 3), r(3, 4, seed=1)),
        S(r(2, 4), r(2, 0), r(0, 4)),
        S(NC(r(2, 4)), NC(r(2, 3)), NC(r(3, 4, seed=1)), alpha=-1),
    ], dtypes=FLOATS + (F16, I64), gradcheck_dtypes=FUSED_GC, errors=[
        E(r(3), r(2, 3), r(3, 4)), E(r(2, 4), r(2, 3), r(2, 4)), E(r(2, 4), r(3), r(3, 4)),
        E(r(1, 2, 4), r(2, 3), r(3, 4)), E(r(2, 4).astype(F32), r(2, 3), r(3, 4)),
        E(r(2, 4), r(2, 3), r(3, 4).astype(F32)), E(r(2, 4), r(2, 3).astype(F32), r(3, 4)),
        E(np.ones((2, 4), bool), np.ones((2, 3), bool), np.ones((3, 4), bool))]),
    OpInfo("Tensor.addmm", [S(r(2, 4), r(2, 3), r(3, 4, seed=1), beta=2)]),
    OpInfo("addmv", [
        S(r(2), r(2, 3), r(3, seed=1)),
        S(np.array(0.5), r(2, 3), r(3, seed=1), beta=-1, alpha=0.5),
        S(r(1), r(2, 3), r(3, seed=1)),
        S(np.full(2, np.nan), r(2, 3), r(3, seed=1), beta=0),
        S(r(0), r(0, 3), r(3)), S(r(2), r(2, 0), r(0)),
        S(r(2), NC(r(2, 3)), r(3, seed=1)),
    ], dtypes=FLOATS + (F16, I64), gradcheck_dtypes=FUSED_GC, errors=[
        E(r(3), r(2, 3), r(3)), E(r(2), r(2, 3), r(4)), E(r(2), r(2, 3), r(3, 1)),
        E(r(1, 1), r(2, 3), r(3)), E(r(2).astype(F32), r(2, 3), r(3)),
        E(r(2), r(2, 3), r(3).astype(F32)),
        E(np.ones(2, bool), np.ones((2, 3), bool), np.ones(3, bool))]),
    OpInfo("addr", [
        S(r(2, 3), r(2), r(3, seed=1)),
        S(r(3), r(2), r(3, seed=1), beta=2.5, alpha=-0.5),
        S(np.array(1.0), r(2), r(3, seed=1)),
        S(np.full((2, 3), np.nan), r(2), r(3, seed=1), beta=0),
        S(r(0, 3), r(0), r(3)), S(r(2, 0), r(2), r(0)),
        S(NC(r(2, 3)), r(2), r(3, seed=1)),
    ], dtypes=FLOATS + (F16,), gradcheck_dtypes=FUSED_GC, errors=[
        E(r(3, 3), r(2), r(3)), E(r(2, 3), r(2, 1), r(3)), E(r(2, 3), r(2), r(3, 1)),
        E(np.ones((2, 3), np.int64), np.ones(2, np.int64), np.ones(3, np.int64), beta=0.5),
        E(np.ones((2, 3), bool), np.ones(2, bool), np.ones(3, bool), alpha=0.5)]),
    OpInfo("addr", [S(np.array([[True, False, False]]), np.array([True, False]),
                      np.array([True, True, False])),
                    S(np.array([[True, False, False]]), np.array([True, False]),
                      np.array([True, True, False]), beta=False)],
           dtypes=(np.bool_,), grad=False),
    OpInfo("addr", [S(r(2, 3), r(2), r(3))], dtypes=(F32,), grad=False,   # mixed dtypes
           fn=lambda L, i, a, b: L.addr(i, a.double(), b.long())),  # (torch's backward fails)
    OpInfo("addr", [S(r(2, 3), r(2), r(3), beta=2, alpha=-3)], dtypes=(I64,)),
    OpInfo("addbmm", [
        S(r(2, 4), r(3, 2, 3), r(3, 3, 4, seed=1)),
        S(r(4), r(3, 2, 3), r(3, 3, 4, seed=1), beta=0.5, alpha=2),
        S(np.full((2, 4), np.nan), r(3, 2, 3), r(3, 3, 4, seed=1), beta=0),
        S(r(2, 4), r(0, 2, 3), r(0, 3, 4)),                           # no batches: beta*input
        S(r(2, 4), NC(r(3, 2, 3)), r(3, 3, 4, seed=1)),
    ], dtypes=FLOATS + (F16, I64), gradcheck_dtypes=FUSED_GC, errors=[
        E(r(2, 4), r(2, 2, 3), r(3, 3, 4)), E(r(2, 4), r(2, 2, 3), r(2, 4, 4)),
        E(r(3, 4), r(2, 2, 3), r(2, 3, 4)), E(r(2, 4), r(2, 2, 3), r(2, 3)),
        E(r(2, 4).astype(F32), r(2, 2, 3), r(2, 3, 4)),
        E(np.ones((2, 4), bool), np.ones((2, 2, 3), bool), np.ones((2, 3, 4), bool))]),
    OpInfo("baddbmm", [
        S(r(3, 2, 4), r(3, 2, 3), r(3, 3, 4, seed=1)),
        S(r(2, 4), r(3, 2, 3), r(3, 3, 4, seed=1), beta=-1, alpha=0.5),
        S(np.full((3, 2, 4), np.nan), r(3, 2, 3), r(3, 3, 4, seed=1), beta=0),
        S(r(0, 2, 4), r(0, 2, 3), r(0, 3, 4)), S(r(3, 2, 4), r(3, 2, 0), r(3, 0, 4)),
        S(r(3, 2, 4), NC(r(3, 2, 3)), NC(r(3, 3, 4, seed=1))),
    ], dtypes=FLOATS + (F16, I64), gradcheck_dtypes=FUSED_GC, errors=[
        E(r(3, 2, 4), r(2, 2, 3), r(2, 3, 4)), E(r(2, 2, 4), r(2, 2, 3), r(2, 4, 4)),
        E(r(2, 2, 4), r(2, 3), r(2, 3, 4)), E(r(2, 2, 4).astype(F32), r(2, 2, 3), r(2, 3, 4)),
        E(r(2, 2, 4), r(2, 2, 3), r(2, 3, 4).astype(F32)),
        E(np.ones((2, 2, 4), bool), np.ones((2, 2, 3), bool), np.ones((2, 3, 4), bool))]),
    OpInfo("vdot", [S(r(3), r(3, seed=1)), S(c(3), c(3, seed=1)), S(r(0), r(0)),
                    S(NC(c(4)), c(4, seed=2))],
           dtypes=(F32, F64, C64, C128, F16, I64), gradcheck_dtypes=FUSED_GC, errors=[
        E(r(3), r(3).astype(F32)), E(r(3, 1), r(3)), E(r(3), r(4)),
        E(np.ones(3, bool), np.ones(3, bool))]),
    OpInfo("Tensor.vdot", [S(c(3), c(3, seed=1))], dtypes=(C128,), gradcheck_dtypes=(C128,)),
    OpInfo("inner", [S(r(3), r(3, seed=1)), S(r(2, 3), r(4, 3, seed=1)), S(r(2, 3), r(3)),
                     S(r(2, 1, 3), r(2, 2, 3)), S(np.array(2.0), r(2, 3)), S(r(0, 3), r(2, 3)),
                     S(r(2, 0), r(4, 0)), S(NC(r(2, 3)), NC(r(3, 3, seed=1)))],
           dtypes=FLOATS + (F16, I64), gradcheck_dtypes=FUSED_GC, errors=[
        E(r(2, 3), r(4)), E(r(2, 3), r(3).astype(F32)), E(np.ones(3, bool), np.ones(3, bool))]),
    OpInfo("outer", [S(r(3), r(4, seed=1)), S(r(0), r(4)), S(c(2), c(3, seed=1)),
                     S(NC(r(3)), r(2))],
           dtypes=FLOATS + (F16, I64), gradcheck_dtypes=FUSED_GC,
           errors=[E(r(3, 1), r(3)), E(r(3), r(3, 2))]),
    OpInfo("ger", [S(r(3), r(4, seed=1))], errors=[E(r(3, 1), r(3))]),
    OpInfo("outer", [S(r(3), np.arange(4))], fn=lambda L, a, b: L.outer(a, b.long())),
    OpInfo("tensordot", [
        S(r(2, 3, 4), r(3, 4, 5, seed=1)), S(r(2, 3), r(3, 4, seed=1), dims=1),
        S(r(2, 3), r(4, 5), dims=0), S(r(2, 3), r(2, 3, seed=1), dims=2),
        S(r(2, 3, 4), r(4, 2, 5), dims=([0, 2], [1, 0])),
        S(r(2, 3, 4), r(4, 3, 5), dims=([-1, -2], [0, 1])),
        S(r(2, 3), r(3, 4), dims=([1], [0])), S(r(0, 3), r(3, 4), dims=1),
        S(r(2, 0), r(0, 4), dims=1), S(NC(r(2, 3, 4)), r(3, 4, 5, seed=1)),
    ], dtypes=FLOATS + (F16, I64), gradcheck_dtypes=(F64,), errors=[
        E(r(2, 3), r(3, 4), dims=-1), E(r(2, 3), r(3, 4), dims=3),
        E(r(2, 3), r(3, 4), dims=([0], [0])), E(r(2, 3), r(3, 4), dims=([0, 1], [0])),
        E(r(2, 3), r(3, 4).astype(F32), dims=1), E(r(2, 3), r(3, 4), dims=([5], [0])),
        E(r(3, 3), r(3, 3), dims=([0, 0], [0, 1])),
        E(np.ones((2, 3), bool), np.ones((3, 4), bool), dims=1)]),
    OpInfo("tensordot", [S(c(2, 3), c(3, 2, seed=1), dims=1)], dtypes=(C128,),
           gradcheck_dtypes=(C128,)),
    OpInfo("chain_matmul", [
        S(r(2, 3), r(3, 4, seed=1)), S(r(2, 3), r(3, 4, seed=1), r(4, 2, seed=2)),
        S(r(5, 1), r(1, 5, seed=1), r(5, 1, seed=2), r(1, 4, seed=3)),
        S(r(2, 3)), S(r(2, 0), r(0, 4)), S(NC(r(2, 3)), NC(r(3, 3, seed=1)))],
        dtypes=FLOATS + (I64,), gradcheck_dtypes=FUSED_GC, errors=[
        E(), E(r(3), r(3, 3)), E(r(2, 3), r(4, 3)), E(r(2, 3), r(3, 3).astype(F32)),
        E(r(2, 3, 3), r(3, 3))]),
]


EQUATIONS = [
    ("ij,jk->ik", (2, 3), (3, 4)), ("ij,jk", (2, 3), (3, 4)), ("ij->ji", (2, 3)),
    ("ii->i", (3, 3)), ("ii", (3, 3)), ("iji->j", (3, 2, 3)), ("i,i->", (3,), (3,)),
    ("i,j->ij", (2,), (3,)), ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    ("...ij,...jk->...ik", (5, 2, 3), (3, 4)), ("...ij->...ji", (2, 1, 2, 3)),
    ("...ij->ji", (5, 2, 3)), ("i...,i...->...", (3, 2), (3, 2)),
    ("...,...->...", (2, 3), (3,)), ("ij,ij->ij", (2, 3), (2, 3)), ("ij->", (2, 3)),
    ("ba", (2, 3)), ("Ab,ba", (2, 3), (3, 2)), ("ij,jk,kl->il", (2, 3), (3, 4), (4, 5)),
    ("ij,jk,kl,lm", (6, 2), (2, 7), (7, 3), (3, 2)), ("ijk,jkl->il", (2, 3, 4), (3, 4, 5)),
    ("ij,jk->ik", (2, 1), (3, 4)), ("bij,bjk->bik", (1, 2, 3), (4, 3, 2)),
    ("i,i,i->i", (3,), (3,), (3,)), (",i->i", (), (3,)), ("", ()),
    ("iij,jk->ik", (2, 2, 3), (3, 4)), (" i j , j k -> i k ", (2, 3), (3, 4)),
    ("ij,jk->ik", (0, 3), (3, 4)), ("ij,jk->ik", (2, 0), (0, 4)), ("ij->i", (2, 0)),
    ("ij->...ij", (2, 3)), ("ij,kl->", (2, 3), (4, 5)), ("ibj,jb->ib", (2, 3, 4), (4, 3)),
]


def _ein(eq):
    return lambda L, *ops: L.einsum(eq, *ops)


# gradcheck a few equations (one per code path); the rest compare grads with PyTorch
EIN_GC = {"ij,jk->ik": FUSED_GC, "iji->j": FUSED_GC, "...ij,...jk->...ik": (F64,),
          "i,j->ij": FUSED_GC, "ij,jk->ik ": (F64,), "ij,jk,kl->il": (F64,),
          "bij,bjk->bik": (F64,), ",i->i": (F64,)}
OPS += [OpInfo("einsum", [S(*(r(*s, seed=i) for i, s in enumerate(shapes)))],
               fn=_ein(eq), dtypes=(F32, C64), gradcheck_dtypes=EIN_GC.get(eq, ()), atol=1e-4)
        for eq, *shapes in EQUATIONS]
OPS += [
    OpInfo("einsum", [S(NC(r(3, 2)), r(3, 4))], fn=_ein("ji,jk->ik"), dtypes=(F16, I64, F64)),
    OpInfo("einsum", [S(r(2, 3), r(3, 4))], fn=lambda L, a, b: L.einsum("ij,jk", [a, b])),
    OpInfo("einsum", [S(r(2, 3), r(3, 4))],
           fn=lambda L, a, b: L.einsum(a, [0, 1], b, [1, 2], [0, 2])),
    OpInfo("einsum", [S(r(5, 2, 3), r(3, 4))],
           fn=lambda L, a, b: L.einsum(a, [..., 0, 1], b, [1, 2], [..., 0, 2])),
    OpInfo("einsum", [S(r(2), r(3))], fn=lambda L, a, b: L.einsum("i,j", a, b.double()),
           dtypes=(F32,)),
    OpInfo("einsum", [S(r(2, 3), r(3, 4))], fn=lambda L, a, b: L.einsum("ij,jk", a, b),
           grad=False, errors=[
        E(r(2, 3)), E(r(2, 3), r(3, 4), r(4)), E(r(2, 3), r(3, 4).astype(F32)),
        E(np.ones((2, 3), bool), np.ones((3, 4), bool))]),
    OpInfo("einsum", [], errors=[
        E("ijk", r(2, 3)), E("i", r(2, 3)), E("i1", r(2, 3)), E("ij->ii", r(2, 3)),
        E("ij->k", r(2, 3)), E("ii", r(2, 3)), E("ij,ij->ij", r(2, 3), r(2, 4)),
        E("...i,...i", r(2, 3), r(4, 3)), E("i.j", r(2, 3)), E("...i...", r(2, 3)),
        E("ij->j->i", r(2, 3)), E("ij"), E("...ijk", r(2, 3)),
        E("ij,jk", np.ones((2, 3), np.int64), r(3, 4))]),
]

test_forward, test_gradcheck, test_errors = make_tests(OPS)


# ------------------------------------------------------- variants and precision

FUSED = {"addmm": ((2, 4), (2, 3), (3, 4)), "addmv": ((2,), (2, 3), (3,)),
         "addr": ((2, 3), (2,), (3,)), "addbmm": ((2, 4), (3, 2, 3), (3, 3, 4)),
         "baddbmm": ((3, 2, 4), (3, 2, 3), (3, 3, 4))}


@pytest.mark.parametrize("name", sorted(FUSED))
def test_inplace_and_out(name):
    i, a, b = (r(*s, seed=k) for k, s in enumerate(FUSED[name]))
    check(lambda L, x, y, z: getattr(x.clone(), name + "_")(y, z, beta=0.5, alpha=2), i, a, b)
    check(lambda L, x, y, z: getattr(L, name)(x, y, z, out=L.empty(0, dtype=x.dtype)),
          i, a, b, grad=False)


@pytest.mark.parametrize("name", sorted(FUSED))
def test_bfloat16(name):
    i, a, b = (r(*s, seed=k).astype(F32) for k, s in enumerate(FUSED[name]))
    check(lambda L, x, y, z: getattr(L, name)(x.bfloat16(), y.bfloat16(), z.bfloat16()),
          i, a, b, atol=5e-2, rtol=5e-2)


def test_bfloat16_composites():
    tol = dict(atol=5e-2, rtol=5e-2)
    check(lambda L, a, b: L.einsum("ij,jk", a.bfloat16(), b.bfloat16()), r(2, 3), r(3, 4), **tol)
    check(lambda L, a, b: L.tensordot(a.bfloat16(), b.bfloat16(), 1), r(2, 3), r(3, 4), **tol)
    check(lambda L, a, b: L.vdot(a.bfloat16(), b.bfloat16()), r(3), r(3), **tol)


def test_double_backward():
    gradcheck(lambda L, i, a, b: L.addmm(i, a, b).square().sum(), r(2, 4), r(2, 3), r(3, 4))
    ember_gg = ember.autograd.gradgradcheck
    a = ember.from_numpy(r(2, 3)).requires_grad_()
    b = ember.from_numpy(r(3, 4)).requires_grad_()
    assert ember_gg(lambda x, y: ember.einsum("ij,jk->ik", x, y), (a, b))
    assert ember_gg(lambda x, y: ember.tensordot(x, y, 1), (a, b))


def test_einsum_views_and_values():
    x = ember.arange(9.0).reshape(3, 3)
    assert ember.einsum("ii->i", x)._base is not None          # a view, as in PyTorch
    np.testing.assert_allclose(ember.einsum("ii", x).item(), 12.0)
    np.testing.assert_allclose(
        ember.einsum("abc,cd,db->a", *(ember.from_numpy(r(*s, seed=i)) for i, s in
                                       enumerate([(2, 3, 4), (4, 5), (5, 3)]))).numpy(),
        np.einsum("abc,cd,db->a", r(2, 3, 4), r(4, 5, seed=1), r(5, 3, seed=2)), rtol=1e-10)


def test_chain_matmul_warns():
    with pytest.warns(UserWarning, match="deprecated"):
        ember.chain_matmul(ember.ones(2, 2), ember.ones(2, 2))


def test_tensordot_tensor_dims():
    check(lambda L, a, b: L.tensordot(a, b, dims=L.tensor([[1], [0]])), r(2, 3), r(3, 4))


def test_alpha0_nan_like_torch():
    """baddbmm/addr multiply alpha by the product (NaN stays); addmm/addmv/addbmm skip it."""
    n = np.full((1, 1), np.nan)
    for name, i, a, b in [("addmm", np.zeros((1, 1)), n, np.ones((1, 1))),
                          ("addmv", np.zeros(1), n, np.ones(1)),
                          ("addbmm", np.zeros((1, 1)), n[None], np.ones((1, 1, 1))),
                          ("baddbmm", np.zeros((1, 1, 1)), n[None], np.ones((1, 1, 1))),
                          ("addr", np.zeros((1, 1)), n[0], np.ones(1))]:
        check(lambda L, x, y, z: getattr(L, name)(x, y, z, alpha=0), i, a, b, grad=False)
