"""Sorting and selection against PyTorch: sort/argsort/msort, topk, kthvalue, median,
nanmedian, mode, quantile/nanquantile, unique/unique_consecutive, searchsorted/bucketize.

Ties: ember sorts stably, so samples with ties ask PyTorch for stable=True; where
PyTorch's tie index comes from libstdc++ (see `KNOWN`) only values are compared.
"""
import numpy as np
import pytest

import ember
from oracle import NC, check, check_error, gradcheck, randn
from opinfo import OpInfo, S, E, make_tests, F16, F32, F64, I32, I64

torch = pytest.importorskip("torch")

nan = np.nan
X = randn(3, 5)                                           # distinct values
X3 = randn(2, 3, 4)
EVEN = randn(4)
TIES = np.array([[3, 1, 2, 1, 3], [2, 2, 0, 5, 2]], np.float32)
NANS = np.array([[2, nan, 1, nan, 0], [1, 2, 3, 4, 5]], np.float32)
ALL_NAN_ROW = np.array([[nan, nan, nan], [1, nan, 3]], np.float32)
EMPTY = randn(0, 3)
SCALAR = np.array(1.5, np.float32)
INTS = np.array([[3, -1, 3, 0], [7, 0, 7, 7]], np.int64)
BOOLS = np.array([True, False, True, True])
CPLX = (randn(4) + 1j).astype(np.complex64)
Q = np.array([0.15, 0.35, 0.85], np.float32)       # ranks off the integers (kinks)
HALVES = np.array([0.125, 0.375, 0.5], np.float32)   # ranks 0.5, 1.5, 2 of 5: nearest ties
SEQ = np.array([1.0, 2.0, 2.0, 4.0, 7.0], np.float32)
SEQ2 = np.array([[1.0, 3.0, 5.0], [0.0, 0.5, 0.75]], np.float32)
V = np.array([[0.0, 2.0, 3.5], [7.0, 9.0, nan]], np.float32)
V2 = np.array([[3.0, 0.0, 6.0, 5.0], [0.5, 1.0, -1.0, 0.6]], np.float32)
UNSORTED = np.array([4.0, 1.0, 7.0, 2.0, 2.0], np.float32)
SORTER = np.argsort(UNSORTED, kind="stable").astype(np.int64)

# PyTorch behaviour ember does not reproduce (the values agree; see ember/ops/sorting.py)
KNOWN = {
    "topk tie indices": "PyTorch orders tied topk elements by std::nth_element/partial_sort; "
                        "ember takes ties in index order",
    "mode index": "on rows longer than 16 PyTorch's mode index comes from std::sort's "
                  "unstable order; ember reports the last occurrence",
    "nanmedian all-NaN index": "PyTorch's index for an all-NaN row comes from "
                               "std::nth_element; ember reports the first NaN",
    "unique NaN inverse": "PyTorch numbers repeated NaNs in its sort's order; ember in "
                          "input order",
}


OPS = [
    OpInfo("sort", [S(X), S(X, 0), S(X, -1, True), S(NC(X), 0), S(X3, -2, descending=True),
                    S(EMPTY, 0), S(EMPTY, 1), S(SCALAR), S(SCALAR, 0),
                    S(TIES, stable=True, grad=False), S(TIES, dim=0, descending=True, stable=True, grad=False),
                    S(NANS, stable=True, grad=False),
                    S(NANS, descending=True, stable=True, grad=False)],
           dtypes=(F32, F64, F16),
           errors=[E(X, 2), E(X, -3), E(CPLX)]),
    OpInfo("Tensor.sort", [S(INTS, stable=True), S(INTS, dim=0, descending=True, stable=True),
                           S(BOOLS, stable=True), S(BOOLS, descending=True, stable=True),
                           S(INTS.astype(np.uint8), stable=True)], dtypes=(I64,)),
    OpInfo("argsort", [S(X), S(X, 0, True), S(NC(X), -1), S(EMPTY, 1), S(SCALAR),
                       S(TIES, stable=True), S(TIES, dim=1, descending=True, stable=True),
                       S(NANS, stable=True), S(INTS, stable=True)], grad=False,
           errors=[E(X, 3)]),
    OpInfo("msort", [S(X), S(NC(X)), S(X3), S(EMPTY), S(SCALAR)], dtypes=(F32, F64, I64)),
    OpInfo("topk", [S(X, 2), S(X, 2, 0), S(X, 3, -1, False), S(NC(X), 2, 0), S(X, 0),
                    S(X, 5), S(X3, 2, 1, largest=False), S(EMPTY, 0), S(EMPTY, 2),
                    S(SCALAR, 1), S(NANS, 2, grad=False), S(NANS, 2, largest=False, grad=False)],
           dtypes=(F32, F64, F16),
           errors=[E(X, 6), E(X, -1), E(X, 1, 5), E(BOOLS, 1), E(CPLX, 1), E(X, 1.5),
                   E(SCALAR, 2)]),
    OpInfo("topk-unsorted", [S(X, 3), S(X, 2, 0, False)],
           fn=lambda L, x, *a: L.sort(L.topk(x, *a, sorted=False).values, -1).values),
    OpInfo("topk-ties", [S(TIES, 2), S(TIES, 2, 0, False), S(INTS, 2)], grad=False,
           dtypes=(F32, I64), fn=lambda L, x, *a: L.topk(x, *a).values,
           skips={"indices": KNOWN["topk tie indices"]}),
    OpInfo("kthvalue", [S(X, 2), S(X, 1, 0), S(X, 3, -1, True), S(NC(X), 2, 0), S(X3, 2, 1),
                        S(SCALAR, 1), S(EMPTY, 1, 1), S(TIES, 2, grad=False),
                        S(TIES, 1, 0, True, grad=False), S(NANS, 4, grad=False),
                        S(NANS, 2, grad=False)],
           dtypes=(F32, F64, I64),
           errors=[E(X, 0), E(X, 6), E(SCALAR, 2), E(EMPTY, 1, 0), E(X, 1, 2),
                   E(BOOLS, 1), E(CPLX, 1)]),
    OpInfo("median", [S(X), S(EVEN), S(X, 1), S(X, 0, True), S(NC(X), -1), S(X3, 1),
                      S(SCALAR), S(SCALAR, 0), S(EMPTY), S(EMPTY, 1), S(TIES, 1, grad=False),
                      S(NANS, grad=False), S(NANS, 1, grad=False)],
           dtypes=(F32, F64, I64, F16),
           errors=[E(X, 2), E(BOOLS), E(CPLX), E(CPLX, 0), E(EMPTY, 0),
                   E(X, keepdim=True)]),
    OpInfo("nanmedian", [S(X), S(X, 1), S(NC(X), 0, True), S(SCALAR), S(EMPTY, 1),
                         S(NANS, grad=False), S(NANS, 1, grad=False),
                         S(ALL_NAN_ROW, grad=False), S(TIES, 1, grad=False)],
           dtypes=(F32, F64), skips={"all-NaN rows": KNOWN["nanmedian all-NaN index"]},
           errors=[E(X, 2), E(BOOLS), E(EMPTY, 0)]),
    OpInfo("Tensor.nanmedian", [S(INTS), S(INTS, 1)], dtypes=(I64,)),
    OpInfo("mode", [S(X), S(X, 0), S(NC(X), 1, True), S(X3, 1), S(SCALAR), S(EMPTY, 1),
                    S(TIES, 1, grad=False), S(TIES, 0, True, grad=False),
                    S(INTS, grad=False), S(BOOLS, grad=False)],
           dtypes=(F32, F64, I32), skips={"rows > 16": KNOWN["mode index"]},
           errors=[E(EMPTY, 0), E(X, 2), E(CPLX)]),
    OpInfo("quantile", [S(X, 0.3), S(X, 0.5, 1), S(X, 0.25, 0, True), S(X, Q), S(X, Q, 1, True),
                        S(NC(X), 0.7, -1), S(X3, Q, 1), S(SCALAR, 0.5), S(SCALAR, Q, 0),
                        S(X, np.array(0.4, np.float32), 0), S(X, 1.0, 1), S(X, 0, 1),
                        S(X, Q, None, True),
                        S(X, Q, 1, interpolation="lower"), S(X, Q, 1, interpolation="higher"),
                        S(X, Q, 0, interpolation="midpoint"),
                        S(X, Q, 1, interpolation="nearest"),
                        S(X, HALVES, 1, interpolation="nearest", grad=False),
                        S(TIES, Q, 1, grad=False), S(NANS, 0.5, 1, grad=False)],
           errors=[E(INTS, 0.5), E(X, 1.5), E(X, -0.1), E(X, np.array([0.5, 1.5], np.float32)),
                   E(X, np.array([[0.5]], np.float32)), E(X, 0.5, interpolation="foo"),
                   E(EMPTY, 0.5), E(X, 0.5, 2), E(X, np.array([0.5]))]),
    OpInfo("nanquantile", [S(X, 0.3), S(X, Q, 1), S(NANS, 0.5, 1, grad=False),
                           S(NANS, Q, interpolation="nearest", grad=False),
                           S(ALL_NAN_ROW, Q, 1, True, grad=False),
                           S(NANS, Q, 1, interpolation="midpoint", grad=False)],
           errors=[E(INTS, 0.5), E(X, 2.0)]),
    OpInfo("unique", [S(X), S(TIES, return_inverse=True, return_counts=True),
                      S(TIES, False, True), S(NC(TIES), return_counts=True),
                      S(TIES, dim=1, return_inverse=True, return_counts=True),
                      S(TIES, dim=0, return_inverse=True), S(TIES, dim=-1),
                      S(EMPTY, return_inverse=True, return_counts=True),
                      S(EMPTY, dim=0, return_inverse=True, return_counts=True),
                      S(SCALAR, return_inverse=True, return_counts=True),
                      S(np.array([-0.0, 0.0, -0.0], np.float32)), S(NANS, return_counts=True),
                      S(INTS, return_inverse=True, return_counts=True),
                      S(BOOLS, return_inverse=True)],
           grad=False, dtypes=(F32, F64, I64, F16),
           skips={"NaN with return_inverse": KNOWN["unique NaN inverse"]},
           errors=[E(X, dim=2), E(SCALAR, dim=0), E(CPLX), E(randn(3, 0), dim=0)]),
    OpInfo("unique_consecutive",
           [S(X), S(np.array([1, 1, 2, 2, 3, 1, 1, 2], np.float32), True, True),
            S(TIES, return_inverse=True, return_counts=True),
            S(np.array([[1, 1], [1, 1], [2, 2], [1, 1]], np.float32), True, True, 0),
            S(TIES, dim=1, return_counts=True), S(EMPTY, True, True),
            S(EMPTY, True, True, 0), S(SCALAR, True, True),
            S(np.array([nan, nan, 1, 1, nan], np.float32), True, True),
            S(BOOLS, return_counts=True)],
           grad=False, dtypes=(F32, I64),
           errors=[E(X, dim=2), E(SCALAR, dim=0), E(CPLX), E(randn(0, 3), dim=1)]),
    OpInfo("searchsorted",
           [S(SEQ, V), S(SEQ, V, right=True), S(SEQ, V, side="right"), S(SEQ, V, side="left"),
            S(SEQ2, V2), S(SEQ2, V2, right=True), S(NC(SEQ2), NC(V2)),
            S(SEQ, 2.0), S(SEQ, 2.0, right=True), S(SEQ, 3), S(SEQ, np.array(4.0, np.float32)),
            S(SEQ, V, out_int32=True), S(SEQ, randn(0, 2)),
            S(SEQ.astype(np.int64), V), S(SEQ.astype(np.int64), 2.5),
            S(SEQ, np.array([1, 2, 5]))],
           grad=False, dtypes=(F32, F64, I64),
           errors=[E(SEQ, V, side="foo"), E(SEQ, V, right=True, side="left"),
                   E(np.array(2.0), V), E(SEQ2, 2.0), E(SEQ2, np.ones((3, 3))), E(SEQ2, np.ones(3)),
                   E(BOOLS, BOOLS), E(CPLX, CPLX)]),
    OpInfo("searchsorted-sorter", [S(UNSORTED, V, SORTER), S(UNSORTED, V, SORTER, right=True),
                                   S(UNSORTED, 2.0, SORTER, side="right")],
           grad=False, dtypes=(F32, I64),
           fn=lambda L, s, v, so, **kw: L.searchsorted(s, v, sorter=so, **kw),
           errors=[E(UNSORTED, V, np.array([1, 0])), E(UNSORTED, V, SORTER.astype(np.int32)),
                   E(UNSORTED, V, SORTER + 1), E(UNSORTED, V, SORTER.astype(np.float32))]),
    OpInfo("bucketize", [S(V, SEQ), S(V, SEQ, right=True), S(2.5, SEQ), S(V2, SEQ, out_int32=True),
                         S(SCALAR, SEQ), S(NC(V2), SEQ, right=True)],
           grad=False, dtypes=(F32, F64, I64),
           errors=[E(V, SEQ2), E(V, np.array(1.0))]),
]

test_forward, test_gradcheck, test_errors = make_tests(OPS)


# ------------------------------------------------------------- variants, out=, types

def test_tensor_methods_and_return_types():
    x = ember.from_numpy(X)
    for name in ("sort", "topk", "kthvalue", "median", "nanmedian", "mode"):
        args = (2,) if name in ("topk", "kthvalue") else ()
        kw = {"dim": 1} if name in ("median", "nanmedian") else {}
        r = getattr(x, name)(*args, **kw)
        assert type(r).__name__ == name and r._fields == ("values", "indices")
        assert r.values is r[0] and r.indices is r[1]
        assert type(r) is getattr(ember.return_types, name)
    assert repr(ember.sort(x)).startswith("torch.return_types.sort(\nvalues=")
    check(lambda L, a: (a.argsort(0), a.msort(), a.quantile(0.5), a.nanquantile(0.5, 1),
                        a.unique(), a.unique_consecutive()), X, grad=False)


OUT_CASES = {
    "sort": lambda L, x, o: L.sort(x, 1, out=(o, L.empty(0, dtype=L.long))),
    "topk": lambda L, x, o: L.topk(x, 2, out=(o, L.empty(0, dtype=L.long))),
    "kthvalue": lambda L, x, o: L.kthvalue(x, 2, 0, out=(o, L.empty(0, dtype=L.long))),
    "median_dim": lambda L, x, o: L.median(x, 1, out=(o, L.empty(0, dtype=L.long))),
    "mode": lambda L, x, o: L.mode(x, 1, out=(o, L.empty(0, dtype=L.long))),
    "msort": lambda L, x, o: L.msort(x, out=o),
    "quantile": lambda L, x, o: L.quantile(x, 0.5, 1, out=o),
    "nanquantile": lambda L, x, o: L.nanquantile(x, 0.5, out=o),
    "argsort": lambda L, x, o: (o, L.argsort(x, stable=True, out=L.empty(0, dtype=L.long))),
    "searchsorted": lambda L, x, o: (o, L.searchsorted(x[0].sort().values, x,
                                                       out=L.empty(0, dtype=L.long))),
    "bucketize": lambda L, x, o: (o, L.bucketize(x, x[0].sort().values, out_int32=True,
                                                 out=L.empty(0, dtype=L.int32))),
}


@pytest.mark.parametrize("name", sorted(OUT_CASES))
def test_out(name):
    def fn(L, x):
        o = L.empty(0)
        r = OUT_CASES[name](L, x, o)
        return (list(r) if isinstance(r, tuple) else [r]) + [o]
    check(fn, X, grad=False)


OUT_ERRORS = {
    "sort_index_dtype": lambda L, x: L.sort(x, out=(L.empty(0), L.empty(0, dtype=L.int32))),
    "searchsorted_dtype": lambda L, x: L.searchsorted(x[0], x, out=L.empty(0)),
    "searchsorted_int32": lambda L, x: L.searchsorted(x[0], x, out_int32=True,
                                                      out=L.empty(0, dtype=L.long)),
    "median_full_out": lambda L, x: L.median(x, out=L.empty(0)),
    "out_requires_grad": lambda L, x: L.sort(x.requires_grad_(), out=(
        L.empty(0), L.empty(0, dtype=L.long))),
}


@pytest.mark.parametrize("name", sorted(OUT_ERRORS))
def test_out_errors(name):
    check_error(OUT_ERRORS[name], X)


# -------------------------------------------------------------- ties and gradients

def test_tie_gradients_match_torch():
    """Full median spreads its gradient over ties; the dim variants and stable sort send it
    to the reported index."""
    check(lambda L, a: (L.median(a), L.nanmedian(a)), TIES)
    check(lambda L, a: (L.sort(a, stable=True).values, L.kthvalue(a, 2).values,
                        L.median(a, 1).values, L.mode(a, 1).values), TIES)


def test_kthvalue_ties_replay_torch_quickselect():
    """Rows full of ties (and NaNs): the index matches PyTorch's quickselect."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 4, (40, 23)).astype(np.float64)
    a[rng.random(a.shape) < 0.1] = nan
    for k in (1, 5, 12, 23):
        check(lambda L, x: L.kthvalue(x, k, 1), a, grad=False)
    check(lambda L, x: L.kthvalue(x, 3, 0), a[:, :7].astype(np.int32), grad=False)


def test_median_and_mode_index_choice():
    rng = np.random.default_rng(4)
    a = rng.integers(0, 3, (30, 16)).astype(np.float32)     # short rows: torch sorts stably
    check(lambda L, x: (*L.median(x, 1), *L.mode(x, 1), *L.mode(x[:16], 0)), a, grad=False)
    check(lambda L, x: L.mode(x, 1).values, rng.integers(0, 3, (5, 50)), grad=False)


def test_topk_ties_values_and_valid_indices():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 3, (6, 40)).astype(np.float32)
    v, i = ember.topk(ember.from_numpy(a), 7)
    tv, _ = torch.topk(torch.from_numpy(a), 7)
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    np.testing.assert_array_equal(np.take_along_axis(a, i.numpy(), 1), v.numpy())


def test_half_and_bfloat16():
    check(lambda L, a: (a.bfloat16().sort(stable=True).values.float(),
                        a.bfloat16().topk(2).values.float(), a.bfloat16().median(1).values.float(),
                        a.bfloat16().unique().float()), TIES, grad=False)
    check(lambda L, a: (L.searchsorted(a.bfloat16()[0].sort().values, a), *a.half().mode(1)),
          TIES, grad=False)


def test_double_backward_through_sort_and_quantile():
    x = ember.from_numpy(X.astype(np.float64)).requires_grad_()
    t = torch.from_numpy(X.astype(np.float64)).requires_grad_()
    outs = []
    for L, a in ((ember, x), (torch, t)):
        y = (L.sort(a, 1).values ** 3).sum() + (L.quantile(a, 0.3, 0) ** 2).sum()
        g, = L.autograd.grad(y, a, create_graph=True)
        gg, = L.autograd.grad((g * g).sum(), a)
        outs.append(gg.detach().numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10)


def test_quantile_gradient_wrt_q():
    gradcheck(lambda L, a, q: L.quantile(a, q, 1), X, np.array([0.15, 0.6]))


def test_unique_backward_raises_like_torch():
    for L in (ember, torch):
        x = L.tensor([1.0, 2.0, 1.0], requires_grad=True)
        for y in (L.unique(x), L.unique(x, dim=0), L.unique_consecutive(x)):
            assert y.requires_grad
            with pytest.raises(NotImplementedError, match="derivative for"):
                y.sum().backward()


def test_indices_carry_no_gradient():
    x = ember.from_numpy(X).requires_grad_()
    for r in (x.sort(), x.topk(2), x.kthvalue(1), x.median(0), x.mode(0)):
        assert r.values.requires_grad and not r.indices.requires_grad
    assert not ember.argsort(x).requires_grad
    assert not ember.searchsorted(x[0].detach().sort().values, x).requires_grad


def test_numpy_sort_protocol():
    x = ember.from_numpy(TIES)
    np.testing.assert_array_equal(np.sort(x).numpy(), np.sort(TIES))
    np.testing.assert_array_equal(np.argsort(x, kind="stable").numpy(),
                                  np.argsort(TIES, kind="stable"))
