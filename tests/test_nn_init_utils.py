"""nn.init and nn.utils (clip_grad, convert_parameters, parametrize, weight/spectral norm,
fusion, functional_call) against PyTorch."""
import math
import warnings

import numpy as np
import pytest

from oracle import torch
import ember
from ember.nn import init

T_INIT = torch.nn.init


def E(a, **kw):
    return ember.tensor(np.asarray(a), **kw)


def Tt(a, **kw):
    return torch.tensor(np.asarray(a), **kw)


def npy(t):
    return t.detach().numpy()


# ------------------------------------------------------------------------ nn.init

@pytest.mark.parametrize("name,param", [
    ("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
    ("conv_transpose1d", None), ("conv_transpose2d", None), ("conv_transpose3d", None),
    ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
    ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None), ("leaky_relu", math.sqrt(5))])
def test_calculate_gain(name, param):
    assert init.calculate_gain(name, param) == T_INIT.calculate_gain(name, param)


@pytest.mark.parametrize("name,param", [("softmax", None), ("leaky_relu", True),
                                        ("leaky_relu", "0.1")])
def test_calculate_gain_errors(name, param):
    with pytest.raises(ValueError) as te:
        T_INIT.calculate_gain(name, param)
    with pytest.raises(ValueError) as ee:
        init.calculate_gain(name, param)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (4, 3, 2, 5), (2, 3, 1, 2, 2), (0, 3)])
def test_fans(shape):
    assert init._calculate_fan_in_and_fan_out(ember.empty(*shape)) == \
        T_INIT._calculate_fan_in_and_fan_out(torch.empty(*shape))
    for mode in ("fan_in", "fan_out", "FAN_OUT"):
        if 0 not in shape:
            assert init._calculate_correct_fan(ember.empty(*shape), mode) == \
                T_INIT._calculate_correct_fan(torch.empty(*shape), mode)


def test_fan_and_mode_errors():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(ember.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(ember.empty(3, 4), mode="fan_avg")
    with pytest.raises(ValueError, match="fewer than 2"):
        init.xavier_uniform_(ember.empty(3))


@pytest.mark.parametrize("fn,shape", [
    (lambda I, t: I.constant_(t, 0.3), (3, 4)), (lambda I, t: I.ones_(t), (2, 5)),
    (lambda I, t: I.zeros_(t), (2, 3, 4)), (lambda I, t: I.eye_(t), (3, 5)),
    (lambda I, t: I.eye_(t), (4, 2)), (lambda I, t: I.dirac_(t), (4, 3, 5)),
    (lambda I, t: I.dirac_(t), (3, 4, 3, 3)), (lambda I, t: I.dirac_(t, 2), (4, 3, 3, 3)),
    (lambda I, t: I.dirac_(t, 3), (6, 2, 2, 3, 3)), (lambda I, t: I.constant_(t, 2), (0, 3)),
])
def test_deterministic_inits_match_exactly(fn, shape):
    te = ember.empty(*shape, requires_grad=True)
    tt = torch.empty(*shape, requires_grad=True)
    v = te._version
    out = fn(init, te)
    fn(T_INIT, tt)
    assert out is te and te.is_leaf and te.requires_grad and te.grad_fn is None
    assert te._version > v or te.numel() == 0
    np.testing.assert_array_equal(npy(te), npy(tt))


@pytest.mark.parametrize("fn,shape", [(lambda I, t: I.eye_(t), (3,)),
                                      (lambda I, t: I.dirac_(t), (3, 3)),
                                      (lambda I, t: I.dirac_(t, 2), (3, 3, 3)),
                                      (lambda I, t: I.orthogonal_(t), (3,)),
                                      (lambda I, t: I.sparse_(t, 0.5), (3, 3, 3))])
def test_init_shape_errors(fn, shape):
    with pytest.raises(ValueError) as te:
        fn(T_INIT, torch.empty(*shape))
    with pytest.raises(ValueError) as ee:
        fn(init, ember.empty(*shape))
    assert str(ee.value) == str(te.value)


def _stats(fn, shape=(300, 400)):
    ember.manual_seed(1)
    t = ember.empty(*shape, requires_grad=True)
    out = fn(t)
    assert out is t and t.is_leaf and t.grad_fn is None
    return npy(t)


def test_uniform_normal_trunc_normal():
    a = _stats(lambda t: init.uniform_(t, -2.0, 3.0))
    assert a.min() >= -2 and a.max() <= 3 and abs(a.mean() - 0.5) < 0.02
    a = _stats(lambda t: init.normal_(t, 1.0, 0.5))
    assert abs(a.mean() - 1.0) < 0.01 and abs(a.std() - 0.5) < 0.01
    a = _stats(lambda t: init.trunc_normal_(t, 0.5, 1.0, -1.0, 1.5))
    assert a.min() >= -1.0 and a.max() <= 1.5
    # std of N(0.5, 1) truncated to [-1.5, 1] std devs around the mean
    from scipy.stats import truncnorm
    dist = truncnorm(-1.5, 1.0, loc=0.5, scale=1.0)
    assert abs(a.mean() - dist.mean()) < 0.01 and abs(a.std() - dist.std()) < 0.01
    with pytest.warns(UserWarning, match="mean is more than 2 std"):
        init.trunc_normal_(ember.empty(3), mean=10.0)


@pytest.mark.parametrize("kind,kw", [
    ("xavier_uniform_", {}), ("xavier_uniform_", {"gain": 2.0}), ("xavier_normal_", {}),
    ("xavier_normal_", {"gain": 2.0}), ("kaiming_uniform_", {}),
    ("kaiming_uniform_", {"a": 0.3, "mode": "fan_out"}),
    ("kaiming_uniform_", {"nonlinearity": "relu"}), ("kaiming_uniform_", {"a": math.sqrt(5)}),
    ("kaiming_normal_", {}), ("kaiming_normal_", {"a": 0.3, "mode": "fan_out"}),
    ("kaiming_normal_", {"nonlinearity": "relu"}), ("kaiming_normal_", {"a": math.sqrt(5)})])
def test_variance_scaling_inits(kind, kw):
    shape = (200, 30, 3, 3)
    fan_in, fan_out = 30 * 9, 200 * 9
    if kind.startswith("xavier"):
        std = kw.get("gain", 1.0) * math.sqrt(2.0 / (fan_in + fan_out))
    else:
        fan = fan_out if kw.get("mode") == "fan_out" else fan_in
        std = T_INIT.calculate_gain(kw.get("nonlinearity", "leaky_relu"), kw.get("a", 0)) / \
            math.sqrt(fan)
    a = _stats(lambda t: getattr(init, kind)(t, **kw), shape)
    assert abs(a.std() / std - 1) < 0.02 and abs(a.mean()) < 0.02 * std * 10
    if kind.endswith("uniform_"):
        bound = math.sqrt(3) * std
        assert a.max() <= bound and a.max() > 0.99 * bound


def test_kaiming_zero_element_warns():
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            fn(ember.empty(0, 3))


@pytest.mark.parametrize("shape,gain", [((5, 8), 1.0), ((8, 5), 2.0), ((4, 3, 2), 1.0),
                                        ((6, 6), 0.5)])
def test_orthogonal(shape, gain):
    t = ember.empty(*shape, requires_grad=True)
    init.orthogonal_(t, gain)
    m = npy(t).reshape(shape[0], -1)
    if m.shape[0] <= m.shape[1]:
        np.testing.assert_allclose(m @ m.T, gain ** 2 * np.eye(m.shape[0]), atol=1e-5)
    else:
        np.testing.assert_allclose(m.T @ m, gain ** 2 * np.eye(m.shape[1]), atol=1e-5)
    assert t.is_leaf
    init.orthogonal_(ember.empty(0, 3))


def test_sparse():
    ember.manual_seed(0)
    t = ember.empty(10, 40)
    init.sparse_(t, 0.3, std=0.5)
    a = npy(t)
    assert ((a == 0).sum(0) == 3).all()
    assert abs(a[a != 0].std() - 0.5) < 0.1


def test_generator_argument_reproducible():
    g1, g2 = ember.Generator().manual_seed(7), ember.Generator().manual_seed(7)
    for fn in ("uniform_", "normal_", "xavier_uniform_", "kaiming_normal_", "trunc_normal_",
               "orthogonal_"):
        a, b = ember.empty(4, 5), ember.empty(4, 5)
        getattr(init, fn)(a, generator=g1)
        getattr(init, fn)(b, generator=g2)
        np.testing.assert_array_equal(npy(a), npy(b))
    ember.manual_seed(3)
    a = init.normal_(ember.empty(3))
    ember.manual_seed(3)
    np.testing.assert_array_equal(npy(a), npy(init.normal_(ember.empty(3))))


def test_deprecated_aliases_and_all_names():
    with pytest.warns(FutureWarning, match="nn.init.xavier_uniform_"):
        init.xavier_uniform(ember.empty(3, 4))
    with pytest.warns(FutureWarning):
        init.constant(ember.empty(2), 1.0)
    public = [n for n in dir(T_INIT) if not n.startswith("_") and callable(getattr(T_INIT, n))
              and getattr(T_INIT, n).__module__ == "torch.nn.init"]
    missing = [n for n in public if not hasattr(init, n)]
    assert missing == [], missing


def test_init_on_parameter_keeps_grad_state_and_dtype():
    p = ember.nn.Parameter(ember.empty(3, 4, dtype=ember.float64))
    init.kaiming_uniform_(p, a=math.sqrt(5))
    assert isinstance(p, ember.nn.Parameter) and p.dtype is ember.float64 and p.is_leaf
    init.constant_(p, 1)
    (p * 2).sum().backward()
    np.testing.assert_array_equal(npy(p.grad), np.full((3, 4), 2.0))


# ---------------------------------------------------------------------- clip_grad

def _params_with_grads(lib, nan=False):
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (5,), (2, 2, 2), (4,)]
    ps = []
    for i, s in enumerate(shapes):
        p = (ember.nn.Parameter(E(rng.standard_normal(s).astype(np.float32))) if lib is ember
             else torch.nn.Parameter(Tt(rng.standard_normal(s).astype(np.float32))))
        if i != 3:
            g = rng.standard_normal(s).astype(np.float32) * 3
            if nan and i == 1:
                g[0] = np.inf
            p.grad = E(g) if lib is ember else Tt(g)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_norm(norm_type, max_norm, foreach):
    pe, pt = _params_with_grads(ember), _params_with_grads(torch)
    te = ember.nn.utils.clip_grad_norm_(pe, max_norm, norm_type, foreach=foreach)
    tt = torch.nn.utils.clip_grad_norm_(pt, max_norm, norm_type, foreach=foreach)
    np.testing.assert_allclose(npy(te), npy(tt), rtol=1e-5)
    assert te.shape == tt.shape and str(te.dtype) == str(tt.dtype)
    for a, b in zip(pe, pt):
        if b.grad is None:
            assert a.grad is None
        else:
            np.testing.assert_allclose(npy(a.grad), npy(b.grad), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_edge_cases():
    p = ember.nn.Parameter(ember.ones(3))
    p.grad = ember.full((3,), 4.0)
    total = ember.nn.utils.clip_grad_norm_(p, 1.0)        # a single tensor
    np.testing.assert_allclose(npy(total), np.sqrt(48), rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(npy(p.grad)), 1.0, rtol=1e-5)
    assert float(ember.nn.utils.clip_grad_norm_([], 1.0)) == float(
        torch.nn.utils.clip_grad_norm_([], 1.0)) == 0.0
    assert float(ember.nn.utils.clip_grad_norm_(iter([ember.nn.Parameter(ember.ones(2))]),
                                                1.0)) == 0.0
    pe, pt = _params_with_grads(ember, nan=True), _params_with_grads(torch, nan=True)
    with pytest.raises(RuntimeError) as te:
        torch.nn.utils.clip_grad_norm_(pt, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as ee:
        ember.nn.utils.clip_grad_norm_(pe, 1.0, error_if_nonfinite=True)
    assert str(ee.value) == str(te.value)
    te = ember.nn.utils.clip_grad_norm_(pe, 1.0)
    tt = torch.nn.utils.clip_grad_norm_(pt, 1.0)
    assert np.isinf(npy(te)) and np.isinf(npy(tt))
    for a, b in zip(pe, pt):
        if b.grad is not None:
            np.testing.assert_array_equal(npy(a.grad), npy(b.grad))


@pytest.mark.parametrize("clip", [0.5, 2, 100.0])
def test_clip_grad_value(clip):
    pe, pt = _params_with_grads(ember), _params_with_grads(torch)
    assert ember.nn.utils.clip_grad_value_(pe, clip) is None
    torch.nn.utils.clip_grad_value_(pt, clip)
    for a, b in zip(pe, pt):
        if b.grad is not None:
            np.testing.assert_array_equal(npy(a.grad), npy(b.grad))


def test_clip_is_not_recorded_by_autograd():
    p = ember.nn.Parameter(ember.ones(3))
    (p * ember.tensor([3.0, 4.0, 0.0])).sum().backward(create_graph=True)
    ember.nn.utils.clip_grad_norm_([p], 1.0)
    np.testing.assert_allclose(npy(p.grad), [0.6, 0.8, 0.0], rtol=1e-5)


# ---------------------------------------------------------------- convert_parameters

def test_parameters_vector_roundtrip():
    me, mt = ember.nn.Linear(3, 4), torch.nn.Linear(3, 4)
    me.load_state_dict({k: E(npy(v)) for k, v in mt.state_dict().items()})
    ve = ember.nn.utils.parameters_to_vector(me.parameters())
    vt = torch.nn.utils.parameters_to_vector(mt.parameters())
    np.testing.assert_array_equal(npy(ve), npy(vt))
    assert ve.requires_grad and ve.grad_fn is not None
    new = np.arange(16, dtype=np.float32)
    ember.nn.utils.vector_to_parameters(E(new), me.parameters())
    torch.nn.utils.vector_to_parameters(Tt(new), mt.parameters())
    for (n, a), (_, b) in zip(me.named_parameters(), mt.named_parameters()):
        np.testing.assert_array_equal(npy(a), npy(b), err_msg=n)
        assert isinstance(a, ember.nn.Parameter)
    with pytest.raises(TypeError):
        ember.nn.utils.vector_to_parameters([1.0], me.parameters())


# ---------------------------------------------------------------------- parametrize

def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

        def right_inverse(self, a):
            return a.triu()
    return Symmetric()


def _scale(lib, s):
    class Scale(lib.nn.Module):
        def forward(self, x):
            return x * s

        def right_inverse(self, y):
            return y / s
    return Scale()


def _copy_sd(tm, em):
    return em.load_state_dict({k: E(npy(v)) for k, v in tm.state_dict().items()})


def test_register_parametrization_behaviour():
    P, TP = ember.nn.utils.parametrize, torch.nn.utils.parametrize
    em, tm = ember.nn.Linear(4, 4), torch.nn.Linear(4, 4)
    _copy_sd(tm, em)
    P.register_parametrization(em, "weight", _symmetric(ember))
    TP.register_parametrization(tm, "weight", _symmetric(torch))
    assert type(em).__name__ == type(tm).__name__ == "ParametrizedLinear"
    assert P.type_before_parametrizations(em) is ember.nn.Linear
    assert isinstance(em, ember.nn.Linear)
    assert P.is_parametrized(em) and P.is_parametrized(em, "weight")
    assert not P.is_parametrized(em, "bias")
    assert list(em.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    np.testing.assert_allclose(npy(em.weight), npy(tm.weight))
    w = npy(em.weight)
    np.testing.assert_array_equal(w, w.T)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    ye, yt = em(E(x)), tm(Tt(x))
    np.testing.assert_allclose(npy(ye), npy(yt), rtol=1e-5, atol=1e-6)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(npy(em.parametrizations.weight.original.grad),
                               npy(tm.parametrizations.weight.original.grad), rtol=1e-5)
    # assignment goes through right_inverse; chaining; repr
    s = np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32)
    s = s + s.T
    em.weight = E(s)
    tm.weight = Tt(s)
    np.testing.assert_allclose(npy(em.weight), npy(tm.weight), rtol=1e-6)
    P.register_parametrization(em, "weight", _scale(ember, 2.0))
    TP.register_parametrization(tm, "weight", _scale(torch, 2.0))
    np.testing.assert_allclose(npy(em.weight), npy(tm.weight), rtol=1e-6)
    assert repr(em) == repr(tm)
    # cached: one evaluation per context
    calls = []

    class Count(ember.nn.Module):
        def forward(self, x):
            calls.append(1)
            return x
    P.register_parametrization(em, "bias", Count())
    with P.cached():
        em.bias, em.bias
    assert len(calls) == 2        # one at registration (the unsafe check), one cached
    em.bias
    assert len(calls) == 3
    # remove: keep the parametrized value, or restore the original
    P.remove_parametrizations(em, "weight", leave_parametrized=True)
    TP.remove_parametrizations(tm, "weight", leave_parametrized=True)
    np.testing.assert_allclose(npy(em.weight), npy(tm.weight), rtol=1e-6)
    assert isinstance(em.weight, ember.nn.Parameter) and type(em).__name__ == "ParametrizedLinear"
    P.remove_parametrizations(em, "bias", leave_parametrized=False)
    assert type(em) is ember.nn.Linear and not hasattr(em, "parametrizations")
    assert list(em.state_dict()) == ["weight", "bias"]


def test_parametrize_errors():
    P, TP = ember.nn.utils.parametrize, torch.nn.utils.parametrize

    class Bad(ember.nn.Module):
        def forward(self, x):
            return x[0]

    class TBad(torch.nn.Module):
        def forward(self, x):
            return x[0]
    for lib, mod, bad, Pm in ((ember, ember.nn.Linear(3, 3), Bad(), P),
                              (torch, torch.nn.Linear(3, 3), TBad(), TP)):
        with pytest.raises(ValueError, match="may not change the shape"):
            Pm.register_parametrization(mod, "weight", bad)
        with pytest.raises(ValueError, match="does not have a parameter"):
            Pm.register_parametrization(mod, "nope", _symmetric(lib))
        with pytest.raises(ValueError, match="does not have a parametrization"):
            Pm.remove_parametrizations(mod, "weight")
        Pm.register_parametrization(mod, "weight", bad, unsafe=True)
        assert tuple(mod.weight.shape) == (3,)


def test_parametrized_buffer():
    m = ember.nn.Module()
    m.register_buffer("b", ember.ones(3))
    ember.nn.utils.parametrize.register_parametrization(m, "b", _scale(ember, 3.0))
    np.testing.assert_allclose(npy(m.b), [1.0, 1.0, 1.0])      # right_inverse keeps the value
    np.testing.assert_allclose(npy(m.parametrizations.b.original), [1 / 3] * 3, rtol=1e-6)
    assert list(m.state_dict()) == ["parametrizations.b.original"]
    assert list(m.buffers()) and not list(m.parameters())


# ------------------------------------------------------------ weight & spectral norm

@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_parametrization(dim):
    em, tm = ember.nn.Linear(3, 5), torch.nn.Linear(3, 5)
    _copy_sd(tm, em)
    ember.nn.utils.parametrizations.weight_norm(em, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(tm, dim=dim)
    assert list(em.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(npy(em.state_dict()[k]), npy(v), rtol=1e-6, err_msg=k)
    x = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    ye, yt = em(E(x)), tm(Tt(x))
    np.testing.assert_allclose(npy(ye), npy(yt), rtol=1e-5, atol=1e-6)
    ye.pow(2).sum().backward()
    yt.pow(2).sum().backward()
    for (n, a), (_, b) in zip(em.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(npy(a.grad), npy(b.grad), rtol=1e-4, atol=1e-6, err_msg=n)


def test_weight_norm_loads_legacy_state_dict():
    tm = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2))
    em = ember.nn.utils.parametrizations.weight_norm(ember.nn.Linear(3, 2))
    _copy_sd(tm, em)
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(npy(em(E(x))), npy(tm(Tt(x))), rtol=1e-5)


@pytest.mark.parametrize("make,dim", [(lambda L: L.nn.Linear(4, 6), None),
                                      (lambda L: L.nn.Linear(4, 6), 1)])
def test_spectral_norm_parametrization(make, dim):
    em, tm = make(ember), make(torch)
    kw = {} if dim is None else {"dim": dim}
    torch.nn.utils.parametrizations.spectral_norm(tm, **kw)
    ember.nn.utils.parametrizations.spectral_norm(em, **kw)
    assert list(em.state_dict()) == list(tm.state_dict())
    _copy_sd(tm, em)
    x = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    for train in (True, True, False):
        em.train(train), tm.train(train)
        ye, yt = em(E(x)), tm(Tt(x))
        np.testing.assert_allclose(npy(ye), npy(yt), rtol=1e-4, atol=1e-5)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(npy(em.parametrizations.weight.original.grad),
                               npy(tm.parametrizations.weight.original.grad), rtol=1e-4,
                               atol=1e-6)
    sv = np.linalg.svd(npy(em.weight), compute_uv=False)[0]
    assert abs(sv - 1) < 0.05
    with pytest.raises(ValueError):
        ember.nn.utils.parametrizations.spectral_norm(ember.nn.Linear(2, 2), "nope")
    with pytest.raises(IndexError):
        ember.nn.utils.parametrizations.spectral_norm(ember.nn.Linear(2, 2), dim=3)


def test_legacy_weight_norm():
    em, tm = ember.nn.Linear(3, 4), torch.nn.Linear(3, 4)
    _copy_sd(tm, em)
    with pytest.warns(FutureWarning):
        ember.nn.utils.weight_norm(em)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.nn.utils.weight_norm(tm)
    assert sorted(em.state_dict()) == sorted(tm.state_dict())
    _copy_sd(tm, em)
    x = np.random.default_rng(4).standard_normal((2, 3)).astype(np.float32)
    ye, yt = em(E(x)), tm(Tt(x))
    np.testing.assert_allclose(npy(ye), npy(yt), rtol=1e-5, atol=1e-6)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(npy(em.weight_g.grad), npy(tm.weight_g.grad), rtol=1e-4)
    np.testing.assert_allclose(npy(em.weight_v.grad), npy(tm.weight_v.grad), rtol=1e-4)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ember.nn.utils.weight_norm(em)
    ember.nn.utils.remove_weight_norm(em)
    torch.nn.utils.remove_weight_norm(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    np.testing.assert_allclose(npy(em.weight), npy(tm.weight), rtol=1e-5)
    with pytest.raises(ValueError):
        ember.nn.utils.remove_weight_norm(em)


def test_legacy_spectral_norm():
    em, tm = ember.nn.Linear(5, 3), torch.nn.Linear(5, 3)
    ember.nn.utils.spectral_norm(em)
    torch.nn.utils.spectral_norm(tm)
    assert sorted(em.state_dict()) == sorted(tm.state_dict())
    _copy_sd(tm, em)
    x = np.random.default_rng(5).standard_normal((2, 5)).astype(np.float32)
    for train in (True, True, False):
        em.train(train), tm.train(train)
        ye, yt = em(E(x)), tm(Tt(x))
        np.testing.assert_allclose(npy(ye), npy(yt), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(npy(em.weight_u), npy(tm.weight_u), rtol=1e-4, atol=1e-6)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(npy(em.weight_orig.grad), npy(tm.weight_orig.grad), rtol=1e-4,
                               atol=1e-6)
    ember.nn.utils.remove_spectral_norm(em)
    torch.nn.utils.remove_spectral_norm(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    np.testing.assert_allclose(npy(em.weight), npy(tm.weight), rtol=1e-4)
    with pytest.raises(ValueError):
        ember.nn.utils.spectral_norm(ember.nn.Linear(2, 2), n_power_iterations=0)


def test_orthogonal_is_reported_missing():
    with pytest.raises(NotImplementedError, match="orthogonal"):
        ember.nn.utils.parametrizations.orthogonal(ember.nn.Linear(3, 3))


# --------------------------------------------------------------------------- fusion

def test_fuse_linear_bn_eval():
    if not hasattr(ember.nn, "BatchNorm1d"):
        pytest.skip("nn.BatchNorm1d not available")
    le, lt = ember.nn.Linear(3, 4), torch.nn.Linear(3, 4)
    be, bt = ember.nn.BatchNorm1d(4), torch.nn.BatchNorm1d(4)
    _copy_sd(lt, le)
    rng = np.random.default_rng(6)
    with torch.no_grad():
        bt.running_mean.copy_(Tt(rng.standard_normal(4).astype(np.float32)))
        bt.running_var.copy_(Tt(rng.uniform(0.5, 2, 4).astype(np.float32)))
        bt.weight.copy_(Tt(rng.standard_normal(4).astype(np.float32)))
    _copy_sd(bt, be)
    for m in (le, lt, be, bt):
        m.eval()
    fe = ember.nn.utils.fuse_linear_bn_eval(le, be)
    ft = torch.nn.utils.fuse_linear_bn_eval(lt, bt)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(npy(fe(E(x))), npy(ft(Tt(x))), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(npy(fe(E(x))), npy(be(le(E(x)))), rtol=1e-5, atol=1e-5)
    assert isinstance(fe.weight, ember.nn.Parameter) and fe is not le
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        ember.nn.utils.fuse_linear_bn_eval(le.train(), be)


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_eval(transpose):
    if not (hasattr(ember.nn, "Conv2d") and hasattr(ember.nn, "BatchNorm2d")):
        pytest.skip("nn.Conv2d / nn.BatchNorm2d not available")
    C = "ConvTranspose2d" if transpose else "Conv2d"
    ce, ct = getattr(ember.nn, C)(2, 4, 3, bias=not transpose), getattr(torch.nn, C)(
        2, 4, 3, bias=not transpose)
    be, bt = ember.nn.BatchNorm2d(4), torch.nn.BatchNorm2d(4)
    _copy_sd(ct, ce)
    rng = np.random.default_rng(7)
    with torch.no_grad():
        bt.running_mean.copy_(Tt(rng.standard_normal(4).astype(np.float32)))
        bt.running_var.copy_(Tt(rng.uniform(0.5, 2, 4).astype(np.float32)))
        bt.bias.copy_(Tt(rng.standard_normal(4).astype(np.float32)))
    _copy_sd(bt, be)
    for m in (ce, ct, be, bt):
        m.eval()
    fe = ember.nn.utils.fuse_conv_bn_eval(ce, be, transpose)
    ft = torch.nn.utils.fuse_conv_bn_eval(ct, bt, transpose)
    x = rng.standard_normal((2, 2, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(npy(fe(E(x))), npy(ft(Tt(x))), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(npy(fe(E(x))), npy(be(ce(E(x)))), rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------ functional_call

def test_functional_call():
    from torch.func import functional_call as t_fc
    fc = ember.nn.utils.stateless.functional_call
    em = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 2))
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    _copy_sd(tm, em)
    rng = np.random.default_rng(8)
    new = {"0.weight": rng.standard_normal((4, 3)).astype(np.float32),
           "2.bias": rng.standard_normal(2).astype(np.float32)}
    x = rng.standard_normal((5, 3)).astype(np.float32)
    ne = {k: E(v, requires_grad=True) for k, v in new.items()}
    nt = {k: Tt(v, requires_grad=True) for k, v in new.items()}
    ye, yt = fc(em, ne, (E(x),)), t_fc(tm, nt, (Tt(x),))
    np.testing.assert_allclose(npy(ye), npy(yt), rtol=1e-5, atol=1e-6)
    ye.sum().backward()
    yt.sum().backward()
    for k in new:
        np.testing.assert_allclose(npy(ne[k].grad), npy(nt[k].grad), rtol=1e-5, atol=1e-6)
    # originals are restored and untouched
    assert em[0].weight.grad is None and isinstance(em[0].weight, ember.nn.Parameter)
    np.testing.assert_array_equal(npy(em[0].weight), npy(tm[0].weight))
    ye2 = fc(em, ({"0.weight": ne["0.weight"]}, {"2.bias": ne["2.bias"]}), E(x))
    np.testing.assert_allclose(npy(ye2), npy(ye))
    with pytest.raises(RuntimeError, match="Missing key"):
        fc(em, ne, (E(x),), strict=True)
    with pytest.raises(ValueError):
        fc(em, ({"2.bias": ne["2.bias"]}, {"2.bias": ne["2.bias"]}), (E(x),))


def test_functional_call_tied_weights():
    fc = ember.nn.utils.stateless.functional_call
    m = ember.nn.Module()
    m.a = ember.nn.Linear(2, 2, bias=False)
    m.b = ember.nn.Linear(2, 2, bias=False)
    m.b.weight = m.a.weight
    m.forward = lambda x: m.b(m.a(x))
    w = ember.eye(2) * 2
    y = fc(m, {"a.weight": w}, (ember.ones(1, 2),))
    np.testing.assert_allclose(npy(y), [[4.0, 4.0]])
    y = fc(m, {"a.weight": w}, (ember.ones(1, 2),), tie_weights=False)
    assert not np.allclose(npy(y), [[4.0, 4.0]])
