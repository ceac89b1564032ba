"""Dropout family (statistics: ember's Philox stream is not PyTorch's) and Embedding /
EmbeddingBag against PyTorch (outputs, weight and per-sample-weight gradients)."""
import warnings

import numpy as np
import pytest

from oracle import check, check_error, gradcheck, randn, torch, to_numpy

import ember
import ember.nn.functional as F

# -------------------------------------------------------------------- dropout


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout_statistics_and_scaling(p):
    ember.manual_seed(0)
    x = ember.ones(200, 100)
    y = F.dropout(x, p)
    kept = y.numpy() != 0
    assert abs(1 - kept.mean() - p) < 0.01
    np.testing.assert_allclose(y.numpy()[kept], 1 / (1 - p), rtol=1e-6)
    xs = ember.ones(200, 100, requires_grad=True)
    ember.manual_seed(1)
    ys = F.dropout(xs, p)
    ys.sum().backward()
    np.testing.assert_array_equal(xs.grad.numpy(), ys.detach().numpy())   # grad = mask/(1-p)


def test_dropout_reproducible_with_manual_seed():
    ember.manual_seed(3)
    a = F.dropout(ember.ones(50), 0.5)
    ember.manual_seed(3)
    b = F.dropout(ember.ones(50), 0.5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("fn", ["dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d",
                                "dropout2d", "dropout3d"])
def test_identity_cases_and_errors(fn):
    shape = {"dropout1d": (2, 3, 4), "dropout3d": (2, 3, 2, 2, 2)}.get(fn, (2, 3, 4, 2))
    f = getattr(F, fn)
    x = ember.randn(*shape)
    assert f(x, 0.5, training=False) is x
    assert f(x, 0.0, training=True) is x
    z = f(x, 1.0, training=True)
    assert z.shape == x.shape and not z.numpy().any()
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="between 0 and 1"):
            f(x, p)
        check_error(lambda L, a: getattr(L.nn.functional, fn)(a, p), randn(*shape))


def test_dropout_inplace_and_defaults():
    x = ember.ones(100, 10)
    ember.manual_seed(0)
    y = F.dropout(x, 0.5, inplace=True)
    assert y is x and (x.numpy() == 0).any() and set(np.unique(x.numpy())) <= {0.0, 2.0}
    leaf = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        F.dropout(leaf, 0.5, inplace=True)
    # alpha dropout defaults to training=False in nn.functional
    x = ember.randn(4)
    assert F.alpha_dropout(x) is x and F.feature_alpha_dropout(x) is x


def test_dropout_integer_input():
    check_error(lambda L, a: L.nn.functional.dropout(a, 0.5), np.array([1, 2]))
    x = ember.tensor([1, 2])
    assert F.dropout(x, 0.5, False) is x


@pytest.mark.parametrize("fn,shape", [("dropout1d", (8, 50, 6)), ("dropout1d", (50, 6)),
                                      ("dropout2d", (8, 50, 3, 2)), ("dropout2d", (8, 50, 6)),
                                      ("dropout3d", (4, 50, 2, 2, 2)),
                                      ("dropout3d", (50, 2, 3, 2))])
def test_feature_dropout_zeroes_whole_channels(fn, shape):
    ember.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = getattr(F, fn)(ember.ones(*shape), 0.5).numpy()
    batched = len(shape) == {"dropout1d": 3, "dropout2d": 4, "dropout3d": 5}[fn] \
        or fn == "dropout2d"
    per = y.reshape((shape[0] * shape[1] if batched else shape[0]), -1)
    assert all(len(set(row)) == 1 for row in per)            # one draw per channel
    assert set(np.unique(y)) == {0.0, 2.0}
    assert 0.3 < (per[:, 0] == 0).mean() < 0.7


def test_feature_dropout_shape_errors_and_warnings():
    check_error(lambda L, a: L.nn.functional.dropout1d(a, 0.5), randn(3))
    check_error(lambda L, a: L.nn.functional.dropout1d(a, 0.5), randn(2, 3, 4, 5))
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(ember.randn(2, 3, 4))
    with pytest.warns(UserWarning, match="Received a 3-D input to dropout3d"):
        F.dropout3d(ember.randn(2, 3, 4))
    x = ember.ones(3, 4)
    y = F.dropout1d(x, 0.5, inplace=True)
    assert y is x and tuple(x.shape) == (3, 4)


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_alpha_dropout_keeps_mean_and_variance(p):
    ember.manual_seed(0)
    x = ember.randn(400, 500)
    y = F.alpha_dropout(x, p, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.var() - 1) < 0.03
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
    dropped = np.isclose(y, -1.7580993408473766 * a + 1.7580993408473766 * a * p)
    assert abs(dropped.mean() - p) < 0.01
    ember.manual_seed(0)
    f = F.feature_alpha_dropout(ember.randn(100, 40, 5), p, training=True).numpy()
    assert abs(f.mean()) < 0.05


@pytest.mark.parametrize("cls", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                 "FeatureAlphaDropout"])
def test_dropout_modules(cls):
    for kw in ({}, {"p": 0.2, "inplace": True}):
        em, tm = getattr(ember.nn, cls)(**kw), getattr(torch.nn, cls)(**kw)
        assert repr(em) == repr(tm)
    check_error(lambda L: getattr(L.nn, cls)(p=1.5))
    m = getattr(ember.nn, cls)(0.5)
    x = ember.randn(*{"Dropout1d": (2, 3, 4), "Dropout3d": (2, 3, 4, 5, 2)}.get(cls, (2, 3, 4, 5)))
    m.eval()
    assert m(x) is x
    m.train()
    ember.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not np.array_equal(m(x).numpy(), x.numpy())


# ------------------------------------------------------------------ embedding

IDX = np.array([[0, 2, 4], [4, 3, 0]])


EMB = {
    "plain": lambda L, w, i: L.nn.functional.embedding(i, w),
    "padding": lambda L, w, i: L.nn.functional.embedding(i, w, padding_idx=4),
    "neg_padding": lambda L, w, i: L.nn.functional.embedding(i, w, padding_idx=-1),
    "freq": lambda L, w, i: L.nn.functional.embedding(i, w, scale_grad_by_freq=True),
    "freq_padding": lambda L, w, i: L.nn.functional.embedding(i, w, 0, scale_grad_by_freq=True),
    "int32": lambda L, w, i: L.nn.functional.embedding(i.int(), w),
    "0d": lambda L, w, i: L.nn.functional.embedding(i[0, 1], w),
    "empty": lambda L, w, i: L.nn.functional.embedding(i[:0], w),
    "torch_level": lambda L, w, i: L.embedding(w, i, 2),
}


@pytest.mark.parametrize("name", sorted(EMB))
def test_embedding(name):
    if name == "torch_level" and not hasattr(ember, "embedding"):
        pytest.skip("ember.embedding: not exported by ember/__init__.py yet")
    check(EMB[name], randn(5, 3), IDX)
    check(EMB[name], randn(5, 3).astype(np.float64), IDX)


def test_embedding_gradcheck_and_double_backward():
    # (scale_grad_by_freq and padding_idx change the gradient on purpose: not gradchecked)
    gradcheck(lambda L, w, i: L.nn.functional.embedding(i, w) ** 2, randn(5, 3), IDX)
    op = ember.ops.get("embedding_dense_backward")
    gradcheck(lambda L, g, i: op(g, i, 5, 2, True), randn(2, 3, 4), IDX)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5])
def test_embedding_max_norm_renormalises_in_place(norm_type):
    w = randn(5, 3) * 3
    out = {}
    for L in (ember, torch):
        wt = L.from_numpy(w.copy())
        y = L.nn.functional.embedding(L.from_numpy(IDX), wt, max_norm=1.5, norm_type=norm_type)
        out[L.__name__] = (to_numpy(y), to_numpy(wt))
    for a, b in zip(out["ember"], out["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert not np.allclose(out["ember"][1], w)


def test_embedding_module_and_from_pretrained():
    tm = torch.nn.Embedding(6, 3, padding_idx=2, max_norm=2.0)
    em = ember.nn.Embedding(6, 3, padding_idx=2, max_norm=2.0)
    assert repr(em) == repr(tm) and not em.weight.detach().numpy()[2].any()
    assert list(em.state_dict()) == ["weight"] and tuple(em.weight.shape) == (6, 3)
    em.load_state_dict({"weight": ember.from_numpy(tm.weight.detach().numpy().copy())})
    i = np.array([[1, 2, 5], [5, 0, 2]])
    ye, yt = em(ember.from_numpy(i)), tm(torch.from_numpy(i))
    np.testing.assert_allclose(to_numpy(ye), to_numpy(yt), rtol=1e-5)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(to_numpy(em.weight.grad), to_numpy(tm.weight.grad))
    w = randn(4, 2)
    for freeze in (True, False):
        me = ember.nn.Embedding.from_pretrained(ember.from_numpy(w), freeze=freeze)
        mt = torch.nn.Embedding.from_pretrained(torch.from_numpy(w), freeze=freeze)
        assert repr(me) == repr(mt) and me.weight.requires_grad == mt.weight.requires_grad
        np.testing.assert_array_equal(me.weight.detach().numpy(), w)
    check_error(lambda L: L.nn.Embedding.from_pretrained(L.zeros(3)))


EMB_ERRORS = {
    "out_of_range": (lambda L, w: L.nn.functional.embedding(L.tensor([0, 5]), w)),
    "negative": (lambda L, w: L.nn.functional.embedding(L.tensor([-1]), w)),
    "float_indices": (lambda L, w: L.nn.functional.embedding(L.tensor([0.0, 1.0]), w)),
    "padding_high": (lambda L, w: L.nn.functional.embedding(L.tensor([0]), w, padding_idx=5)),
    "padding_low": (lambda L, w: L.nn.functional.embedding(L.tensor([0]), w, padding_idx=-6)),
    "weight_1d": (lambda L, w: L.nn.functional.embedding(L.tensor([0]), w[0])),
    "module_padding": (lambda L, w: L.nn.Embedding(3, 2, padding_idx=3)),
    "module_weight": (lambda L, w: L.nn.Embedding(3, 2, _weight=w)),
}


@pytest.mark.parametrize("name", sorted(EMB_ERRORS))
def test_embedding_errors(name):
    check_error(EMB_ERRORS[name], randn(5, 3))


def test_sparse_gradients_are_refused_by_name():
    w = ember.randn(3, 2)
    with pytest.raises(NotImplementedError, match="sparse"):
        F.embedding(ember.tensor([0]), w, sparse=True)
    with pytest.raises(NotImplementedError, match="sparse"):
        F.embedding_bag(ember.tensor([[0]]), w, sparse=True)
    m = ember.nn.Embedding(3, 2, sparse=True)
    assert repr(m) == "Embedding(3, 2, sparse=True)"
    with pytest.raises(NotImplementedError, match="sparse"):
        m(ember.tensor([0]))


# -------------------------------------------------------------- embedding_bag

FLAT = np.array([0, 2, 4, 4, 3, 0, 1, 1])
BAGS = {
    "offsets": np.array([0, 3, 3, 5]),                  # an empty bag in the middle
    "single": np.array([0]),
    "tail_empty": np.array([0, 4, 8]),
}


@pytest.mark.parametrize("padding_idx", [None, 4])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("bags", sorted(BAGS))
def test_embedding_bag_offsets(bags, mode, padding_idx):
    off = BAGS[bags]
    check(lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o, mode=mode,
                                                          padding_idx=padding_idx),
          randn(5, 3), FLAT, off)
    check(lambda L, w, i, o: L.nn.functional.embedding_bag(
        i, w, L.cat([o, L.tensor([8])]), mode=mode, include_last_offset=True,
        padding_idx=padding_idx), randn(5, 3).astype(np.float64), FLAT, off)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_input_and_freq(mode):
    check(lambda L, w, i: L.nn.functional.embedding_bag(i, w, mode=mode), randn(5, 3), IDX)
    if mode != "max":
        check(lambda L, w, i: L.nn.functional.embedding_bag(i, w, mode=mode,
                                                            scale_grad_by_freq=True),
              randn(5, 3), IDX)


def test_embedding_bag_per_sample_weights():
    fn = lambda L, w, p, i, o: L.nn.functional.embedding_bag(  # noqa: E731
        i, w, o, mode="sum", per_sample_weights=p, padding_idx=2)
    check(fn, randn(5, 3), randn(8, seed=1), FLAT, BAGS["offsets"])
    gradcheck(fn, randn(5, 3), randn(8, seed=1), FLAT, BAGS["offsets"])
    check(lambda L, w, p, i: L.nn.functional.embedding_bag(i, w, mode="sum", per_sample_weights=p),
          randn(5, 3), randn(2, 3, seed=1), IDX)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_gradcheck(mode):
    gradcheck(lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o, mode=mode),
              randn(5, 3), FLAT, BAGS["offsets"])


def test_embedding_bag_module():
    for kw in ({}, {"mode": "max", "padding_idx": 1}, {"mode": "sum", "max_norm": 1.0,
                                                         "include_last_offset": True}):
        tm, em = torch.nn.EmbeddingBag(6, 3, **kw), ember.nn.EmbeddingBag(6, 3, **kw)
        assert repr(em) == repr(tm)
        em.load_state_dict({"weight": ember.from_numpy(tm.weight.detach().numpy().copy())})
        i, o = np.array([1, 2, 5, 5, 0, 2]), np.array([0, 2, 6] if kw.get("include_last_offset")
                                                      else [0, 2])
        ye = em(ember.from_numpy(i), ember.from_numpy(o))
        yt = tm(torch.from_numpy(i), torch.from_numpy(o))
        np.testing.assert_allclose(to_numpy(ye), to_numpy(yt), rtol=1e-5, atol=1e-6)
        ye.sum().backward()
        yt.sum().backward()
        np.testing.assert_allclose(to_numpy(em.weight.grad), to_numpy(tm.weight.grad), atol=1e-6)
        np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    me = ember.nn.EmbeddingBag.from_pretrained(ember.ones(3, 2), mode="sum")
    assert not me.weight.requires_grad and repr(me) == "EmbeddingBag(3, 2, mode='sum')"


BAG_ERRORS = {
    "mode": lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o, mode="min"),
    "2d_with_offsets": lambda L, w, i, o: L.nn.functional.embedding_bag(i.view(2, 4), w, o),
    "1d_without_offsets": lambda L, w, i, o: L.nn.functional.embedding_bag(i, w),
    "offsets_2d": lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o.view(2, 2)),
    "3d_input": lambda L, w, i, o: L.nn.functional.embedding_bag(i.view(2, 2, 2), w),
    "psw_mean": lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o,
                                                                 per_sample_weights=w[0, :1]
                                                                 .expand(8)),
    "psw_shape": lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o, mode="sum",
                                                                  per_sample_weights=w[0]),
    "max_freq": lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o, mode="max",
                                                                 scale_grad_by_freq=True),
    "first_offset": lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o + 1),
    "last_offset": lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o * 3),
    "index_range": lambda L, w, i, o: L.nn.functional.embedding_bag(i + 3, w, o),
    "float_offsets": lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o.double()),
    "weight_1d": lambda L, w, i, o: L.nn.functional.embedding_bag(i, w[0], o),
    "padding": lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o, padding_idx=5),
}


@pytest.mark.parametrize("name", sorted(BAG_ERRORS))
def test_embedding_bag_errors(name):
    check_error(BAG_ERRORS[name], randn(5, 3), FLAT, BAGS["offsets"])
