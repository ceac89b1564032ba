"""Index reductions and copies against PyTorch (ember/ops/index_ops.py), plus parity
checks of the indexing ops they build on (index_add alpha, index_fill with a tensor
value, masked_scatter, index_put_ accumulate with duplicate indices)."""
import warnings

import numpy as np
import pytest

from oracle import NC, check, randn, torch
from opinfo import OpInfo, S, E, make_tests, F16, F32, F64, I64
import ember
from ember.ops import REGISTRY

warnings.filterwarnings("ignore", message="index_reduce")


def ix(*v):
    """An int64 index array: ix(1, 2) is 1-d, ix([[...]]) or ix([...], [...]) 2-d."""
    if len(v) == 1 and isinstance(v[0], list):
        v = v[0]
    return np.array(v, dtype=np.int64)


def M(L, name):
    """A method call: M(L, 'index_reduce')(x, *args) = x.index_reduce(*args)."""
    return lambda x, *a, **k: getattr(x, name)(*a, **k)


A = randn(3, 4)
ZERO_D = np.array(1.5, np.float32)
WITH_ZEROS = np.array([[0., 2, 3, 0], [1, 0, 2, 2], [4, 5, 0, 1]], np.float32)
# zeros (one per slot) and no ties with each other or with A
SRC_Z = np.array([[0., 1.125, 2.25, 3.375], [0.5, 0, 1.625, 2.75], [1.125, 2.5, 0, 4.125]],
                 np.float32)
NAN = np.array([[np.nan, 1, 2, np.inf], [0, -np.inf, 1, 3], [2, 2, 2, 2]], np.float32)

# ------------------------------------------------------------------ take_along_dim

TAKE_ALONG = OpInfo("take_along_dim", [
    S(A, ix([[0, 2, 1, 0]]), 0),                      # index broadcast over dim 0
    S(A, ix([[3, 3], [0, 1], [2, 2]]), -1),            # negative dim, duplicates
    S(A, ix(5, 0, 11, 5)),                             # dim=None: the flattened input
    S(ZERO_D, ix(0, 0)),
    S(randn(2, 1, 4), ix([[[1]], [[0]]]).reshape(2, 1, 1).repeat(3, 1), 2),  # broadcasts both
    S(randn(0, 4), np.zeros((0, 1), np.int64), 1),
    S(A, np.zeros((3, 0), np.int64), 1),
    S(NC(randn(4, 3)), ix([[2], [0], [1], [1]]), 1),
    S(NAN, ix([[0, 1, 2, 1]]), 0, grad=False),
], dtypes=(F32, F64, F16, I64), errors=[
    E(A, ix([[0, 1]]).astype(np.float32), 0),         # float index
    E(A, ix([[0, 1]]).astype(np.int32), 0),           # int32 index
    E(A, ix(0, 1), 0),                                # rank mismatch
    E(A, ix([[0, 1]]), 2),                            # dim out of range
    E(A, np.zeros((2, 3), np.int64), 0),              # shape mismatch
    E(A, ix(50)),                                     # out of range (dim=None)
    E(NC(randn(4, 3)), ix(1, 2)),                     # dim=None views a non-contiguous input
    E(ZERO_D, np.array(0), 0),                        # a dim of a 0-d input
])

# ---------------------------------------------------------------------- index_copy

INDEX_COPY = [
    OpInfo("Tensor.index_copy", [
        S(A, 1, ix(3, 0), randn(3, 2)),
        S(randn(5, 2), -2, ix(4, 1, 2), randn(3, 2, seed=1)),
        S(randn(3, 0), 0, ix(1), randn(1, 0)),
        S(A, 0, np.zeros(0, np.int64), randn(0, 4)),
        S(ZERO_D, 0, ix(0), np.array(2.5, np.float32)),
        S(randn(3), 0, np.array(1), np.array(2.5, np.float32)),   # 0-d index and source
        S(NC(randn(4, 3)), 0, ix(1, 3), NC(randn(2, 3, seed=2))),
        S(NAN, 1, ix(0, 2), randn(3, 2), grad=False),
        S(randn(4), 0, ix(1, 1, 2), randn(3), grad=False),   # duplicates: the last write wins
    ], dtypes=(F32, F64, F16, I64, np.bool_), errors=[
        E(A, 0, ix(0, 2).astype(np.float32), randn(2, 4)),
        E(A, 0, ix(0, 2).astype(np.int32), randn(2, 4)),
        E(A, 0, ix(0, 3), randn(2, 4)),                   # out of range
        E(A, 0, ix(0, -1), randn(2, 4)),                  # negative indices are refused
        E(A, 0, ix(0, 2), randn(3, 4)),                   # count != source.size(dim)
        E(A, 0, ix(0, 2), randn(2, 5)),                   # slice shapes differ
        E(A, 0, ix(0, 2), randn(2, 4).astype(np.float64)),  # dtype mismatch
        E(A, 2, ix(0, 2), randn(2, 4)),                   # dim out of range
        E(A, 0, ix([[0, 2]]), randn(2, 4)),               # 2-d index
    ]),
    OpInfo("index_copy-inplace", [S(A, 1, ix(3, 0), randn(3, 2)),
                                  S(NC(randn(4, 3)), 0, ix(1, 3), randn(2, 3))],
           fn=lambda L, x, *a: x.clone().index_copy_(*a), dtypes=(F32, F64)),
    OpInfo("index_copy-out", [S(A, 1, ix(3, 0), randn(3, 2))], grad=False,
           fn=lambda L, x, *a: L.index_copy(x, *a, out=L.empty(0, dtype=x.dtype))),
]


# -------------------------------------------------------------------- index_reduce

def _index_reduce(reduce):
    def fn(L, x, *a, inplace=False, **kw):
        if inplace:
            return x.clone().index_reduce_(*a, reduce, **kw)
        return x.index_reduce(*a, reduce, **kw)
    return fn


def _ir_samples(reduce):
    src = WITH_ZEROS if reduce == "prod" else randn(5, 4, seed=3)
    return [
        S(A, 0, ix(0, 2, 0, 1, 0), randn(5, 4, seed=3)),
        S(A, 0, ix(0, 2, 0, 1, 0), randn(5, 4, seed=3), include_self=False),
        S(A, -1, ix(1, 1, 3).astype(np.int32), randn(3, 3, seed=4)),
        S(WITH_ZEROS, 1, ix(0, 0, 2, 3), src[:3] if reduce == "prod" else randn(3, 4)),
        S(WITH_ZEROS if reduce == "prod" else A, 0, ix(1, 1, 2), SRC_Z, include_self=False),
        S(A, 0, np.zeros(0, np.int64), randn(0, 4)),
        S(ZERO_D, 0, ix(0), np.array(2.5, np.float32)),
        S(ZERO_D, 0, ix(0), np.array(2.5, np.float32), include_self=False),
        S(NC(randn(4, 3)), 1, ix(2, 0, 2), NC(randn(4, 3, seed=5)), inplace=True),
        S(NAN, 0, ix(2, 2), NAN[:2] * 0.5, grad=False),
    ]


INDEX_REDUCE = [
    OpInfo(f"index_reduce-{r}", _ir_samples(r), fn=_index_reduce(r), dtypes=(F32, F64, I64),
           errors=[
               E(A, 0, ix(0, 2).astype(np.float32), randn(2, 4)),
               E(A, 0, ix(0, 3), randn(2, 4)),
               E(A, 0, ix(0, -1), randn(2, 4)),
               E(A, 0, ix(0, 2), randn(3, 4)),
               E(A, 0, ix(0, 2), randn(2, 5)),
               E(A, 0, ix(0, 2), randn(2, 4).astype(np.float64)),
               E(A, 2, ix(0, 2), randn(2, 4)),
               E(A, 0, ix([[0, 2]]), randn(2, 4)),
           ] if r == "prod" else [])
    for r in ("prod", "mean", "amax", "amin")
]
INDEX_REDUCE.append(OpInfo("index_reduce-bad-reduce", [], errors=[
    E(A, 0, ix(0, 2), randn(2, 4))], fn=lambda L, x, *a: x.index_reduce(*a, "sum")))


# ------------------------------------------------------------------ scatter_reduce

def _scatter_reduce(reduce):
    def fn(L, x, *a, inplace=False, **kw):
        if inplace:
            return x.clone().scatter_reduce_(*a, reduce, **kw)
        return L.scatter_reduce(x, *a, reduce, **kw)
    return fn


SR_INDEX = ix([1, 0, 1, 3], [2, 2, 2, 0], [0, 3, 3, 3])


def _sr_samples(reduce):
    src = WITH_ZEROS if reduce == "prod" else randn(3, 4, seed=6)
    return [
        S(A, 1, SR_INDEX, src),
        S(A, 1, SR_INDEX, src, include_self=False),
        S(WITH_ZEROS, -2, ix([0, 0, 1, 1], [0, 2, 1, 1]), WITH_ZEROS[::-1][:2] + 0.25),
        S(WITH_ZEROS, 0, ix([0, 0, 1, 1], [0, 2, 1, 1]), WITH_ZEROS[1:] * 2 + 0.5,
          include_self=False),
        S(A, 0, ix([0, 1], [0, 2]), randn(3, 5), grad=False),  # src larger than index:
        # PyTorch's backward refuses it (shape error); ember pads the gradient instead
        S(A, 1, np.zeros((3, 0), np.int64), randn(3, 4), grad=False),   # (the same)
        S(ZERO_D, 0, np.array(0), np.array(2.5, np.float32)),
        S(ZERO_D, 0, ix(0, 0), np.array([2.5, 3.], np.float32), include_self=False),
        S(NC(randn(4, 3)), 0, ix([1, 0], [1, 1], [3, 2]), NC(randn(3, 2, seed=7)),
          inplace=True),
        S(randn(2, 3), 1, ix([0, 0, 2], [1, 1, 1]).astype(np.int32), randn(2, 3, seed=8)),
        S(NAN, 1, ix([0, 0], [3, 3], [1, 1]), NAN[:, :2] * 0.5, grad=False),
    ]


SCATTER_REDUCE = [
    OpInfo(f"scatter_reduce-{r}", _sr_samples(r), fn=_scatter_reduce(r),
           dtypes=(F32, F64, I64),
           errors=[
               E(A, 0, ix([0, 1]).astype(np.float32), randn(1, 2)),
               E(A, 0, ix([0], [3]), randn(2, 4)),            # out of range
               E(A, 0, ix([0], [-1]), randn(2, 4)),           # negative
               E(A, 0, ix(0, 1), randn(2, 4)),                 # rank mismatch
               E(A, 0, np.zeros((2, 5), np.int64), randn(2, 4)),  # index larger than src
               E(A, 0, ix([0], [1]), randn(2, 4).astype(np.float64)),
               E(A, 3, ix([0], [1]), randn(2, 4)),
           ] if r == "sum" else [])
    for r in ("sum", "prod", "mean", "amax", "amin")
]
SCATTER_REDUCE.append(OpInfo("scatter_reduce-bad-reduce", [], errors=[
    E(A, 0, ix([0], [1]), randn(2, 4))], fn=lambda L, x, *a: x.scatter_reduce(*a, "add")))

# ------------------------------------------- existing indexing ops: parity checks

PARITY = [
    OpInfo("index_add-alpha", [
        S(A, 0, ix(0, 2, 0, 0), randn(4, 4), alpha=2.5),
        S(A, -1, ix(3, 3), randn(3, 2), alpha=-1),
        S(NC(randn(4, 3)), 1, ix(0, 0, 2), NC(randn(4, 3, seed=1)), alpha=0.5),
        S(ZERO_D, 0, ix(0), np.array(2.0, np.float32), alpha=3),
    ], fn=lambda L, x, *a, **k: L.index_add(x, *a, **k), dtypes=(F32, F64)),
    OpInfo("index_add-int-alpha", [S(A, 0, ix(0, 2, 0), randn(3, 4), alpha=3)],
           fn=lambda L, x, *a, **k: L.index_add(x, *a, **k), dtypes=(I64,)),
    OpInfo("index_fill-tensor-value", [
        S(A, 1, ix(0, 3, 3), np.array(2.5, np.float32)),
        S(NC(randn(4, 3)), -2, ix(1, 0), np.array(-1.0, np.float32)),
    ], fn=lambda L, x, d, i, v: x.index_fill(d, i, v), dtypes=(F32, F64)),
    OpInfo("masked_scatter", [
        S(A, A > 0, randn(12, seed=9)),
        S(A, (A > 0)[0], randn(20, seed=9)),            # broadcast mask, longer source
        S(NC(randn(4, 3)), np.ones((4, 3), bool), NC(randn(4, 3, seed=2))),
    ], fn=lambda L, x, m, s: x.masked_scatter(m, s), dtypes=(F32, F64)),
    OpInfo("index_put_-accumulate-duplicates", [
        S(A, ix(0, 0, 2, 0), randn(4, 4)),
        S(A, ix(1, 1), randn(4, seed=1)),               # broadcast value
        S(randn(5), ix(4, 4, 4, -1), randn(4, seed=3)),  # negative duplicate of 4
    ], fn=lambda L, x, i, v: x.clone().index_put_((i,), v, accumulate=True),
        dtypes=(F32, F64, I64)),
    OpInfo("index_put-accumulate-2d", [
        S(A, ix(0, 0, 2), ix(1, 1, 3), randn(3, seed=4)),
    ], fn=lambda L, x, i, j, v: x.index_put((i, j), v, accumulate=True), dtypes=(F32, F64)),
]


# --------------------------------------------------------- narrow_copy and *_copy

COPIES = [
    OpInfo("narrow_copy", [S(A, 1, 1, 2), S(A, -1, -3, 2), S(NC(randn(4, 3)), 0, 1, 0),
                           S(randn(0, 3), 1, 0, 3)], dtypes=(F32, F64, I64),
           errors=[E(A, 0, 2, 2), E(ZERO_D, 0, 0, 1), E(A, 0, 5, 0), E(A, 2, 0, 1)]),
    OpInfo("Tensor.narrow_copy", [S(A, 0, 1, 2)]),
    OpInfo("view_copy", [S(A, (4, 3)), S(A, (-1,)), S(ZERO_D, (1, 1)),
                          S(NC(randn(4, 3)), (-1,))],        # view_copy reshapes
           errors=[E(A, (5, 3))]),
    OpInfo("view_copy-dtype", [S(A, 0)], grad=False,
           fn=lambda L, x, _: L.view_copy(x, L.int32)),
    OpInfo("as_strided_copy", [S(A, (2, 2), (1, 2)), S(A, (3,), (4,), 1)],
           errors=[E(A, (4, 4), (4, 1))]),
    OpInfo("diagonal_copy", [S(A), S(A, 1), S(randn(2, 3, 4), -1, 0, 2), S(NC(randn(4, 3)))],
           errors=[E(A, 0, 0, 0)]),
    OpInfo("expand_copy", [S(randn(3, 1), (3, 4)), S(ZERO_D, (2, 2)), S(randn(1, 4), (-1, 4))],
           errors=[E(A, (4, 4))]),
    OpInfo("permute_copy", [S(randn(2, 3, 4), (2, 0, 1)), S(A, (-1, 0))],
           errors=[E(A, (0, 0))]),
    OpInfo("select_copy", [S(A, 0, 2), S(A, -1, -1), S(NC(randn(4, 3)), 1, 0)],
           errors=[E(A, 0, 3), E(ZERO_D, 0, 0)]),
    OpInfo("slice_copy", [S(A, 1, 1, 3), S(A, 0, None, None, 2), S(A, -1, -3), S(A)]),
    OpInfo("split_copy", [S(A, 2, 1), S(A, 1), S(randn(5, 2), 2, -2)]),
    OpInfo("split_with_sizes_copy", [S(A, [1, 3], 1), S(A, [3, 0])],
           errors=[E(A, [1, 1], 1)]),
    OpInfo("squeeze_copy", [S(randn(1, 3, 1)), S(randn(1, 3, 1), 0), S(randn(1, 3, 1), (0, 2))]),
    OpInfo("t_copy", [S(A), S(randn(3)), S(ZERO_D)], errors=[E(randn(2, 2, 2))]),
    OpInfo("transpose_copy", [S(randn(2, 3, 4), 0, -1), S(NC(randn(4, 3)), 0, 1)],
           errors=[E(A, 0, 2)]),
    OpInfo("unbind_copy", [S(A), S(A, 1), S(randn(2, 0), 1)]),
    OpInfo("unfold_copy", [S(randn(7), 0, 3, 2), S(A, 1, 2, 1)], errors=[E(A, 1, 5, 1)]),
    OpInfo("unsqueeze_copy", [S(A, 0), S(A, -1), S(ZERO_D, 0)], errors=[E(A, 3)]),
    OpInfo("detach_copy", [S(A)], grad=False),
    OpInfo("alias_copy", [S(A), S(NC(randn(4, 3)))]),
    OpInfo("view_as_real_copy", [S((A + 1j * A).astype(np.complex64))], dtypes=(None,),
           grad=False),
    OpInfo("view_as_complex_copy", [S(randn(3, 2))], dtypes=(F32, F64), grad=False,
           errors=[E(randn(3, 3))]),
]

# ------------------------------------------------------- kron / block_diag / trace

KRON = OpInfo("kron", [
    S(randn(2, 2), randn(3, 2, seed=1)),
    S(randn(3), randn(2, 2, seed=1)),                 # ranks differ
    S(ZERO_D, randn(2, 3)),
    S(randn(0, 2), randn(2, 3)),
    S(randn(2, 3), NC(randn(4, 3, seed=2)).arr.T.copy()),
], dtypes=(F32, F64, I64), errors=[E(A, 3)])

BLOCK_DIAG = OpInfo("block_diag", [
    S(ZERO_D, randn(3), randn(2, 2, seed=1)),
    S(A, randn(0, 3), randn(2, 0, seed=1)),
    S(A, ix(1, 2)),                                   # int and float: promoted
    S(NC(randn(4, 3)), A),
    S(),
], fn=lambda L, *ts: L.block_diag(*ts), dtypes=(F32, F64, I64),
    errors=[E(A, randn(1, 1, 1)), E(A, 3)])

TRACE = [
    OpInfo("trace", [S(A), S(randn(4, 3)), S(NC(randn(4, 3))), S(randn(0, 3)),
                       S(NAN, grad=False)],
           dtypes=(F32, F64, F16, I64, np.int32, np.uint8),
           errors=[E(randn(2, 2, 2)), E(randn(2)), E(np.ones((2, 2), bool))]),
    OpInfo("Tensor.trace", [S(A)]),
]

# ----------------------------------------------------------------------------- cdist

X1, X2 = randn(4, 3), randn(5, 3, seed=1)
CDIST = OpInfo("cdist", [
    S(X1, X2),
    S(X1, X2, p=1.0),
    S(X1, X2, p=0.0),
    S(X1, X2, p=3.0),
    S(X1, X2, p=0.5),
    S(X1, X2, p=float("inf")),
    S(randn(2, 1, 4, 3), randn(3, 5, 3, seed=1), p=1.5),          # batch broadcast
    S(randn(30, 3), X2),                                            # > 25 rows: the mm path
    S(X1, X2, compute_mode="use_mm_for_euclid_dist"),
    S(randn(30, 3), X2, compute_mode="donot_use_mm_for_euclid_dist"),
    S(np.zeros((0, 3), np.float32), X2),
    S(X1, X2[:0]),
    S(NC(randn(4, 3)), NC(randn(5, 3, seed=2))),
    S(np.array([[0., 1.], [2., 2.]], np.float32), np.array([[0., 1.]], np.float32), p=1.0,
      grad=False),                                                  # a zero distance
], dtypes=(F32, F64), atol=1e-4, errors=[
    E(randn(3), randn(3)),
    E(X1, randn(5, 4)),
    E(X1, X2, p=-1.0),
    E(X1.astype(np.int64), X2.astype(np.int64)),
    E(X1, X2, compute_mode="x"),
    E(randn(2, 2, 3), randn(3, 2, 3)),
    E(X1, X2.astype(np.float64)),
    E(X1.astype(np.float16), X2.astype(np.float16)),   # the direct kernel has no half
])

OPS = ([TAKE_ALONG] + INDEX_COPY + INDEX_REDUCE + SCATTER_REDUCE + PARITY + COPIES
       + [KRON, BLOCK_DIAG, CDIST] + TRACE)
test_forward, test_gradcheck, test_errors = make_tests(OPS)


# ------------------------------------------------------------------ extra checks

def test_kron_non_contiguous():
    """PyTorch's kron views its inputs and raises for most non-contiguous ones; ember
    reshapes (copying when needed) and gives the contiguous input's result."""
    a = ember.randn(3, 4).t()
    b = ember.randn(2, 1, 2)
    np.testing.assert_allclose(ember.kron(a, b).numpy(), ember.kron(a.contiguous(), b).numpy())


def test_cdist_zero_distance_gradient():
    """p=2 at a zero distance: PyTorch's backward gives 0 there, not nan."""
    a = np.array([[0., 1.], [2., 2.]])
    check(lambda L, x, y: L.cdist(x, y), a, a[:1].copy())


def test_index_copy_duplicate_grad_like_torch():
    check(lambda L, x, s: x.index_copy(0, L.tensor([1, 1, 2]), s), randn(4), randn(3))


def test_index_reduce_warns_beta_once():
    import ember.ops.index_ops as m
    m._warned_beta.clear()
    x = ember.ones(3)
    with pytest.warns(UserWarning, match="beta"):
        x.index_reduce(0, ember.tensor([0]), ember.ones(1), "prod")


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_double_backward(reduce):
    from oracle import gradcheck as _gc
    src = np.array([[1.5, 2.0, 0.5], [0.7, 1.2, 3.0]])
    x = np.array([[1.0, 0.8, 2.2], [0.3, 1.7, 0.9]])
    i = ix([0, 0, 2], [1, 1, 1])
    fn = lambda L, a, s: L.scatter_reduce(a, 1, i_t(L), s, reduce)   # noqa: E731
    i_t = lambda L: L.from_numpy(i.copy())                            # noqa: E731
    _gc(fn, x, src)
    xs = [ember.from_numpy(v.copy()).requires_grad_(True) for v in (x, src)]
    assert ember.autograd.gradgradcheck(lambda a, s: fn(ember, a, s), xs)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce_double_backward(reduce):
    x = ember.from_numpy(np.array([[1.0, 0.8, 2.2], [0.3, 1.7, 0.9]])).requires_grad_(True)
    s = ember.from_numpy(np.array([[1.5, 2.0, 0.5], [0.7, 1.2, 3.0], [0.2, 0.4, 0.6]]))
    s.requires_grad_(True)
    i = ember.tensor([1, 0, 1])
    fn = lambda a, b: a.index_reduce(0, i, b, reduce, include_self=False)   # noqa: E731
    assert ember.autograd.gradcheck(fn, [x, s])
    assert ember.autograd.gradgradcheck(fn, [x, s])


def test_nondeterministic_tags():
    """PyTorch's determinism docs list index_copy, index_put(accumulate), index_add and
    scatter_reduce; index_reduce's CUDA kernel alerts as well."""
    for name in ("index_copy", "index_reduce", "scatter_reduce", "index_add", "index_put"):
        assert "nondeterministic" in REGISTRY[name].tags, name
    assert "nondeterministic" not in REGISTRY["cdist"].tags


def test_autocast_policies_match_torch_cpu():
    """cdist and trace run in float32 under cpu autocast; index_copy promotes."""
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    cases = [lambda L, x: L.cdist(x.bfloat16(), x.bfloat16()),
             lambda L, x: L.trace(x.bfloat16()),
             lambda L, x: x.index_copy(0, L.tensor([1]), x[:1].bfloat16()),
             lambda L, x: x.bfloat16().index_copy(0, L.tensor([1]), x[:1]),
             lambda L, x: L.cdist(x, x, compute_mode="use_mm_for_euclid_dist")]
    for fn in cases:
        got = []
        for L in (ember, torch):
            with L.autocast("cpu"):
                got.append(str(fn(L, L.from_numpy(a.copy())).dtype))
        assert got[0] == got[1]


def test_deterministic_mode_cpu_runs():
    """On cpu PyTorch (and ember) run these deterministically with the mode on."""
    prev = ember.are_deterministic_algorithms_enabled()
    ember.use_deterministic_algorithms(True)
    try:
        x = ember.zeros(3)
        x.index_copy(0, ember.tensor([1]), ember.ones(1))
        x.scatter_reduce(0, ember.tensor([0, 0]), ember.ones(2), "sum")
    finally:
        ember.use_deterministic_algorithms(prev)


# ------------------------------------------------------------- memory formats

X4 = randn(2, 3, 4, 5)
LAYOUTS = [
    ("clone_channels_last", lambda L, x: x.clone(memory_format=L.channels_last), X4),
    ("clone_contiguous", lambda L, x: x.permute(0, 2, 3, 1).clone(
        memory_format=L.contiguous_format), X4),
    ("clone_preserve_dense", lambda L, x: x.permute(0, 2, 3, 1).clone(
        memory_format=L.preserve_format), X4),
    ("clone_preserve_default", lambda L, x: x.permute(0, 2, 3, 1).clone(), X4),
    ("clone_preserve_strided", lambda L, x: x.permute(0, 2, 3, 1)[:, ::2].clone(), X4),
    ("contiguous_channels_last", lambda L, x: x.contiguous(memory_format=L.channels_last), X4),
    ("contiguous_channels_last_3d", lambda L, x: x[..., None].contiguous(
        memory_format=L.channels_last_3d), X4),
    ("clone_channels_last_nc", lambda L, x: x.transpose(0, 3).clone(
        memory_format=L.channels_last), X4),
    ("channels_last_roundtrip", lambda L, x: x.contiguous(memory_format=L.channels_last)
     .contiguous(), X4),
]


@pytest.mark.parametrize("name,fn,x", LAYOUTS, ids=[n for n, _, _ in LAYOUTS])
def test_memory_format_strides(name, fn, x):
    e, t = check(fn, x)[0], fn(torch, torch.from_numpy(x.copy()))
    assert e.stride() == t.stride()
    assert e.is_contiguous() == t.is_contiguous()
    assert e.is_contiguous(memory_format=ember.channels_last) == \
        t.is_contiguous(memory_format=torch.channels_last)


def test_contiguous_channels_last_returns_self_when_laid_out():
    x = ember.randn(2, 3, 4, 5).contiguous(memory_format=ember.channels_last)
    assert x.contiguous(memory_format=ember.channels_last) is x


def test_memory_format_objects():
    assert repr(ember.channels_last) == "torch.channels_last"
    assert ember.contiguous_format is not ember.preserve_format


LAYOUT_ERRORS = [
    lambda L, x: x.clone(memory_format=L.channels_last),
    lambda L, x: x.contiguous(memory_format=L.channels_last),
    lambda L, x: x.t().contiguous(memory_format=L.preserve_format),
    lambda L, x: x.clone(memory_format=L.channels_last_3d),
]


@pytest.mark.parametrize("k", range(len(LAYOUT_ERRORS)))
def test_memory_format_errors(k):
    from oracle import check_error
    check_error(LAYOUT_ERRORS[k], A)
