"""ember.distributions against torch.distributions: values, gradients, shapes, sample
statistics, validation errors."""
import numpy as np
import pytest

import ember
import ember.distributions as ED

torch = pytest.importorskip("torch")
TD = torch.distributions


def E(x, grad=False):
    t = ember.tensor(np.asarray(x, dtype=np.float64))
    return t.requires_grad_() if grad else t


def T(x, grad=False):
    t = torch.tensor(np.asarray(x, dtype=np.float64))
    return t.requires_grad_() if grad else t


def close(e, t, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(np.asarray(e.detach().numpy(), dtype=np.float64),
                               t.detach().numpy().astype(np.float64), rtol=rtol, atol=atol)


# name, params (arrays), value to score, has cdf, has entropy
CASES = [
    ("Normal", [[0.3, -1.0, 2.0], [1.5, 0.4, 2.0]], [0.1, -2.0, 3.5], True, True),
    ("Uniform", [[-1.0, 0.0, 2.0], [1.0, 3.0, 2.5]], [0.5, 2.9, 2.1], True, True),
    ("Exponential", [[0.5, 2.0, 3.0]], [0.3, 1.0, 0.05], True, True),
    ("Laplace", [[0.0, 1.0, -2.0], [1.0, 0.5, 3.0]], [0.4, 2.0, -7.0], True, True),
    ("Cauchy", [[0.0, 1.0, -2.0], [1.0, 0.5, 3.0]], [0.4, 2.0, -7.0], True, True),
    ("Gumbel", [[0.0, 1.0, -2.0], [1.0, 0.5, 3.0]], [0.4, 2.0, -7.0], False, True),
    ("LogNormal", [[0.0, 1.0, -0.5], [1.0, 0.5, 0.3]], [0.4, 2.0, 0.7], True, True),
    ("HalfNormal", [[1.0, 0.5, 3.0]], [0.4, 2.0, 0.7], True, True),
    ("Gamma", [[0.5, 2.0, 7.5], [1.0, 0.5, 3.0]], [0.4, 2.0, 1.7], True, True),
    ("Chi2", [[0.5, 2.0, 7.5]], [0.4, 2.0, 1.7], True, True),
    ("Beta", [[0.5, 2.0, 7.5], [1.0, 0.5, 3.0]], [0.4, 0.9, 0.7], False, True),
    ("StudentT", [[0.5, 2.0, 7.5], [0.0, 1.0, -1.0], [1.0, 2.0, 0.5]], [0.4, 2.0, -0.7],
     False, True),
    ("Poisson", [[0.5, 4.0, 30.0]], [0.0, 3.0, 27.0], False, False),
    ("Geometric", [[0.2, 0.5, 0.9]], [0.0, 3.0, 1.0], False, True),
    ("Pareto", [[1.0, 0.5, 2.0], [3.0, 4.5, 5.0]], [1.5, 0.7, 2.5], True, True),
    ("Weibull", [[1.0, 0.5, 2.0], [1.5, 3.0, 0.8]], [1.5, 0.7, 2.5], True, True),
    ("Kumaraswamy", [[1.5, 0.5, 2.0], [3.0, 4.5, 0.8]], [0.2, 0.7, 0.5], False, True),
    ("InverseGamma", [[3.5, 4.0, 5.0], [1.0, 0.5, 3.0]], [0.4, 2.0, 1.7], False, True),
    ("FisherSnedecor", [[3.0, 6.0, 10.0], [9.0, 12.0, 15.0]], [0.4, 2.0, 1.7], False, False),
    ("ContinuousBernoulli", [[0.2, 0.5, 0.9]], [0.3, 0.5, 0.95], True, True),
    ("NegativeBinomial", [[3.0, 5.0, 10.0], [0.2, 0.5, 0.7]], [0.0, 3.0, 12.0], False, False),
]


def build(lib, name, params, grad=False):
    conv = E if lib is ember else T
    mod = ED if lib is ember else TD
    ps = [conv(p, grad) for p in params]
    return getattr(mod, name)(*ps), ps


@pytest.mark.parametrize("name,params,value,has_cdf,has_entropy", CASES,
                         ids=[c[0] for c in CASES])
def test_values_and_grads_match_torch(name, params, value, has_cdf, has_entropy):
    de, pe = build(ember, name, params, grad=True)
    dt, pt = build(torch, name, params, grad=True)
    assert tuple(de.batch_shape) == tuple(dt.batch_shape)
    assert tuple(de.event_shape) == tuple(dt.event_shape)
    lpe, lpt = de.log_prob(E(value)), dt.log_prob(T(value))
    close(lpe, lpt)
    lpe.sum().backward()
    lpt.sum().backward()
    for a, b in zip(pe, pt):
        close(a.grad, b.grad, rtol=1e-5)
    if has_cdf:
        close(de.cdf(E(value)), dt.cdf(T(value)))
    if has_entropy:
        close(de.entropy(), dt.entropy())
    for attr in ("mean", "variance", "stddev", "mode"):
        try:
            vt = getattr(dt, attr)
        except NotImplementedError:
            continue
        close(getattr(de, attr), vt)


@pytest.mark.parametrize("name,params,value,has_cdf,has_entropy", CASES,
                         ids=[c[0] for c in CASES])
def test_sample_shapes_and_means(name, params, value, has_cdf, has_entropy):
    de, _ = build(ember, name, params)
    dt, _ = build(torch, name, params)
    ember.manual_seed(0)
    s = de.sample((4000,))
    assert tuple(s.shape) == tuple(dt.sample((4000,)).shape) == (4000, 3)
    assert s.dtype == ember.float64
    x = s.numpy()
    mean_t, sd = dt.mean.numpy(), dt.stddev.numpy()
    ok = np.isfinite(sd)   # heavy tails (Cauchy, StudentT with df <= 2): compare medians
    assert np.all(np.abs(x.mean(0) - mean_t)[ok] < 5 * sd[ok] / np.sqrt(4000) + 1e-9), name
    torch.manual_seed(0)
    med_t = np.median(dt.sample((4000,)).numpy(), axis=0)
    spread = np.subtract(*np.percentile(x, [75, 25], axis=0))
    assert np.all(np.abs(np.median(x, 0) - med_t)[~ok] < 0.15 * spread[~ok]), name
    assert bool(dt.support.check(torch.from_numpy(s.numpy())).all()), name


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Exponential", "Laplace", "Gamma",
                                  "Beta", "StudentT", "LogNormal", "Gumbel", "Weibull",
                                  "Kumaraswamy", "InverseGamma", "ContinuousBernoulli"])
def test_rsample_gradient_matches_expectation(name):
    """d/dtheta E[f(x)] by rsample equals torch's within Monte Carlo error."""
    params = {c[0]: c[1] for c in CASES}[name]
    if name == "StudentT":   # finite means only
        params = [[3.0, 5.0, 7.5], [0.0, 1.0, -1.0], [1.0, 2.0, 0.5]]
    de, pe = build(ember, name, params, grad=True)
    dt, pt = build(torch, name, params, grad=True)
    ember.manual_seed(1)
    torch.manual_seed(1)
    n = 20000
    f_e = de.rsample((n,))
    f_t = dt.rsample((n,))
    clip = (lambda x: x.clamp(max=20.0)) if name == "LogNormal" else (lambda x: x)
    clip(f_e).mean(0).sum().backward()
    clip(f_t).mean(0).sum().backward()
    for a, b in zip(pe, pt):
        ge, gt = a.grad.numpy(), b.grad.numpy()
        assert np.all(np.abs(ge - gt) <= 0.08 * (1 + np.abs(gt))), (name, ge, gt)


def test_categorical_family():
    logits = np.array([[0.1, 2.0, -1.0], [0.5, 0.5, 0.0]])
    ce = ED.Categorical(logits=E(logits, True))
    ct = TD.Categorical(logits=T(logits, True))
    v = [2, 0]
    lpe = ce.log_prob(ember.tensor(v))
    lpt = ct.log_prob(torch.tensor(v))
    close(lpe, lpt)
    close(ce.entropy(), ct.entropy())
    close(ce.probs, ct.probs)
    ce.entropy().sum().backward()
    ct.entropy().sum().backward()
    s = ce.sample((5000,))
    assert tuple(s.shape) == (5000, 2) and s.dtype == ember.int64
    freq = np.stack([(s.numpy() == k).mean(0) for k in range(3)], -1)
    np.testing.assert_allclose(freq, ct.probs.detach().numpy(), atol=0.03)
    oe = ED.OneHotCategorical(probs=E([0.2, 0.3, 0.5]))
    ot = TD.OneHotCategorical(probs=T([0.2, 0.3, 0.5]))
    close(oe.log_prob(E([0, 1, 0])), ot.log_prob(T([0, 1, 0])))
    assert tuple(oe.sample((7,)).shape) == (7, 3)
    assert tuple(oe.enumerate_support().shape) == tuple(ot.enumerate_support().shape)
    be = ED.Bernoulli(logits=E([0.3, -2.0]))
    bt = TD.Bernoulli(logits=T([0.3, -2.0]))
    close(be.log_prob(E([1.0, 0.0])), bt.log_prob(T([1.0, 0.0])))
    close(be.entropy(), bt.entropy())
    ne = ED.Binomial(10, probs=E([0.3, 0.8]))
    nt = TD.Binomial(10, probs=T([0.3, 0.8]))
    close(ne.log_prob(E([3.0, 9.0])), nt.log_prob(T([3.0, 9.0])))
    close(ne.entropy(), nt.entropy())
    np.testing.assert_allclose(ne.sample((4000,)).numpy().mean(0), [3.0, 8.0], atol=0.15)


def test_multivariate_normal():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(2, 3, 3))
    cov = A @ A.transpose(0, 2, 1) + 0.5 * np.eye(3)
    loc = rng.normal(size=(2, 3))
    loc_e, loc_t = E(loc, True), T(loc, True)
    me = ED.MultivariateNormal(loc_e, covariance_matrix=E(cov, True))
    mt = TD.MultivariateNormal(loc_t, covariance_matrix=T(cov, True))
    x = rng.normal(size=(4, 2, 3))
    lpe, lpt = me.log_prob(E(x)), mt.log_prob(T(x))
    close(lpe, lpt)
    lpe.sum().backward()
    lpt.sum().backward()
    close(loc_e.grad, loc_t.grad, rtol=1e-5)
    close(me.entropy(), mt.entropy())
    close(me.variance, mt.variance)
    close(me.precision_matrix, mt.precision_matrix, rtol=1e-5)
    pe = ED.MultivariateNormal(E(loc), precision_matrix=E(np.linalg.inv(cov)))
    close(pe.log_prob(E(x)), lpt)
    q_e = ED.MultivariateNormal(E(loc[::-1].copy()), scale_tril=E(np.linalg.cholesky(cov)))
    q_t = TD.MultivariateNormal(T(loc[::-1].copy()), scale_tril=T(np.linalg.cholesky(cov)))
    close(ED.kl_divergence(me, q_e), TD.kl_divergence(mt, q_t), rtol=1e-5)
    s = me.sample((3000,))
    assert tuple(s.shape) == (3000, 2, 3)
    np.testing.assert_allclose(np.cov(s.numpy()[:, 0].T), cov[0], atol=0.3 * np.abs(cov).max())


def test_dirichlet():
    c = [[0.5, 2.0, 3.0], [1.5, 1.0, 0.7]]
    de, dt = ED.Dirichlet(E(c, True)), TD.Dirichlet(T(c, True))
    v = [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]
    close(de.log_prob(E(v)), dt.log_prob(T(v)))
    close(de.entropy(), dt.entropy())
    close(de.mean, dt.mean)
    close(de.variance, dt.variance)
    s = de.sample((4000,))
    np.testing.assert_allclose(s.numpy().mean(0), dt.mean.detach().numpy(), atol=0.02)
    np.testing.assert_allclose(s.numpy().sum(-1), 1.0, atol=1e-9)


KL_PAIRS = [
    ("Normal", [[0.0, 1.0], [1.0, 2.0]], [[0.5, -1.0], [2.0, 0.5]]),
    ("Exponential", [[0.5, 2.0]], [[1.5, 0.3]]),
    ("Laplace", [[0.0, 1.0], [1.0, 2.0]], [[0.5, -1.0], [2.0, 0.5]]),
    ("Gamma", [[0.5, 2.0], [1.0, 3.0]], [[1.5, 0.7], [2.0, 0.5]]),
    ("Beta", [[0.5, 2.0], [1.0, 3.0]], [[1.5, 0.7], [2.0, 0.5]]),
    ("Poisson", [[0.5, 2.0]], [[1.5, 0.3]]),
    ("Geometric", [[0.5, 0.2]], [[0.1, 0.3]]),
    ("Gumbel", [[0.0, 1.0], [1.0, 2.0]], [[0.5, -1.0], [2.0, 0.5]]),
    ("LogNormal", [[0.0, 1.0], [1.0, 2.0]], [[0.5, -1.0], [2.0, 0.5]]),
    ("Uniform", [[0.0, 1.0], [1.0, 2.0]], [[-0.5, 0.5], [2.0, 2.5]]),
]


@pytest.mark.parametrize("name,pp,qp", KL_PAIRS, ids=[k[0] for k in KL_PAIRS])
def test_kl_divergence_matches_torch(name, pp, qp):
    pe, ppe = build(ember, name, pp, grad=True)
    qe, _ = build(ember, name, qp)
    pt, ppt = build(torch, name, pp, grad=True)
    qt, _ = build(torch, name, qp)
    ke, kt = ED.kl_divergence(pe, qe), TD.kl_divergence(pt, qt)
    close(ke, kt)
    if np.isfinite(kt.detach().numpy()).all():
        ke.sum().backward()
        kt.sum().backward()
        for a, b in zip(ppe, ppt):
            close(a.grad, b.grad, rtol=1e-5)


def test_infinite_kl_table_mirrors_torch_registry():
    """Every support-mismatch pair resolves to the same kind of rule as torch's registry."""
    from torch.distributions.kl import _dispatch_kl as torch_dispatch

    from ember.distributions.kl import _dispatch_kl
    from ember.distributions.kl_cross import _INFINITE_KL
    for type_p, _, types_q in _INFINITE_KL:
        for type_q in types_q:
            want = torch_dispatch(getattr(TD, type_p.__name__), getattr(TD, type_q.__name__))
            assert _dispatch_kl(type_p, type_q).__name__ == want.__name__


def test_kl_other_pairs_and_register():
    for make_e, make_t in [
        (lambda m: m.Bernoulli(probs=(E if m is ED else T)([0.2, 0.7])),
         lambda m: m.Bernoulli(probs=(E if m is ED else T)([0.5, 0.1]))),
        (lambda m: m.Categorical(probs=(E if m is ED else T)([0.2, 0.3, 0.5])),
         lambda m: m.Categorical(probs=(E if m is ED else T)([0.6, 0.3, 0.1]))),
        (lambda m: m.Dirichlet((E if m is ED else T)([0.5, 2.0, 1.0])),
         lambda m: m.Dirichlet((E if m is ED else T)([1.5, 1.0, 3.0]))),
        (lambda m: m.Independent(m.Normal((E if m is ED else T)([0.0, 1.0]),
                                          (E if m is ED else T)([1.0, 2.0])), 1),
         lambda m: m.Independent(m.Normal((E if m is ED else T)([0.5, 1.0]),
                                          (E if m is ED else T)([1.0, 0.5])), 1)),
        (lambda m: m.Uniform((E if m is ED else T)([0.0]), (E if m is ED else T)([1.0])),
         lambda m: m.Normal((E if m is ED else T)([0.5]), (E if m is ED else T)([2.0]))),
    ]:
        close(ED.kl_divergence(make_e(ED), make_t(ED)), TD.kl_divergence(make_e(TD),
                                                                          make_t(TD)))
    with pytest.raises(NotImplementedError):
        ED.kl_divergence(ED.Cauchy(0.0, 1.0), ED.Normal(1.0, 1.0))

    class MyNormal(ED.Normal):
        pass

    @ED.register_kl(MyNormal, MyNormal)
    def _kl(p, q):
        return ember.zeros(())

    assert float(ED.kl_divergence(MyNormal(0.0, 1.0), MyNormal(3.0, 1.0))) == 0.0
    # subclasses without a registration use their parents'
    class Other(ED.Normal):
        pass
    assert float(ED.kl_divergence(Other(0.0, 1.0), Other(0.0, 1.0))) == 0.0


def test_validate_args_errors_match_torch():
    for mod, conv in ((ED, E), (TD, T)):
        with pytest.raises(ValueError, match="Expected parameter scale"):
            mod.Normal(conv([0.0]), conv([-1.0]), validate_args=True)
        with pytest.raises(ValueError, match="Either `probs` or `logits`"):
            mod.Bernoulli(probs=conv([0.5]), logits=conv([0.0]))
        with pytest.raises(ValueError, match="within the support"):
            mod.Exponential(conv([1.0]), validate_args=True).log_prob(conv([-1.0]))
        with pytest.raises(ValueError, match="The value argument to log_prob must be a"):
            mod.Normal(conv([0.0]), conv([1.0]), validate_args=True).log_prob([0.0])
        with pytest.raises(ValueError, match="Expected parameter"):
            mod.Uniform(conv([1.0]), conv([0.0]), validate_args=True)
    msg_e = str(pytest.raises(ValueError, ED.Normal, E([0.0]), E([-1.0]),
                              validate_args=True).value)
    msg_t = str(pytest.raises(ValueError, TD.Normal, T([0.0]), T([-1.0]),
                              validate_args=True).value)
    assert msg_e.split("(")[0] == msg_t.split("(")[0]
    assert "GreaterThan(lower_bound=0.0)" in msg_e and "GreaterThan(lower_bound=0.0)" in msg_t


def test_expand_independent_transformed_mixture():
    n = ED.Normal(E([0.0, 1.0]), E([1.0, 2.0]))
    ex = n.expand((3, 2))
    assert tuple(ex.batch_shape) == (3, 2)
    assert tuple(ex.sample((5,)).shape) == (5, 3, 2)
    ind = ED.Independent(n, 1)
    assert tuple(ind.batch_shape) == () and tuple(ind.event_shape) == (2,)
    close(ind.log_prob(E([0.3, 0.4])), TD.Independent(TD.Normal(T([0.0, 1.0]),
                                                                T([1.0, 2.0])), 1)
          .log_prob(T([0.3, 0.4])))
    base_e, base_t = ED.Normal(E([0.0]), E([1.0])), TD.Normal(T([0.0]), T([1.0]))
    te = ED.TransformedDistribution(base_e, [ED.AffineTransform(1.0, 2.0),
                                             ED.SigmoidTransform()])
    tt = TD.TransformedDistribution(base_t, [TD.AffineTransform(1.0, 2.0),
                                             TD.SigmoidTransform()])
    close(te.log_prob(E([0.3])), tt.log_prob(T([0.3])))
    close(te.cdf(E([0.3])), tt.cdf(T([0.3])))
    for tr_e, tr_t, x in [(ED.TanhTransform(), TD.TanhTransform(), [0.3, -1.2]),
                          (ED.ExpTransform(), TD.ExpTransform(), [0.3, -1.2]),
                          (ED.PowerTransform(2.0), TD.PowerTransform(2.0), [0.3, 1.2]),
                          (ED.SoftplusTransform(), TD.SoftplusTransform(), [0.3, -1.2])]:
        ye, yt = tr_e(E(x)), tr_t(T(x))
        close(ye, yt)
        close(tr_e.log_abs_det_jacobian(E(x), ye), tr_t.log_abs_det_jacobian(T(x), yt))
        close(tr_e.inv(ye), tr_t.inv(yt))
    sb_e, sb_t = ED.StickBreakingTransform(), TD.StickBreakingTransform()
    x = [0.3, -1.2, 0.5]
    close(sb_e(E(x)), sb_t(T(x)))
    close(sb_e.log_abs_det_jacobian(E(x), sb_e(E(x))),
          sb_t.log_abs_det_jacobian(T(x), sb_t(T(x))))
    close(sb_e.inv(sb_e(E(x))), E(x))
    mix_e = ED.MixtureSameFamily(ED.Categorical(probs=E([0.3, 0.7])),
                                 ED.Normal(E([-1.0, 2.0]), E([0.5, 1.0])))
    mix_t = TD.MixtureSameFamily(TD.Categorical(probs=T([0.3, 0.7])),
                                 TD.Normal(T([-1.0, 2.0]), T([0.5, 1.0])))
    v = [0.0, 1.5, -1.0]
    close(mix_e.log_prob(E(v)), mix_t.log_prob(T(v)))
    close(mix_e.mean, mix_t.mean)
    close(mix_e.variance, mix_t.variance)
    close(mix_e.cdf(E(v)), mix_t.cdf(T(v)))
    s = mix_e.sample((4000,))
    assert tuple(s.shape) == (4000,)
    assert abs(float(s.mean()) - float(mix_t.mean)) < 0.15


def test_relaxed():
    temp = 0.7
    re = ED.RelaxedBernoulli(E(temp), probs=E([0.3, 0.8]))
    rt = TD.RelaxedBernoulli(T(temp), probs=T([0.3, 0.8]))
    close(re.log_prob(E([0.2, 0.9])), rt.log_prob(T([0.2, 0.9])))
    s = re.rsample((10,))
    assert tuple(s.shape) == (10, 2) and bool(((s > 0) & (s < 1)).all())
    oe = ED.RelaxedOneHotCategorical(E(temp), probs=E([0.2, 0.3, 0.5]))
    ot = TD.RelaxedOneHotCategorical(T(temp), probs=T([0.2, 0.3, 0.5]))
    v = [0.1, 0.3, 0.6]
    close(oe.log_prob(E(v)), ot.log_prob(T(v)), rtol=1e-5)
    s = oe.rsample((10,))
    np.testing.assert_allclose(s.sum(-1).numpy(), 1.0, atol=1e-9)


def test_transform_to_and_constraints():
    for c_e, c_t in [(ED.constraints.positive, TD.constraints.positive),
                     (ED.constraints.interval(-1.0, 3.0), TD.constraints.interval(-1.0, 3.0)),
                     (ED.constraints.simplex, TD.constraints.simplex)]:
        x = [0.3, -2.0, 1.0]
        close(ED.transform_to(c_e)(E(x)), TD.transform_to(c_t)(T(x)))
        close(ED.biject_to(c_e)(E(x)), TD.biject_to(c_t)(T(x)))
        assert repr(c_e) == repr(c_t)
    assert repr(ED.Normal.arg_constraints["scale"]) == repr(TD.Normal.arg_constraints["scale"])


def test_multinomial_logistic_normal_von_mises():
    p = [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]
    me, mt = ED.Multinomial(10, probs=E(p)), TD.Multinomial(10, probs=T(p))
    v = [[2.0, 3.0, 5.0], [7.0, 3.0, 0.0]]
    close(me.log_prob(E(v)), mt.log_prob(T(v)))
    close(me.entropy(), mt.entropy())
    s = me.sample((3000,))
    assert tuple(s.shape) == (3000, 2, 3)
    np.testing.assert_allclose(s.numpy().sum(-1), 10.0)
    np.testing.assert_allclose(s.numpy().mean(0), 10 * np.array(p), atol=0.15)
    le = ED.LogisticNormal(E([0.1, -0.5]), E([1.0, 0.5]))
    lt = TD.LogisticNormal(T([0.1, -0.5]), T([1.0, 0.5]))
    x = [0.2, 0.5, 0.3]
    close(le.log_prob(E(x)), lt.log_prob(T(x)))
    assert tuple(le.sample((4,)).shape) == (4, 3)
    ve = ED.VonMises(E([0.5, -2.0]), E([2.0, 8.0]))
    vt = TD.VonMises(T([0.5, -2.0]), T([2.0, 8.0]))
    close(ve.log_prob(E([0.1, 3.0])), vt.log_prob(T([0.1, 3.0])))
    close(ve.variance, vt.variance)
    s = ve.sample((4000,)).numpy()
    assert np.all(np.abs(s) <= np.pi)
    circ_mean = np.angle(np.exp(1j * s).mean(0))
    np.testing.assert_allclose(circ_mean, [0.5, -2.0], atol=0.08)


def test_lowrank_mvn_and_generalized_pareto():
    rng = np.random.default_rng(3)
    loc, W, D = rng.normal(size=(2, 4)), rng.normal(size=(2, 4, 2)), rng.uniform(0.5, 2, (2, 4))
    le = ED.LowRankMultivariateNormal(E(loc), E(W, True), E(D))
    lt = TD.LowRankMultivariateNormal(T(loc), T(W, True), T(D))
    x = rng.normal(size=(3, 2, 4))
    lpe, lpt = le.log_prob(E(x)), lt.log_prob(T(x))
    close(lpe, lpt)
    lpe.sum().backward()
    lpt.sum().backward()
    close(le._unbroadcasted_cov_factor.grad, lt._unbroadcasted_cov_factor.grad, rtol=1e-5)
    for attr in ("variance", "covariance_matrix", "precision_matrix", "scale_tril"):
        close(getattr(le, attr), getattr(lt, attr), rtol=1e-5)
    close(le.entropy(), lt.entropy())
    s = le.sample((4000,)).numpy()
    np.testing.assert_allclose(s.mean(0), loc, atol=0.15)
    # float32: torch's GeneralizedPareto compares with a float32 zero internally
    params = [[0.0, 1.0, -0.5], [1.0, 2.0, 0.5], [0.3, 0.0, -0.2]]

    def E32(x):
        return ember.tensor(x, dtype=ember.float32)

    def T32(x):
        return torch.tensor(x, dtype=torch.float32)
    ge = ED.GeneralizedPareto(*[E32(p) for p in params])
    gt = TD.GeneralizedPareto(*[T32(p) for p in params])
    v = [0.5, 3.0, 0.4]
    for a, b in [(ge.log_prob(E32(v)), gt.log_prob(T32(v))), (ge.cdf(E32(v)), gt.cdf(T32(v))),
                 (ge.icdf(E32([0.3, 0.6, 0.9])), gt.icdf(T32([0.3, 0.6, 0.9]))),
                 (ge.mean, gt.mean), (ge.variance, gt.variance), (ge.entropy(), gt.entropy())]:
        close(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.median(ge.sample((4000,)).numpy(), 0),
                               gt.icdf(T32([0.5] * 3)).numpy(), rtol=0.1, atol=0.05)


def test_lkj_cholesky_and_wishart():
    le, lt = ED.LKJCholesky(3, E([0.5, 2.0])), TD.LKJCholesky(3, T([0.5, 2.0]))
    torch.manual_seed(0)
    v = lt.sample()
    close(le.log_prob(E(v.numpy())), lt.log_prob(v))
    s = le.sample((500,))
    assert tuple(s.shape) == (500, 2, 3, 3)
    assert bool(TD.constraints.corr_cholesky.check(torch.from_numpy(s.numpy())).all())
    rng = np.random.default_rng(1)
    A = rng.normal(size=(3, 3))
    cov = A @ A.T + np.eye(3)
    df_e, df_t = E([4.0, 6.5], True), T([4.0, 6.5], True)
    we = ED.Wishart(df_e, covariance_matrix=E(cov))
    wt = TD.Wishart(df_t, covariance_matrix=T(cov))
    x = wt.sample()
    lpe, lpt = we.log_prob(E(x.numpy())), wt.log_prob(x)
    close(lpe, lpt, rtol=1e-6)
    lpe.sum().backward()
    lpt.sum().backward()
    close(df_e.grad, df_t.grad, rtol=1e-5)
    close(we.entropy(), wt.entropy())
    close(we.mean, wt.mean)
    close(we.variance, wt.variance)
    close(we.precision_matrix, wt.precision_matrix, rtol=1e-6)
    draws = we.sample((3000,)).numpy()
    np.testing.assert_allclose(draws.mean(0), wt.mean.detach().numpy(),
                               atol=0.12 * np.abs(wt.mean.detach().numpy()).max())


def _kl_make(mod, conv, name, k):
    """One parameter set per family (k picks a second, different set for q)."""
    a = [0.3, 1.7][k]
    b = [0.8, 2.5][k]
    x = lambda v: conv([v, v * 1.1])   # noqa: E731
    rng = np.random.default_rng(k)
    W = rng.normal(size=(2, 3, 2))
    D = rng.uniform(0.5, 2.0, (2, 3))
    A = rng.normal(size=(3, 3))
    cov = np.stack([A @ A.T + np.eye(3)] * 2)
    return {
        "Normal": lambda: mod.Normal(x(a), x(b)),
        "Laplace": lambda: mod.Laplace(x(a), x(b)),
        "Gumbel": lambda: mod.Gumbel(x(a), x(b)),
        "Cauchy": lambda: mod.Cauchy(x(a), x(b)),
        "HalfNormal": lambda: mod.HalfNormal(x(b)),
        "Exponential": lambda: mod.Exponential(x(b)),
        "Gamma": lambda: mod.Gamma(x(b), x(a + 0.5)),
        "Beta": lambda: mod.Beta(x(b), x(a + 0.5)),
        "Uniform": lambda: mod.Uniform(x(0.1 * (k + 1)), x(0.6 + 0.2 * k)),
        "Pareto": lambda: mod.Pareto(x(0.5 + k), x(2.5 + k)),
        "ContinuousBernoulli": lambda: mod.ContinuousBernoulli(x(0.2 + 0.5 * k)),
        "Bernoulli": lambda: mod.Bernoulli(x(0.2 + 0.5 * k)),
        "Binomial": lambda: mod.Binomial(5, x(0.2 + 0.5 * k)),
        "Poisson": lambda: mod.Poisson(x(b)),
        "MultivariateNormal": lambda: mod.MultivariateNormal(conv(rng.normal(size=(2, 3))),
                                                             covariance_matrix=conv(cov)),
        "LowRankMultivariateNormal": lambda: mod.LowRankMultivariateNormal(
            conv(rng.normal(size=(2, 3))), conv(W), conv(D)),
    }.get(name)


def test_kl_registry_matches_torch_pairs():
    """Every pair in torch's KL registry that has a constructor above gives torch's value."""
    import torch.distributions.kl as TK
    checked = 0
    for tp, tq in TK._KL_REGISTRY:
        mp_e, mq_e = _kl_make(ED, E, tp.__name__, 0), _kl_make(ED, E, tq.__name__, 1)
        if mp_e is None or mq_e is None:
            continue
        mp_t, mq_t = _kl_make(TD, T, tp.__name__, 0), _kl_make(TD, T, tq.__name__, 1)
        try:
            kt = TD.kl_divergence(mp_t(), mq_t())
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                ED.kl_divergence(mp_e(), mq_e())
            continue
        ke = ED.kl_divergence(mp_e(), mq_e())
        np.testing.assert_allclose(ke.numpy(), kt.numpy(), rtol=1e-6, atol=1e-9,
                                   err_msg=f"{tp.__name__} || {tq.__name__}")
        checked += 1
    assert checked >= 70


def test_kl_bregman_for_exponential_families():
    A = np.eye(3) * 2
    pe = ED.Wishart(E(5.0), covariance_matrix=E(A))
    qe = ED.Wishart(E(7.0), covariance_matrix=E(A * 1.5))
    pt = TD.Wishart(T(5.0), covariance_matrix=T(A))
    qt = TD.Wishart(T(7.0), covariance_matrix=T(A * 1.5))
    close(ED.kl_divergence(pe, qe), TD.kl_divergence(pt, qt), rtol=1e-6)
    with pytest.raises(NotImplementedError):
        ED.kl_divergence(ED.Gamma(E([1.0]), E([1.0])), ED.Bernoulli(E([0.5])))


@pytest.mark.parametrize("name,params,value,has_cdf,has_entropy", CASES,
                         ids=[c[0] for c in CASES])
def test_expand_matches_torch(name, params, value, has_cdf, has_entropy):
    de, _ = build(ember, name, params)
    dt, _ = build(torch, name, params)
    ee, et = de.expand((2, 3)), dt.expand((2, 3))
    assert type(ee) is type(de) and tuple(ee.batch_shape) == tuple(et.batch_shape) == (2, 3)
    close(ee.log_prob(E(value)), et.log_prob(T(value)))
    assert tuple(ee.sample((4,)).shape) == (4, 2, 3)
    if has_entropy:
        close(ee.entropy(), et.entropy())


def test_structured_transforms_match_torch():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 6))
    for te, tt in [(ED.CorrCholeskyTransform(), TD.CorrCholeskyTransform()),
                   (ED.CatTransform([ED.ExpTransform(), ED.identity_transform], 1, [2, 4]),
                    TD.CatTransform([TD.ExpTransform(), TD.identity_transform], 1, [2, 4])),
                   (ED.StackTransform([ED.ExpTransform(), ED.SigmoidTransform()], 0),
                    TD.StackTransform([TD.ExpTransform(), TD.SigmoidTransform()], 0))]:
        ye, yt = te(E(x)), tt(T(x))
        close(ye, yt)
        close(te.log_abs_det_jacobian(E(x), ye), tt.log_abs_det_jacobian(T(x), yt))
        close(te.inv(ye), tt.inv(yt), rtol=1e-6, atol=1e-7)
    m = rng.normal(size=(3, 3))
    close(ED.PositiveDefiniteTransform()(E(m)), TD.PositiveDefiniteTransform()(T(m)))
    for c_e, c_t in [(ED.constraints.corr_cholesky, TD.constraints.corr_cholesky),
                     (ED.constraints.positive_definite, TD.constraints.positive_definite)]:
        v = rng.normal(size=(3,)) if c_e is ED.constraints.corr_cholesky else m
        close(ED.transform_to(c_e)(E(v)), TD.transform_to(c_t)(T(v)))
    mix = ED.MixtureSameFamily(ED.Categorical(probs=E([0.5, 0.5])),
                               ED.Exponential(E([1.0, 2.0])))
    assert repr(mix.support) == repr(TD.MixtureSameFamily(
        TD.Categorical(probs=T([0.5, 0.5])), TD.Exponential(T([1.0, 2.0]))).support)
    assert bool(mix.support.check(E([0.5, 2.0])).all())
    assert not bool(mix.support.check(E([-0.5])).all())


@pytest.mark.parametrize("n,p", [(12, 0.3), (5, 0.9), (1000, 0.3), (200, 0.8),
                                 (10 ** 6, 1e-6), (0, 0.5), (7, 1.0)])
def test_binomial_sampler_matches_pmf(n, p):
    ember.manual_seed(3)
    s = ED.Binomial(n, probs=E([p])).sample((20000,)).numpy()[:, 0]
    assert s.min() >= 0 and s.max() <= n and np.all(s == np.round(s))
    k = np.arange(max(0, s.min() - 3), min(n, s.max() + 3) + 1)
    pmf = TD.Binomial(n, probs=T([p])).log_prob(T(k[:, None])).exp().numpy()[:, 0]
    freq = np.array([(s == v).mean() for v in k])
    # total variation distance, against ~2.5x its expected sampling noise
    noise = np.sqrt(pmf * (1 - pmf) / len(s)).sum()
    assert 0.5 * np.abs(freq - pmf).sum() < 0.005 + noise
