"""Indexing ops against PyTorch: getitem/setitem, gather/scatter, masks, where, nonzero."""
import warnings

import numpy as np
import pytest

from oracle import check, check_error, gradcheck, NC, randn, torch
import ember

A = randn(3, 4)
B = randn(2, 3, 4)
S0 = np.ones((), np.float32) * 1.5
E0 = np.zeros((0, 4), np.float32)


def I(L, v, dtype=None):
    """An index tensor in library L."""
    return L.tensor(v, dtype=dtype or L.int64)


# --------------------------------------------------------------------------- getitem

GETITEM = [
    ("int", lambda L, x: x[1], A),
    ("neg_int", lambda L, x: x[-1, -2], A),
    ("slice", lambda L, x: x[1:], A),
    ("slice_step", lambda L, x: x[::2, 1::2], A),
    ("slice_neg", lambda L, x: x[-2:, :-1], A),
    ("slice_clamp", lambda L, x: x[1:100, -100:2], A),
    ("slice_empty", lambda L, x: x[2:1], A),
    ("none", lambda L, x: x[None, :, None], A),
    ("ellipsis", lambda L, x: x[..., 1], B),
    ("ellipsis_none", lambda L, x: x[None, ..., None, 0], B),
    ("ellipsis_only", lambda L, x: x[...], A),
    ("0d_ellipsis", lambda L, x: x[...], S0),
    ("0d_none", lambda L, x: x[None], S0),
    ("0d_empty_tuple", lambda L, x: x[()], S0),
    ("0d_tensor_int", lambda L, x: x[I(L, 1)], A),
    ("0d_tensor_int32", lambda L, x: x[1, I(L, 2, L.int32)], A),
    ("list", lambda L, x: x[[0, 2, 2]], A),
    ("list_neg", lambda L, x: x[[-1, 0]], A),
    ("tensor", lambda L, x: x[I(L, [[0, 1], [2, 0]])], A),
    ("tensor_int32", lambda L, x: x[I(L, [2, 0], L.int32)], A),
    ("two_tensors", lambda L, x: x[I(L, [0, 2]), I(L, [1, 3])], A),
    ("broadcast", lambda L, x: x[I(L, [[0], [2]]), I(L, [1, 3])], A),
    ("adv_slice", lambda L, x: x[:, I(L, [3, 0])], A),
    ("adv_adjacent", lambda L, x: x[:, I(L, [0, 1]), I(L, [1, 2])], B),
    ("adv_separated", lambda L, x: x[I(L, [0, 1]), :, I(L, [1, 2])], B),
    ("adv_int_mix", lambda L, x: x[1, :, I(L, [1, 2])], B),
    ("adv_int_first", lambda L, x: x[I(L, [1, 0]), 1], B),
    ("adv_none", lambda L, x: x[None, I(L, [1, 0]), None], A),
    ("adv_ellipsis", lambda L, x: x[..., I(L, [3, 3])], B),
    ("mask", lambda L, x: x[x > 0], A),
    ("mask_row", lambda L, x: x[L.tensor([True, False, True])], A),
    ("mask_dim1", lambda L, x: x[:, L.tensor([True, False, True, True])], A),
    ("mask_2d_of_3d", lambda L, x: x[x[..., 0] > 0], B),
    ("mask_and_int", lambda L, x: x[L.tensor([True, False]), 2], B),
    ("mask_empty", lambda L, x: x[x > 100], A),
    ("mask_0d_true", lambda L, x: x[L.tensor(True)], A),
    ("mask_0d_false", lambda L, x: x[L.tensor(False)], A),
    ("py_true", lambda L, x: x[True], A),
    ("py_false_int", lambda L, x: x[False, 0], A),
    ("py_true_0d", lambda L, x: x[True], S0),
    ("numpy_index", lambda L, x: x[np.array([2, 1])], A),
    ("empty_list", lambda L, x: x[[]], A),
    ("empty_tensor", lambda L, x: x[I(L, [])], A),
    ("empty_input", lambda L, x: x[:, 1], E0),
    ("empty_input_adv", lambda L, x: x[I(L, [], L.int64), 1:], E0),
    ("nc", lambda L, x: x[1:, I(L, [0, 0])], NC(A)),
    ("dup_grad", lambda L, x: x[I(L, [0, 0, 0, 2])] * 2, A),
    ("dup_grad_2d", lambda L, x: x[I(L, [0, 0]), I(L, [1, 1])], A),
    ("half", lambda L, x: x.half()[I(L, [1, 1])], A),
    ("bf16", lambda L, x: x.bfloat16()[1:, I(L, [2, 0])], A),
    ("int", lambda L, x: x.long()[x > 0], A),
    ("f64", lambda L, x: x.double()[[0, 1], [1, 2]], A),
    ("bool_tensor_input", lambda L, x: (x > 0)[I(L, [1, 0])], A),
]


@pytest.mark.parametrize("case", GETITEM, ids=[c[0] for c in GETITEM])
def test_getitem(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(case[1], *case[2:])


def test_list_of_lists_is_a_tuple_like_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda L, x: x[[[0, 1], [1, 2]]], A)
        check(lambda L, x: x[[0, slice(1, 3)]], A)


GETITEM_ERRORS = [
    lambda L, x: x[3],
    lambda L, x: x[-4],
    lambda L, x: x[0, 5],
    lambda L, x: x[0, 0, 0],
    lambda L, x: x[..., 0, 0, 0],
    lambda L, x: x[I(L, [5])],
    lambda L, x: x[I(L, [-4])],
    lambda L, x: x[:, I(L, [4])],
    lambda L, x: x[L.tensor([0.0])],
    lambda L, x: x[L.tensor([0], dtype=L.int8)],
    lambda L, x: x[L.tensor([True, False])],
    lambda L, x: x[:, L.tensor([True, False])],
    lambda L, x: x[I(L, [0, 1]), I(L, [0, 1, 2])],
    lambda L, x: x[1.0],
    lambda L, x: x["a"],
    lambda L, x: x[::-1],
    lambda L, x: x[::0],
    lambda L, x: x[I(L, 0)][I(L, 9)],
]


@pytest.mark.parametrize("i", range(len(GETITEM_ERRORS)))
def test_getitem_errors(i):
    check_error(GETITEM_ERRORS[i], A)


def test_getitem_messages():
    assert check_error(lambda L, x: x[5], A) == "index 5 is out of bounds for dimension 0 with size 3"
    assert check_error(lambda L, x: x[:, 9], A) == \
        "index 9 is out of bounds for dimension 1 with size 4"
    assert check_error(lambda L, x: x[I(L, [5])], A) == \
        "index 5 is out of bounds for dimension 0 with size 3"
    assert check_error(lambda L, x: x[L.tensor([1.0])], A) == \
        "tensors used as indices must be long, int, byte or bool tensors"
    assert "too many indices" in check_error(lambda L, x: x[0, 0, 0], A)


def test_basic_index_aliases_advanced_copies():
    x = ember.from_numpy(A.copy())
    for v in (x[1], x[:, 1:3], x[None, ..., 0], x[...], x[I(ember, 1)]):
        assert v._base is x
        v0 = x._version
        v.mul_(2)
        assert x._version == v._version == v0 + 1
    np.testing.assert_allclose(x.numpy()[1, 1:3], A[1, 1:3] * 16)
    c = x[I(ember, [0, 1])]
    assert c._base is None
    c.mul_(0)
    assert x.numpy()[0].any()


def test_gradcheck_getitem():
    gradcheck(lambda L, x: x[L.tensor([0, 0, 2]), 1:], randn(3, 4, dtype=np.float64))
    gradcheck(lambda L, x: x[x > 0] * 2, randn(3, 4, dtype=np.float64))
    gradcheck(lambda L, x: x[1, ::2, None], randn(3, 4, dtype=np.float64))
    gradcheck(lambda L, x: x[:, L.tensor([1, 1]), L.tensor([[0], [2]])], randn(2, 3, 4,
                                                                         dtype=np.float64))


def test_double_backward_index():
    for L in (ember, torch):
        x = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
        y = (x[L.tensor([0, 0, 2])] ** 3).sum()
        (g,) = L.autograd.grad(y, x, create_graph=True)
        (gg,) = L.autograd.grad(g.sum(), x)
        if L is ember:
            ge, gge = g.detach().numpy(), gg.numpy()
        else:
            np.testing.assert_allclose(ge, g.detach().numpy())
            np.testing.assert_allclose(gge, gg.numpy())


# --------------------------------------------------------------------------- setitem

def _set(key_fn, value_fn):
    def fn(L, x, v):
        y = x * 1
        y[key_fn(L, y)] = value_fn(L, v)
        return y
    return fn


SETITEM = [
    ("int_scalar", _set(lambda L, y: 1, lambda L, v: 5.0)),
    ("int_tensor", _set(lambda L, y: 1, lambda L, v: v[0])),
    ("slice", _set(lambda L, y: (slice(None), slice(1, 3)), lambda L, v: v[:, :2])),
    ("slice_step", _set(lambda L, y: (slice(None, None, 2),), lambda L, v: v[:2])),
    ("ellipsis", _set(lambda L, y: (Ellipsis, 0), lambda L, v: v[:, 0])),
    ("broadcast", _set(lambda L, y: (slice(None), 2), lambda L, v: v[0, 0])),
    ("leading_ones", _set(lambda L, y: 0, lambda L, v: v[:1])),
    ("mask", _set(lambda L, y: y > 0, lambda L, v: 0.0)),
    ("mask_tensor", _set(lambda L, y: y > 0, lambda L, v: v[0, 0])),
    ("mask_row", _set(lambda L, y: L.tensor([True, False, True]), lambda L, v: v[:2])),
    ("adv", _set(lambda L, y: (I(L, [0, 2]), I(L, [1, 3])), lambda L, v: v[0, :2])),
    ("adv_dup", _set(lambda L, y: I(L, [0, 0]), lambda L, v: v[0])),
    ("adv_slice", _set(lambda L, y: (slice(1, None), I(L, [0, 3])), lambda L, v: v[:2, :2])),
    ("adv_int", _set(lambda L, y: (1, I(L, [0, 3])), lambda L, v: -1.0)),
    ("adv_leading_ones", _set(lambda L, y: I(L, [1]), lambda L, v: v[None, :1])),
    ("dtype_cast_basic", _set(lambda L, y: 0, lambda L, v: v[0].double())),
    ("int_value", _set(lambda L, y: (0, 0), lambda L, v: 3)),
]


@pytest.mark.parametrize("case", SETITEM, ids=[c[0] for c in SETITEM])
def test_setitem(case):
    check(case[1], A, randn(3, 4, seed=5))


def test_setitem_noncontiguous_and_int_tensor():
    check(_set(lambda L, y: (slice(None), 1), lambda L, v: v[0, :3]), NC(A), randn(3, 4, seed=5))

    def fn(L, x):
        y = x.long()
        y[y > 0] = 7
        y[I(L, [0])] = L.tensor([1, 2, 3, 4])
        return y
    check(fn, A)


def test_setitem_versions_and_no_grad_path():
    x = ember.zeros(3, 4)
    v0 = x._version
    x[1] = 2.0
    x[I(ember, [0, 0]), I(ember, [1, 2])] = ember.tensor([3.0, 4.0])
    x[x > 3] = -1.0
    assert x._version == v0 + 3
    t = torch.zeros(3, 4)
    t[1] = 2.0
    t[I(torch, [0, 0]), I(torch, [1, 2])] = torch.tensor([3.0, 4.0])
    t[t > 3] = -1.0
    np.testing.assert_array_equal(x.numpy(), t.numpy())
    row = x[2]
    row[I(ember, [1])] = 9.0
    assert x[2, 1].item() == 9.0 and x._version == row._version


def test_setitem_grad_into_value():
    def fn(L, x, v):
        y = L.zeros(3, 4, dtype=x.dtype) + x
        y[I(L, [0, 2]), 1:3] = v[:2, :2] * 3
        y[1] = v[2]
        return y
    check(fn, A, randn(3, 4, seed=2))


def test_setitem_leaf_errors():
    for L in (ember, torch):
        x = L.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError):
            x[0] = 1.0
        with pytest.raises(RuntimeError):
            x[I(L, [0])] = 1.0
        with L.no_grad():
            x[0] = 1.0
        assert x[0].item() == 1.0


SETITEM_ERRORS = [
    lambda L, x: x.__setitem__(5, 1.0),
    lambda L, x: x.__setitem__(I(L, [5]), 1.0),
    lambda L, x: x.__setitem__((slice(None), I(L, [0, 1])), L.ones(3)),
    lambda L, x: x.__setitem__(0, L.ones(3)),
    lambda L, x: x.__setitem__(L.tensor([0.0]), 1.0),
    lambda L, x: x.__setitem__((0, 0, 0), 1.0),
]


@pytest.mark.parametrize("i", range(len(SETITEM_ERRORS)))
def test_setitem_errors(i):
    check_error(SETITEM_ERRORS[i], A)


# ----------------------------------------------------------------- index_put / select

def test_index_put():
    check(lambda L, x, v: x.index_put((I(L, [0, 2, 0]),), v[:3], accumulate=True), A,
          randn(3, 4, seed=3))
    check(lambda L, x, v: L.index_put(x, (I(L, [0, 2]), I(L, [1, 1])), v[0, :2]), A,
          randn(3, 4, seed=3))
    check(lambda L, x, v: x.index_put((x > 0,), v[0, 0]), A, randn(3, 4, seed=3))
    check(lambda L, x, v: (x * 1).index_put_((I(L, [1, 1]),), v[:2], True), A,
          randn(3, 4, seed=3))
    check(lambda L, x, v: x.bfloat16().index_put((I(L, [1, 1]),), v[:2].bfloat16(), True), A,
          randn(3, 4, seed=3))
    gradcheck(lambda L, x, v: x.index_put((L.tensor([1, 1]),), v, True), randn(3, 4),
              randn(2, 4))
    gradcheck(lambda L, x, v: x.index_put((L.tensor([0, 2]), L.tensor([1, 1])), v), randn(3, 4),
              randn(2))


def test_index_put_errors():
    check_error(lambda L, x: x.index_put_((I(L, [0]),), L.ones(4, dtype=L.float64)), A)
    check_error(lambda L, x: x.index_put_((I(L, [5]),), L.ones(4)), A)
    check_error(lambda L, x: x.index_put_((I(L, [0, 1]),), L.ones(3, 4)), A)
    check_error(lambda L, x: x.index_put_((L.tensor([0.0]),), L.ones(4)), A)


INDEX_OPS = [
    ("gather", lambda L, x: x.gather(1, I(L, [[0, 0], [3, 1], [2, 2]])), A),
    ("gather_dim0", lambda L, x: L.gather(x, 0, I(L, [[2, 1, 0, 0]])), A),
    ("gather_neg_dim", lambda L, x: L.gather(x, -1, I(L, [[[1], [0], [3]]])), B),
    ("gather_small", lambda L, x: x.gather(0, I(L, [[1]])), A),
    ("gather_0d", lambda L, x: x.gather(0, I(L, 0)), S0),
    ("gather_empty", lambda L, x: x.gather(1, L.zeros(3, 0, dtype=L.int64)), A),
    ("gather_nc", lambda L, x: x.gather(1, I(L, [[0, 0], [3, 1], [2, 2]])), NC(A)),
    ("scatter_src", lambda L, x, s: x.scatter(1, I(L, [[0, 1], [3, 1], [2, 0]]), s), A,
     randn(3, 2, seed=4)),
    ("scatter_value", lambda L, x: L.scatter(x, 0, I(L, [[0, 1, 2, 1]]), 9.0), A),
    ("scatter_add", lambda L, x, s: x.scatter_add(0, I(L, [[0, 0, 2, 2], [0, 0, 2, 1]]), s), A,
     randn(2, 4, seed=4)),
    ("scatter_add_neg", lambda L, x, s: L.scatter_add(x, -1, I(L, [[0, 0], [1, 1], [3, 3]]), s),
     A, randn(3, 2, seed=4)),
    ("scatter_add_", lambda L, x, s: (x * 1).scatter_add_(1, I(L, [[0, 0], [1, 1], [3, 3]]), s),
     A, randn(3, 2, seed=4)),
    ("scatter_", lambda L, x: (x * 1).scatter_(1, I(L, [[0], [1], [3]]), 2.0), A),
    ("index_select", lambda L, x: x.index_select(1, I(L, [3, 0, 3])), A),
    ("index_select_int32", lambda L, x: L.index_select(x, 0, I(L, [2, 2], L.int32)), A),
    ("index_select_0d_idx", lambda L, x: L.index_select(x, -1, I(L, 1)), A),
    ("index_select_0d", lambda L, x: L.index_select(x, 0, I(L, [0])), S0),
    ("index_select_empty", lambda L, x: L.index_select(x, 0, I(L, [])), A),
    ("index_select_nc", lambda L, x: L.index_select(x, 1, I(L, [1, 1])), NC(A)),
    ("index_add", lambda L, x, s: x.index_add(0, I(L, [0, 0]), s), A, randn(2, 4, seed=4)),
    ("index_add_alpha", lambda L, x, s: L.index_add(x, 1, I(L, [3, 1]), s, alpha=2), A,
     randn(3, 2, seed=4)),
    ("index_fill", lambda L, x: x.index_fill(1, I(L, [0, 2]), -1.0), A),
    ("index_fill_", lambda L, x: (x * 1).index_fill_(0, I(L, [1]), 5), A),
    ("take", lambda L, x: L.take(x, I(L, [[0, 11], [5, 5]])), A),
    ("take_nc", lambda L, x: x.take(I(L, [1, 2])), NC(A)),
    ("gather_int", lambda L, x: x.long().gather(1, I(L, [[1], [2], [0]])), A),
    ("scatter_half", lambda L, x: x.half().scatter(1, I(L, [[1], [2], [0]]), 1.0), A),
]


@pytest.mark.parametrize("case", INDEX_OPS, ids=[c[0] for c in INDEX_OPS])
def test_index_ops(case):
    check(case[1], *case[2:])


@pytest.mark.parametrize("fn", [
    lambda L, x: x.gather(1, L.tensor([[0, 0], [3, 1], [2, 2]])),
    lambda L, x: x.scatter(1, L.tensor([[0], [3], [1]]), x[:, :1] * 2),
    lambda L, x: x.scatter_add(0, L.tensor([[0, 0, 2, 2]]), x[:1] * 2),
    lambda L, x: x.index_select(0, L.tensor([2, 2, 0])),
    lambda L, x: x.index_add(1, L.tensor([0, 0]), x[:, :2] * 3),
    lambda L, x: x.index_fill(1, L.tensor([1]), 0.0),
    lambda L, x: x.masked_fill(x > 0, 0.0),
    lambda L, x: x.masked_select(x > 0),
    lambda L, x: x.masked_scatter(x > 0, x * 2),
    lambda L, x: L.where(x > 0, x, x * x),
])
def test_gradcheck_index_ops(fn):
    gradcheck(fn, randn(3, 4, dtype=np.float64))


INDEX_OP_ERRORS = [
    lambda L, x: x.gather(0, I(L, [[5]])),
    lambda L, x: x.gather(0, I(L, [[-1]])),
    lambda L, x: x.gather(0, I(L, [[0]], L.int16)),
    lambda L, x: x.gather(0, I(L, [0])),
    lambda L, x: x.gather(0, I(L, [[0, 0, 0, 0, 0]])),
    lambda L, x: x.gather(2, I(L, [[0]])),
    lambda L, x: x.gather(0, L.tensor([[0.0]])),
    lambda L, x: x.scatter(0, I(L, [[5]]), 1.0),
    lambda L, x: x.scatter(0, I(L, [[0]]), L.ones(1, 1, dtype=L.float64)),
    lambda L, x: x.scatter(0, I(L, [[0, 1, 0]]), L.ones(2, 2)),
    lambda L, x: x.scatter(0, I(L, [0, 1]), 1.0),
    lambda L, x: x.scatter(0, I(L, [[0]], L.uint8), 1.0),
    lambda L, x: x.scatter(0, I(L, [[0]]), 1.0, reduce="mean"),
    lambda L, x: x.scatter_add(0, I(L, [[0]]), L.ones(1, 1, dtype=L.float64)),
    lambda L, x: x.index_select(0, I(L, [5])),
    lambda L, x: x.index_select(0, I(L, [[0]])),
    lambda L, x: x.index_select(0, L.tensor([0.0])),
    lambda L, x: x.index_select(2, I(L, [0])),
    lambda L, x: x.index_add(1, I(L, [0]), L.ones(3, 2)),
    lambda L, x: x.index_add(1, I(L, [0]), L.ones(3, 1, dtype=L.float64)),
    lambda L, x: x.index_fill(1, I(L, [5]), 1.0),
    lambda L, x: x.index_fill(1, I(L, [0], L.int32), 1.0),
    lambda L, x: x.take(I(L, [12])),
    lambda L, x: x.masked_fill(I(L, [1, 0, 1, 0]), 1.0),
    lambda L, x: x.masked_fill(x > 0, L.ones(2)),
    lambda L, x: x.masked_fill(L.ones(2, dtype=L.bool), 1.0),
    lambda L, x: x.masked_fill_(L.ones(2, 3, 4, dtype=L.bool), 1.0),
    lambda L, x: x.masked_select(I(L, [1, 0, 1, 0])),
    lambda L, x: L.where(x, x, x),
    lambda L, x: L.where(x > 0, x, L.ones(2)),
]


@pytest.mark.parametrize("i", range(len(INDEX_OP_ERRORS)))
def test_index_op_errors(i):
    check_error(INDEX_OP_ERRORS[i], A)


def test_index_op_messages():
    assert check_error(lambda L, x: x.gather(0, I(L, [[5]])), A) == \
        "index 5 is out of bounds for dimension 0 with size 3"
    assert check_error(lambda L, x: x.index_select(0, I(L, [5])), A) == \
        "index out of range in self"
    assert check_error(lambda L, x: x.gather(0, I(L, [[0]], L.int16)), A) == \
        "gather(): Expected dtype int32/int64 for index"


# ----------------------------------------------------------------------------- masks

MASKS = [
    ("masked_fill", lambda L, x: x.masked_fill(x > 0, -1.0), A),
    ("masked_fill_bcast_mask", lambda L, x: x.masked_fill(L.tensor([True, False, True, False]),
                                                          2), A),
    ("masked_fill_bcast_input", lambda L, x: L.masked_fill(x[0], (x > 0), 2.0), A),
    ("masked_fill_tensor_value", lambda L, x, v: x.masked_fill(x > 0, v), A, S0),
    ("masked_fill_", lambda L, x: (x * 1).masked_fill_(x < 0, 0.5), A),
    ("masked_fill_int", lambda L, x: x.long().masked_fill(x > 0, 2.7), A),
    ("masked_fill_half", lambda L, x: x.half().masked_fill(x > 0, 1e3), A),
    ("masked_fill_bool", lambda L, x: (x > 0).masked_fill(x > 1, False), A),
    ("masked_fill_0d", lambda L, x: x.masked_fill(x > 2, 0.0), S0),
    ("masked_fill_empty", lambda L, x: x.masked_fill(x > 0, 0.0), E0),
    ("masked_fill_nc", lambda L, x: x.masked_fill(x > 0, 0.0), NC(A)),
    ("masked_select", lambda L, x: x.masked_select(x > 0), A),
    ("masked_select_bcast", lambda L, x: L.masked_select(x[0], x > 0), A),
    ("masked_select_empty", lambda L, x: x.masked_select(x > 0), E0),
    ("masked_scatter", lambda L, x, s: x.masked_scatter(x > 0, s), A, randn(3, 5, seed=4)),
    ("masked_scatter_", lambda L, x, s: (x * 1).masked_scatter_(x < 0, s), A,
     randn(12, seed=4)),
    ("where", lambda L, x, y: L.where(x > y, x, y), A, randn(3, 4, seed=9)),
    ("where_bcast", lambda L, x, y: L.where(x > 0, x, y[0]), A, randn(3, 4, seed=9)),
    ("where_scalar", lambda L, x: L.where(x > 0, x, 0.0), A),
    ("where_scalars", lambda L, x: L.where(x > 0, 1.0, 0), A),
    ("where_int_scalars", lambda L, x: L.where(x > 0, 1, 0), A),
    ("where_promote", lambda L, x, y: L.where(x > 0, x.long(), y.double()), A, A),
    ("where_half", lambda L, x, y: L.where(x > 0, x.half(), y.half()), A, A),
    ("where_0d", lambda L, x, y: L.where(x > 0, x, y), S0, S0),
    ("where_0d_promote", lambda L, x, y: L.where(y[0] > 0, x.double(), y), S0, A),
    ("where_method", lambda L, x, y: x.where(x > 0, y), A, A),
    ("where_nc", lambda L, x, y: L.where(x > 0, x, y), NC(A), A),
    ("where_empty", lambda L, x: L.where(x > 0, x, 1.0), E0),
]


@pytest.mark.parametrize("case", MASKS, ids=[c[0] for c in MASKS])
def test_masks(case):
    check(case[1], *case[2:])


def test_setitem_dtype_rules():
    check(_set(lambda L, y: 2, lambda L, v: v[:1].double()), A[0], A[1])
    check_error(_set(lambda L, y: I(L, [2]), lambda L, v: v[:1].double()), A[0], A[1])


def test_scatter_index_smaller_than_src():
    fn = lambda L, x, s: x.scatter(1, I(L, [[0, 1], [3, 1], [2, 0]]), s)
    check(fn, A, randn(3, 3, seed=4), grad=False)
    gradcheck(fn, randn(3, 4), randn(3, 3))     # torch has no backward for this case


def test_scatter_reduce_legacy():
    fn = lambda L, x, s: x.scatter(0, I(L, [[0, 0, 0, 0], [0, 1, 0, 1]]), s, reduce="add")
    check(fn, A, randn(2, 4, seed=4), grad=False)
    fn = lambda L, x, s: x.scatter(0, I(L, [[0, 0, 0, 0], [2, 1, 0, 1]]), s, reduce="multiply")
    check(fn, A, randn(2, 4, seed=4), grad=False)
    for L in (ember, torch):
        x = L.ones(3, 4, requires_grad=True)
        y = x.scatter(0, I(L, [[0, 1]]), 2.0, reduce="add")
        with pytest.raises(RuntimeError):
            y.sum().backward()


def test_where_uint8_condition_warns():
    with pytest.warns(UserWarning):
        r = ember.where(ember.tensor([1, 0], dtype=ember.uint8), ember.ones(2), ember.zeros(2))
    assert r.tolist() == [1.0, 0.0]


NONZERO = [
    ("nonzero", lambda L, x: L.nonzero(x > 0), A),
    ("nonzero_tuple", lambda L, x: L.nonzero(x > 0, as_tuple=True), A),
    ("nonzero_method", lambda L, x: x.nonzero(), B),
    ("nonzero_0d", lambda L, x: L.nonzero(x), S0),
    ("nonzero_0d_tuple", lambda L, x: x.nonzero(as_tuple=True), S0),
    ("nonzero_empty", lambda L, x: L.nonzero(x), E0),
    ("where_1arg", lambda L, x: L.where(x > 0), B),
    ("argwhere", lambda L, x: L.argwhere(x > 0), A),
]


@pytest.mark.parametrize("case", NONZERO, ids=[c[0] for c in NONZERO])
def test_nonzero(case):
    check(case[1], *case[2:], grad=False)
