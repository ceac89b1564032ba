"""scripts/opinfo_coverage.py on a fixed subset of PyTorch's OpInfo database.

Why: the full run (a few minutes) measures the op surface; this subset keeps regressions in
ops that pass every OpInfo sample today from slipping in. Samples are torch's own
(torch.testing._internal), values/dtypes/shapes compared with torch.
"""
import os
import sys

import pytest

pytest.importorskip("expecttest")
pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "scripts"))
opinfo_coverage = pytest.importorskip("opinfo_coverage")

# every sample of these passes today (a spread over the op families and namespaces)
SUBSET = [
    "add", "__radd__", "__rsub__", "div", "pow", "clamp", "exp2", "log10", "isneginf",
    "matmul", "addmm", "einsum", "sum", "mean", "var_mean", "aminmax", "argmin", "cumsum",
    "cat", "view", "reshape", "narrow", "transpose", "rot90", "unfold", "__getitem__",
    "index_put", "masked_fill", "scatter_reduce", "put", "resize_", "where", "nonzero",
    "bucketize", "arange", "linspace", "triu_indices", "polar",
    "linalg.svd", "linalg.solve", "linalg.slogdet", "linalg.lu_factor", "fft.fft",
    "fft.ifftshift", "special.erfcx", "special.bessel_y0", "masked.sum", "masked.argmin",
    "signal.windows.hann", "stft",
    "softmax", "nn.functional.conv2d", "nn.functional.cross_entropy",
    "nn.functional.layer_norm", "nn.functional.embedding", "nn.functional.interpolate",
    "nn.functional.pad", "nn.functional.max_pool2d", "nn.functional.gelu",
    "nn.functional.cosine_similarity",
]


@pytest.mark.slow
def test_opinfo_subset_passes():
    per = opinfo_coverage.measure(set(SUBSET), max_samples=3, workers=2, quiet=True)
    assert sorted(per) == sorted(set(SUBSET))
    bad = {n: (r["passed"], r["total"], next(iter(r["failures"]), ""))
           for n, r in per.items() if r["total"] == 0 or r["passed"] != r["total"]}
    assert not bad, bad
    head = opinfo_coverage.headline(per)
    assert head["op_names_passing_one"] == len(set(SUBSET))


def test_compare_catches_a_wrong_result():
    """The comparison itself: a wrong value, dtype or shape is reported, not passed."""
    import torch

    import ember
    cmp = opinfo_coverage.compare
    t = torch.tensor([1.0, 2.0])
    cmp(ember.tensor([1.0, 2.0]), t, torch.float32, False)
    for e, kind in [(ember.tensor([1.0, 2.5]), "values"), (ember.tensor([1, 2]), "dtype"),
                    (ember.tensor([[1.0, 2.0]]), "shape")]:
        with pytest.raises(AssertionError, match=kind):
            cmp(e, t, torch.float32, False)


def test_fixes_found_by_the_opinfo_run():
    """Small API gaps the OpInfo run found, each compared with torch."""
    import numpy as np
    import torch

    import ember
    a = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
    c = (a + 1j * a[::-1]).astype(np.complex64)
    e, t = ember.tensor(a), torch.tensor(a)
    ec, tc = ember.tensor(c), torch.tensor(c)
    # to(device, dtype, non_blocking, copy) with the flags positional
    r = e.to("cpu", ember.float64, False, True)
    assert str(r.dtype) == str(t.to("cpu", torch.float64, False, True).dtype)
    assert e.to(ember.float32, False, True) is not e
    # frexp of a 0-d tensor; gradient with spacing=None
    m, x = ember.frexp(ember.tensor(3.0))
    tm, tx = torch.frexp(torch.tensor(3.0))
    assert (m.item(), x.item(), str(x.dtype)) == (tm.item(), tx.item(), str(tx.dtype))
    np.testing.assert_allclose(ember.gradient(e, spacing=None, dim=None)[1].numpy(),
                               torch.gradient(t, spacing=None, dim=None)[1].numpy())
    # mH / H / adjoint, new_empty_strided, __rdiv__ with a tensor
    np.testing.assert_array_equal(ec.mH.numpy(), tc.mH.resolve_conj().numpy())
    np.testing.assert_array_equal(ec.H.numpy(), tc.H.resolve_conj().numpy())
    np.testing.assert_array_equal(ec.adjoint().numpy(), tc.adjoint().resolve_conj().numpy())
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices"):
        ember.ones(2, 2, 2).H
    with pytest.raises(RuntimeError, match="tensor.mH is only supported on matrices"):
        ember.ones(2).mH
    s = ember.tensor([1, 2]).new_empty_strided((2, 3), (1, 2))
    ts = torch.tensor([1, 2]).new_empty_strided((2, 3), (1, 2))
    assert (tuple(s.shape), s.stride(), str(s.dtype)) == (tuple(ts.shape), ts.stride(),
                                                          str(ts.dtype))
    np.testing.assert_allclose(e.__rdiv__(e + 1).numpy(), t.__rdiv__(t + 1).numpy(), rtol=1e-6)
    np.testing.assert_allclose(e.__rdiv__(2).numpy(), t.__rdiv__(2).numpy())


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "chebyshev_polynomial_u",
                                  "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                                  "shifted_chebyshev_polynomial_t",
                                  "shifted_chebyshev_polynomial_v", "hermite_polynomial_h",
                                  "hermite_polynomial_he", "laguerre_polynomial_l",
                                  "legendre_polynomial_p"])
def test_special_orthogonal_polynomials(name):
    """Every n in -1..11 (and a fractional n) on a grid through the +-1 edge values."""
    import torch

    import ember
    x = torch.linspace(-1.5, 1.5, 13, dtype=torch.float64)[:, None]
    for n in (torch.arange(-1, 12), torch.tensor(3.7), torch.tensor(9)):
        want = getattr(torch.special, name)(x, n)
        got = getattr(ember.special, name)(ember.tensor(x.numpy()), ember.tensor(n.numpy()))
        assert str(got.dtype) == str(want.dtype)
        torch.testing.assert_close(torch.from_numpy(got.numpy()), want, rtol=1e-9, atol=1e-9)
    got = getattr(ember.special, name)(ember.tensor([0.25, 2.0]), ember.tensor(3))
    assert str(got.dtype) == "torch.float32"


def test_nonzero_static_and_empty_permuted():
    import torch

    import ember
    a = [[0, 1, 0], [1, 1, 0]]
    for size, fill in [(5, -1), (2, 9), (0, -1)]:
        got = ember.nonzero_static(ember.tensor(a), size=size, fill_value=fill)
        want = torch.nonzero_static(torch.tensor(a), size=size, fill_value=fill)
        assert got.tolist() == want.tolist() and str(got.dtype) == str(want.dtype)
    assert ember.tensor(a).nonzero_static(size=1).tolist() == [[0, 1]]
    assert tuple(ember.nonzero_static(ember.tensor(3.0), size=2).shape) == (2, 0)
    with pytest.raises(RuntimeError, match="non-negative"):
        ember.nonzero_static(ember.tensor(a), size=-1)
    e = ember.empty_permuted((2, 3, 4), (2, 0, 1), dtype=ember.float64)
    t = torch.empty_permuted((2, 3, 4), (2, 0, 1), dtype=torch.float64)
    assert (tuple(e.shape), e.stride(), str(e.dtype)) == (tuple(t.shape), t.stride(),
                                                          str(t.dtype))
    with pytest.raises(RuntimeError, match="Duplicate dim"):
        ember.empty_permuted((2, 3), (0, 0))


def test_native_norms():
    """native_layer/batch/group_norm: output plus saved mean and 1/std, as torch's."""
    import numpy as np
    import torch

    import ember
    x = np.random.default_rng(0).standard_normal((2, 6, 5))
    w, b = np.linspace(0.5, 1.5, 6), np.linspace(-1, 1, 6)
    E, T = ember.tensor, torch.tensor
    cases = [
        (lambda m, a, *r: m.native_layer_norm(a, [6, 5], None, None, 1e-5), ()),
        (lambda m, a, w, b: m.native_group_norm(a, w, b, 2, 6, 5, 3, 1e-5), (w, b)),
        (lambda m, a, w, b: m.native_batch_norm(a, w, b, None, None, True, 0.1, 1e-5), (w, b)),
    ]
    for f, extra in cases:
        got = f(ember, E(x), *[E(v) for v in extra])
        want = f(torch, T(x), *[T(v) for v in extra])
        for g, t in zip(got, want):
            assert tuple(g.shape) == tuple(t.shape) and str(g.dtype) == str(t.dtype)
            np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-7, atol=1e-9)
    rm, rv = np.zeros(6), np.ones(6)
    got = ember.native_batch_norm(E(x), None, None, E(rm), E(rv), False, 0.1, 1e-5)
    want = torch.native_batch_norm(T(x), None, None, T(rm), T(rv), False, 0.1, 1e-5)
    assert [tuple(g.shape) for g in got] == [tuple(t.shape) for t in want]
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-7)


def test_svd_pca_lowrank():
    """Rank-3 inputs: singular values equal torch's, U S V^H rebuilds A; shapes as torch's."""
    import numpy as np
    import torch

    import ember
    rng = np.random.default_rng(0)
    for shape in [(7, 5), (4, 9), (2, 6, 5)]:
        a = rng.standard_normal(shape[:-1] + (3,)) @ rng.standard_normal((3, shape[-1]))
        for name, kw in [("svd_lowrank", {"q": 4}), ("pca_lowrank", {"q": 3, "center": True}),
                         ("pca_lowrank", {"q": 3, "center": False})]:
            U, S, V = getattr(ember, name)(ember.tensor(a), **kw)
            tU, tS, tV = getattr(torch, name)(torch.tensor(a), **kw)
            assert [tuple(x.shape) for x in (U, S, V)] == [tuple(x.shape) for x in (tU, tS, tV)]
            np.testing.assert_allclose(S.numpy(), tS.numpy(), rtol=1e-8, atol=1e-8)
            ref = a - a.mean(-2, keepdims=True) if kw.get("center") else a
            rebuilt = (U * S.unsqueeze(-2)) @ V.mH
            np.testing.assert_allclose(rebuilt.numpy(), ref, atol=1e-8)
    with pytest.raises(ValueError, match="must be non-negative integer"):
        ember.pca_lowrank(ember.ones(3, 2), q=5)


def test_cov_corrcoef_of_one_variable_is_0d():
    import numpy as np
    import torch

    import ember
    x = np.random.default_rng(0).standard_normal((1, 5))
    for f in ("cov", "corrcoef"):
        got, want = getattr(ember, f)(ember.tensor(x)), getattr(torch, f)(torch.tensor(x))
        assert tuple(got.shape) == tuple(want.shape) == ()
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)


def test_masked_var_complex_and_sum_to_size_empty():
    import numpy as np
    import torch

    import ember
    x = np.array([[1 + 1j, 2 - 1j, 3j], [0.5, -1j, 2]], dtype=np.complex64)
    mk = np.array([[True, False, True], [True, True, True]])
    for f in ("var", "std"):
        got = getattr(ember.masked, f)(ember.tensor(x), 1, mask=ember.tensor(mk))
        want = getattr(torch.masked, f)(torch.tensor(x), 1, mask=torch.tensor(mk))
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    for v in (True, 3, 2.5):
        got, want = ember.tensor(v).sum_to_size(()), torch.tensor(v).sum_to_size(())
        assert str(got.dtype) == str(want.dtype) and got.item() == want.item()


def test_take_along_dim_negative_and_masked_prod_0d():
    import numpy as np
    import torch

    import ember
    x = np.arange(20.0).reshape(4, 5)
    i = np.array([[-1, 0, -5], [2, -2, 4], [0, 0, -3], [-4, 1, 1]])
    got = ember.take_along_dim(ember.tensor(x), ember.tensor(i), 1)
    np.testing.assert_array_equal(got.numpy(), torch.take_along_dim(torch.tensor(x),
                                                                   torch.tensor(i), 1).numpy())
    for v in (True, 3, 2.5):
        got, want = ember.masked.prod(ember.tensor(v)), torch.masked.prod(torch.tensor(v))
        assert str(got.dtype) == str(want.dtype) and got.item() == want.item()


def test_linalg_vander_of_0d():
    import torch

    import ember
    got = ember.linalg.vander(ember.tensor(2.0), N=3)
    want = torch.linalg.vander(torch.tensor(2.0), N=3)
    assert got.tolist() == want.tolist() and tuple(got.shape) == tuple(want.shape)
    with pytest.raises(RuntimeError, match="N must be greater than 1"):
        ember.linalg.vander(ember.tensor(2.0))


def test_histogramdd():
    import numpy as np
    import torch

    import ember
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6, 3))
    w = rng.uniform(0, 2, (4, 6))
    cases = [dict(bins=4), dict(bins=[2, 3, 5], density=True),
             dict(bins=[3, 1, 2], range=[-1.0, 1.0, 0.0, 2.0, -3.0, 0.0], weight=w),
             dict(bins=[np.array([-2.0, 0.0, 2.5]), np.array([-1.0, 1.0]),
                        np.array([-0.5, 0.0, 0.5, 1.0])])]
    for kw in cases:
        ek = {k: ([ember.tensor(b) for b in v] if k == "bins" and isinstance(v, list)
                  and not isinstance(v[0], int) else ember.tensor(v) if k == "weight" else v)
              for k, v in kw.items()}
        tk = {k: ([torch.tensor(b) for b in v] if k == "bins" and isinstance(v, list)
                  and not isinstance(v[0], int) else torch.tensor(v) if k == "weight" else v)
              for k, v in kw.items()}
        got, want = ember.histogramdd(ember.tensor(x), **ek), torch.histogramdd(torch.tensor(x),
                                                                               **tk)
        np.testing.assert_allclose(got.hist.numpy(), want.hist.numpy(), rtol=1e-12)
        for ge, te in zip(got.bin_edges, want.bin_edges):
            np.testing.assert_allclose(ge.numpy(), te.numpy(), rtol=1e-12)
    same = ember.histogramdd(ember.ones(2, 2), bins=[2, 3])
    tsame = torch.histogramdd(torch.ones(2, 2), bins=[2, 3])
    assert same.hist.tolist() == tsame.hist.tolist()
