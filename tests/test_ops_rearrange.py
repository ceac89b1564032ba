"""Rearranging ops against PyTorch (OpInfo tables): repeat/tile/repeat_interleave,
flip/roll/rot90, tril/triu (+_indices), diag family, the *_scatter ops, splits and
stacks, broadcasting, meshgrid, cartesian_prod and combinations."""
import warnings

import numpy as np
import pytest

from oracle import NC, check, check_error, randn, torch
from opinfo import OpInfo, S, E, make_tests, F16, F32, I32, I64, B, C128
import ember

A = randn(3, 4)
A3 = randn(2, 3, 4)
SQ = randn(2, 4, 4)
V = randn(5)
EMPTY = np.zeros((0, 3), np.float32)
SCALAR = np.array(1.5, np.float32)
SPECIAL = np.array([[np.nan, 1.0, -np.inf], [np.inf, -0.0, 2.0]], np.float32)
INTS = (F32, I64)                  # dtypes for the compositions (float64: gradcheck)
ALL = (F32, I64, I32, B, F16)      # the primitives: every kind of dtype


def _ix(*v, dtype=np.int64):
    return np.array(v, dtype)


OPS = [
    # ---------------------------------------------------------------- repeat / tile
    OpInfo("Tensor.repeat", [
        S(A, 2, 1), S(A, (1, 2, 3)), S(A3, 1, 2, 1), S(EMPTY, 2, 2), S(A, 0, 2),
        S(SCALAR, 2, 3), S(SCALAR, ()), S(NC(A), [2, 2]), S(SPECIAL, 1, 2, grad=False)],
        dtypes=ALL,
        errors=[E(A, 2), E(A, -1, 2), E(A3, (2, 2))]),
    OpInfo("tile", [
        S(A, (2,)), S(A, (2, 1, 3)), S(A, ()), S(EMPTY, (3, 1)), S(SCALAR, (4,)),
        S(NC(A3), (1, 2, 1))], dtypes=INTS,
        errors=[E(A, (-1,)), E(A, 2)]),
    OpInfo("Tensor.tile", [S(A, 2), S(A3, 2, 1)]),
    OpInfo("repeat_interleave", [
        S(A, 2), S(A, 2, 0), S(A, 3, dim=-1), S(A3, _ix(1, 0), 0),
        S(A, _ix(0, 1, 2, 1), -1), S(A, _ix(2, 1, 0), 0, output_size=3),
        S(A, _ix(2), 1), S(A, np.array(3), 0), S(A, _ix(1, 2, 1, dtype=np.int32), 0),
        S(EMPTY, 2, 0), S(A, 0, 1), S(SCALAR, 3), S(NC(A), 2, 1), S(A3, 2, output_size=48)],
        dtypes=INTS + (F16,),
        errors=[E(A, -1), E(A, _ix(1, 2), 0), E(A, _ix(1, -2, 1), 0),
                E(A, np.array([1.0, 2.0, 1.0]), 0), E(A, _ix(1, 2, 1)[None], 0),
                E(A, _ix(1, 2, 1), 0, output_size=3), E(A, 2, 0, output_size=3),
                E(A, 2, 5), E(SCALAR, 2, 0), E(A, _ix(2)[None], 0)]),
    OpInfo("Tensor.repeat_interleave", [S(A, 2, dim=1), S(A, _ix(1, 3, 0), dim=0)]),
    OpInfo("repeat_interleave_index", [
        S(_ix(1, 2, 0, 3)), S(_ix(1, 2, dtype=np.int32)), S(_ix()), S(_ix(3)),
        S(_ix(2, 2), output_size=4)],
        fn=lambda L, r, **kw: L.repeat_interleave(r, **kw), dtypes=(None,), grad=False,
        errors=[E(np.array([1.0, 2.0])), E(np.array([True])), E(_ix(1, -1)),
                E(_ix(1, 1)[None]), E(_ix(2, 2), output_size=3), E(np.array(4)),
                E(_ix(1, 2, dtype=np.int16))]),
    # ---------------------------------------------------------------- flip / roll / rot90
    OpInfo("flip", [
        S(A, (0,)), S(A, [0, 1]), S(A3, (-1, 0)), S(A, ()), S(EMPTY, (0, 1)),
        S(SCALAR, (0,)), S(SCALAR, ()), S(NC(A3), (1,)), S(SPECIAL, (-1,), grad=False)], dtypes=ALL,
        errors=[E(A, (0, 0)), E(A, (0, -2)), E(A, (2,)), E(A, 0), E(SCALAR, (1,))]),
    OpInfo("Tensor.flip", [S(A, 0), S(A3, 0, 2), S(A, [1])]),
    OpInfo("fliplr", [S(A), S(A3), S(NC(A)), S(EMPTY)], dtypes=INTS,
           errors=[E(V), E(SCALAR)]),
    OpInfo("flipud", [S(A), S(V), S(NC(A3)), S(EMPTY)], dtypes=INTS, errors=[E(SCALAR)]),
    OpInfo("roll", [
        S(A, 1), S(A, -5), S(A, 1, 0), S(A, (1, -2), (1, 0)), S(A, shifts=(2, 1), dims=(-1, -1)),
        S(A3, 7, -1), S(A, 13, 1), S(EMPTY, 1, 0), S(EMPTY, 2), S(SCALAR, 1),
        S(NC(A3), (1, 1), (0, 2)), S(SPECIAL, 1, 1, grad=False)], dtypes=ALL,
        errors=[E(A, (1, 2), (0,)), E(A, (1, 2)), E(A, (), ()), E(A, 1, 5),
                E(SCALAR, 1, 0)]),
    OpInfo("Tensor.roll", [S(A, 1, 0), S(A, shifts=-1, dims=-1)]),
    OpInfo("rot90", [
        S(A), S(A, 1), S(A, 2), S(A, 3), S(A, -1), S(A, 4), S(A, 5, [1, 0]),
        S(A3, 1, (2, 0)), S(A3, -3, (-1, -2)), S(EMPTY, 1), S(NC(A3), 1, (0, 1))],
        dtypes=INTS,
        errors=[E(A, 1, (0, 0)), E(A, 1, (0,)), E(V), E(A, 1, (0, 2)), E(A, 1, (0, -2)),
                E(A, 1, (0, 1, 1))]),
    OpInfo("Tensor.rot90", [S(A, 1, [0, 1]), S(A3, 2, (1, 2))]),
    # ---------------------------------------------------------------- triangles
    OpInfo("tril", [
        S(A), S(A, 1), S(A, -1), S(A, diagonal=10), S(A, -10), S(SQ), S(SQ, -2),
        S(EMPTY), S(NC(A3), 1), S(SPECIAL, 0, grad=False), S(np.zeros((2, 0, 3), np.float32))],
        dtypes=ALL,
        errors=[E(V), E(SCALAR), E(A, 1.5)]),
    OpInfo("triu", [
        S(A), S(A, 1), S(A, -1), S(A, 10), S(SQ, 2), S(EMPTY), S(NC(A3), -1), S(SPECIAL, grad=False)],
        dtypes=ALL,
        errors=[E(V), E(SCALAR, 1)]),
    OpInfo("Tensor.tril", [S(A, 1), S(SQ)]),
    OpInfo("Tensor.triu", [S(A, -1), S(SQ)]),
    OpInfo("Tensor.tril_", [S(A, 1), S(SQ, -1)], grad=False,
           fn=lambda L, x, *a: x.clone().tril_(*a), errors=[E(V)]),
    OpInfo("Tensor.triu_", [S(A, 1), S(NC(SQ))], grad=False,
           fn=lambda L, x, *a: x.clone().triu_(*a), errors=[E(V)]),
    OpInfo("tril_indices", [
        S(3, 4), S(3, 4, 1), S(4, 3, -2), S(4, 3, 20), S(4, 3, -20), S(0, 3), S(3, 0),
        S(3, 3, dtype="int32")],
        fn=lambda L, *a, dtype=None: L.tril_indices(*a, **_dt(L, dtype)), dtypes=(None,),
        grad=False,
        errors=[E(-1, 4), E(3, -4), E(3, 3, dtype="float32"), E(3, 3, dtype="int16")]),
    OpInfo("triu_indices", [
        S(3, 4), S(3, 4, 1), S(4, 3, -2), S(4, 3, 20), S(4, 3, -20), S(0, 3),
        S(3, 3, dtype="int32")],
        fn=lambda L, *a, dtype=None: L.triu_indices(*a, **_dt(L, dtype)), dtypes=(None,),
        grad=False,
        errors=[E(-1, 4), E(3, 3, dtype="float64")]),
    # ---------------------------------------------------------------- diagonals
    OpInfo("diag", [
        S(V), S(V, 1), S(V, -2), S(A), S(A, 1), S(A, -2), S(A, 9), S(np.zeros(0, np.float32)),
        S(EMPTY), S(NC(A)), S(SPECIAL, 1, grad=False)], dtypes=ALL,
        errors=[E(A3), E(SCALAR), E(A, 1.0)]),
    OpInfo("Tensor.diag", [S(V, 1), S(A)]),
    OpInfo("diag_embed", [
        S(V), S(A), S(A, 1), S(A, -2), S(A3, 0, 0, 2), S(A3, 1, -1, 0), S(A, 0, 2, 0),
        S(EMPTY), S(NC(A3), 1, 1, 2)], dtypes=ALL,
        errors=[E(SCALAR), E(A, 0, 1, 1), E(A, 0, 1, 3), E(A, 0, -1, 2)]),
    OpInfo("Tensor.diag_embed", [S(A, 1)]),
    OpInfo("diagflat", [S(V), S(A), S(A, 2), S(A, -1), S(SCALAR), S(NC(A3)), S(EMPTY)],
           dtypes=INTS),
    OpInfo("Tensor.diagflat", [S(A, 1)]),
    OpInfo("diagonal_scatter", [
        S(A, randn(3)), S(A, randn(3), 1), S(A, randn(2), -1), S(A, randn(0), 9),
        S(A3, randn(2, 3), 0, -1, -2), S(A3, randn(3, 1), 1, 2, 0), S(NC(A), randn(3)),
        S(EMPTY, randn(0)), S(A, np.ones(3, np.int64))], dtypes=INTS,
        errors=[E(A, randn(4)), E(V, V), E(A, randn(3), 0, 1, 1), E(A, randn(3), 0, 0, 2)]),
    OpInfo("select_scatter", [
        S(A, randn(4), 0, 1), S(A, randn(3), 1, -1), S(A3, randn(2, 4), -2, 2),
        S(V, SCALAR, 0, 3), S(NC(A), randn(4), 0, 0), S(EMPTY, randn(0), 1, 2)],
        dtypes=INTS,
        errors=[E(A, randn(4), 0, 3), E(A, randn(3), 0, 1), E(SCALAR, SCALAR, 0, 0),
                E(A, randn(4), 2, 0)]),
    OpInfo("slice_scatter", [
        S(A, randn(3, 4)), S(A, randn(2, 4), 0, 1), S(A, randn(3, 2), 1, 0, 4, 2),
        S(A, randn(3, 2), dim=-1, start=-2), S(A, randn(0, 4), 0, 2, 1),
        S(A, randn(0, 4), 0, 10), S(NC(A3), randn(2, 3, 2), 2, None, None, 3),
        S(EMPTY, randn(0, 1), 1, 1, 2)], dtypes=INTS,
        errors=[E(A, randn(4)), E(A, randn(0, 4), 0, 0, 3, 0), E(A, randn(0, 4), 0, 0, 3, -1),
                E(SCALAR, SCALAR), E(A, randn(3, 4), 2)]),
    OpInfo("Tensor.slice_scatter", [S(A, randn(3, 2), dim=1, start=1, end=3)]),
    # ---------------------------------------------------------------- splits and stacks
    OpInfo("hsplit", [S(A, 2), S(A, [1, 3]), S(V[:4], 2), S(A3, (1,)), S(NC(A), 4),
                      S(np.zeros((2, 0)), 1)], dtypes=INTS,
           errors=[E(SCALAR, 1), E(A, 3), E(A, 0)]),
    OpInfo("vsplit", [S(A, 3), S(A, [1]), S(NC(A3), 2)], dtypes=INTS,
           errors=[E(V, 1), E(A, 2)]),
    OpInfo("dsplit", [S(A3, 2), S(A3, [1, 3]), S(NC(A3), 4)], dtypes=INTS,
           errors=[E(A, 2), E(A3, 3)]),
    OpInfo("Tensor.hsplit", [S(A, 2)]),
    OpInfo("Tensor.vsplit", [S(A, [2])]),
    OpInfo("Tensor.dsplit", [S(A3, 1)]),
    OpInfo("column_stack", [
        S(V, V), S(A[:, 0], A, NC(A)), S(SCALAR, SCALAR), S(EMPTY[:, 0], EMPTY),
        S(V, np.arange(5))],
        fn=lambda L, *ts: L.column_stack(ts), dtypes=INTS,
        errors=[E(V, A), E()]),
    OpInfo("row_stack", [S(A, A[0]), S(V, V), S(NC(A), A)],
           fn=lambda L, *ts: L.row_stack(ts), dtypes=INTS, errors=[E(A, V)]),
    # ---------------------------------------------------------------- broadcasting
    OpInfo("broadcast_to", [
        S(A, (2, 3, 4)), S(A, [3, 4]), S(A[:1], (5, 4)), S(A, (2, -1, 4)), S(SCALAR, (2, 2)),
        S(SCALAR, ()), S(EMPTY, (2, 0, 3)), S(NC(A[:1]), (3, 2, 4))], dtypes=INTS,
        errors=[E(A, (2, 4)), E(A, (4,)), E(A, (-1, 3, 4))]),
    OpInfo("Tensor.broadcast_to", [S(A[:, :1], (3, 5))]),
    OpInfo("broadcast_tensors", [
        S(A, V[:4]), S(A, A[:1, :1, None], SCALAR), S(A), S(EMPTY, EMPTY[:, :1]),
        S(NC(A), np.arange(3)[:, None])], dtypes=INTS,
        errors=[E(A, V[:2]), E(A, np.ones((2, 1, 3)))]),
    OpInfo("meshgrid", [
        S(V, V[:3], indexing="ij"), S(V, V[:3], indexing="xy"), S(V, V[:2], V[:3], indexing="xy"),
        S(SCALAR, V, indexing="ij"), S(V, indexing="xy"), S(np.zeros(0, np.float32), V, indexing="ij"),
        S(NC(V), V, indexing="ij")], dtypes=INTS,
        errors=[E(A, V, indexing="ij"), E(V, indexing="foo"), E(indexing="ij"),
                E(V, np.arange(3), indexing="ij")]),
    OpInfo("meshgrid_list", [S(V, V[:3])],
           fn=lambda L, *ts: L.meshgrid(list(ts), indexing="ij")),
    OpInfo("cartesian_prod", [
        S(V, V[:3]), S(V[:2], V[:3], V[:2]), S(V), S(np.zeros(0, np.float32), V),
        S(NC(V), V)], dtypes=INTS,
        errors=[E(A), E(A, V), E(V, np.arange(3))]),
    OpInfo("combinations", [
        S(V), S(V, 3), S(V, 1), S(V, 0, grad=False), S(V, 6, grad=False), S(V[:3], 2, True), S(V[:3], r=3,
        with_replacement=True), S(np.zeros(0, np.float32), 2), S(NC(V))], dtypes=INTS,
        errors=[E(A), E(V, -1), E(V, 2.0)]),
    # ---------------------------------------------------------------- complex inputs
    OpInfo("complex", [S(A, 0), S(A, 1), S(A, 2), S(A, 3), S(A, 4), S(A, 5), S(A, 6)],
           fn=lambda L, x, k: _COMPLEX[k](L, x * (1 + 2j)), dtypes=(F32,),
           gradcheck_dtypes=(C128,)),
    # ---------------------------------------------------------------- axes aliases
    OpInfo("moveaxis", [S(A3, 0, -1), S(A3, (0, 1), (-1, -2)), S(NC(A3), -1, 0)], dtypes=INTS,
           errors=[E(A3, 0, 3), E(A3, (0, 0), (1, 2))]),
    OpInfo("swapaxes", [S(A3, 0, -1), S(NC(A), 1, 0), S(SCALAR, 0, -1)], dtypes=INTS,
           errors=[E(A, 0, 2)]),
    OpInfo("swapdims", [S(A3, 2, 1), S(EMPTY, 0, 1)], dtypes=INTS, errors=[E(A, -3, 0)]),
    OpInfo("Tensor.swapaxes", [S(A3, 0, 1)]),
    OpInfo("Tensor.swapdims", [S(A3, -1, 0)]),
    OpInfo("Tensor.moveaxis", [S(A3, 1, 0)]),
]


_COMPLEX = [lambda L, x: x.repeat(2, 1), lambda L, x: L.flip(x, (0, 1)),
            lambda L, x: L.roll(x, 1, -1), lambda L, x: L.tril(x, 1), lambda L, x: L.diag(x),
            lambda L, x: L.diag_embed(x), lambda L, x: L.repeat_interleave(x, 2, 0)]


def _dt(L, name):
    return {} if name is None else {"dtype": getattr(L, name)}


test_forward, test_gradcheck, test_errors = make_tests(OPS)


# ----------------------------------------------------------- behaviour beyond values

def test_meshgrid_warns_without_indexing():
    x = ember.ones(2)
    with pytest.warns(UserWarning, match="indexing argument"):
        a, b = ember.meshgrid(x, ember.ones(3))
    assert a.shape == (2, 3) and b.shape == (2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.meshgrid(x, x, indexing="ij")


def test_aliasing_like_torch():
    """Views where PyTorch gives views (broadcast, meshgrid, splits), copies elsewhere."""
    x = ember.arange(12.).reshape(3, 4)
    assert ember.broadcast_to(x, (2, 3, 4))._base is not None
    assert all(g._base is not None for g in ember.meshgrid(x[0], x[:, 0], indexing="ij"))
    assert ember.hsplit(x, 2)[0]._base is not None
    for y in (x.flip(0), x.roll(1), ember.rot90(x, 0), ember.tril(x), x.repeat(1, 1),
              ember.diag(x)):
        y[0, ...] = -1.0
    assert float(x.min()) == 0.0
    assert ember.diag(x).is_contiguous()


def test_tril_inplace_autograd_and_version():
    for lib in (ember, torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * 1
        v = y._version
        y.tril_()
        assert y._version > v
        y.sum().backward()
        assert x.grad.tolist() == [[1.0, 0.0], [1.0, 1.0]]


def test_out_variants():
    for name, args in (("tril", (1,)), ("triu", (-1,)), ("diag", ())):
        check(lambda L, x, name=name, args=args: getattr(L, name)(
            x, *args, out=L.empty(0, dtype=x.dtype)), A, grad=False)
    check(lambda L, a, b: L.column_stack([a, b], out=L.empty(0)), V, V, grad=False)
    check(lambda L, a, b: L.row_stack([a, b], out=L.empty(0)), V, V, grad=False)


def test_broadcast_shapes_like_torch():
    cases = [((1, 3), (2, 1), 3), (), ((2, 3), [1]), ((0, 1), (1, 3)), (5,), ((),), (None, (2,))]
    for c in cases:
        assert tuple(ember.broadcast_shapes(*c)) == tuple(torch.broadcast_shapes(*c))
    assert isinstance(ember.broadcast_shapes((2, 1)), ember.Size)
    for bad in (((2, 3), (4,)), ((-1, 3),), ((2, 3), (-1, 3)), ((2.0,),), ((0,), (2,))):
        check_error(lambda L, bad=bad: L.broadcast_shapes(*bad))


def test_cartesian_prod_single_is_identity_and_combinations_grad():
    check(lambda L, x: L.cartesian_prod(x) * 2, V)
    check(lambda L, x: L.combinations(x, 2, with_replacement=True).sum(1), V)


def test_double_backward_through_repeat_and_roll():
    for fn in (lambda L, x: (x.repeat(2, 1) ** 2).sum(), lambda L, x: (L.roll(x, 1, 0) ** 3).sum(),
               lambda L, x: (L.tril(x) * x).sum(), lambda L, x: (L.flip(x, (0,)) ** 3).sum()):
        g = {}
        for lib in (ember, torch):
            x = lib.tensor(A.astype(np.float64), requires_grad=True)
            (gx,) = lib.autograd.grad(fn(lib, x), x, create_graph=True)
            (ggx,) = lib.autograd.grad(gx.sum(), x)
            g[lib] = ggx.detach().numpy()
        np.testing.assert_allclose(g[ember], g[torch], rtol=1e-10)
