"""nn.Linear/Bilinear/LazyLinear, the activations (functional and modules), Flatten,
distance modules and nn.functional helpers, against PyTorch."""
import warnings

import numpy as np
import pytest

from oracle import NC, check, check_error, gradcheck, randn, torch
import ember

A = randn(3, 4)
A[0, :3] = [0.0, -3.0, 3.0]         # kinks: relu at 0, hardswish/hardsigmoid at +-3
H = randn(2, 4, 3, dtype=np.float16)
BF = randn(2, 5)
EMPTY = randn(0, 4)
SCALAR = np.asarray(0.7, np.float32)
D64 = randn(2, 3, 4, dtype=np.float64)

ACTS = [
    ("relu", lambda F, x: F.relu(x)),
    ("relu6", lambda F, x: F.relu6(x * 4)),
    ("elu", lambda F, x: F.elu(x, 0.7)),
    ("selu", lambda F, x: F.selu(x)),
    ("celu", lambda F, x: F.celu(x, 1.3)),
    ("leaky_relu", lambda F, x: F.leaky_relu(x, 0.2)),
    ("gelu", lambda F, x: F.gelu(x)),
    ("gelu_tanh", lambda F, x: F.gelu(x, approximate="tanh")),
    ("silu", lambda F, x: F.silu(x)),
    ("mish", lambda F, x: F.mish(x)),
    ("hardswish", lambda F, x: F.hardswish(x * 3)),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x * 3)),
    ("hardtanh", lambda F, x: F.hardtanh(x, -0.5, 0.8)),
    ("hardshrink", lambda F, x: F.hardshrink(x, 0.3)),
    ("softshrink", lambda F, x: F.softshrink(x, 0.3)),
    ("tanhshrink", lambda F, x: F.tanhshrink(x)),
    ("softsign", lambda F, x: F.softsign(x)),
    ("softplus", lambda F, x: F.softplus(x, 2.0, 1.5)),
    ("logsigmoid", lambda F, x: F.logsigmoid(x * 10)),
    ("threshold", lambda F, x: F.threshold(x, 0.1, -2.0)),
    ("sigmoid", lambda F, x: F.sigmoid(x)),
    ("tanh", lambda F, x: F.tanh(x)),
    ("rrelu_eval", lambda F, x: F.rrelu(x, 0.1, 0.3)),
    ("glu", lambda F, x: F.glu(x, -1)),
    ("softmax", lambda F, x: F.softmax(x, -1)),
    ("softmin", lambda F, x: F.softmin(x, 0)),
    ("log_softmax", lambda F, x: F.log_softmax(x, -1, dtype=torch.float64 if F is
                                             torch.nn.functional else ember.float64)),
]
IDS = [a[0] for a in ACTS]


def _F(L):
    return L.nn.functional


@pytest.mark.parametrize("name,fn", ACTS, ids=IDS)
@pytest.mark.parametrize("x", [A, NC(randn(4, 6)), D64, EMPTY], ids=["2d", "nc", "f64", "empty"])
def test_activation_matches_torch(name, fn, x):
    check(lambda L, t: fn(_F(L), t), x)


@pytest.mark.parametrize("name,fn", [a for a in ACTS if a[0] not in ("glu",)],
                         ids=[i for i in IDS if i != "glu"])
def test_activation_scalar_and_half(name, fn):
    check(lambda L, t: fn(_F(L), t), SCALAR)
    check(lambda L, t: fn(_F(L), t), H, atol=2e-3, rtol=2e-3)
    check(lambda L, t: fn(_F(L), t.to(L.bfloat16)), BF, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("name,fn", ACTS[:22], ids=IDS[:22])
def test_activation_gradcheck(name, fn):
    gradcheck(lambda L, t: fn(_F(L), t), randn(3, 5, dtype=np.float64) + 0.05)


def test_double_backward_gelu_silu_elu():
    for f in ("gelu", "silu", "elu", "softplus", "mish", "logsigmoid", "hardswish"):
        def g(L, t, f=f):
            y = getattr(_F(L), f)(t)
            (d,) = L.autograd.grad(y.sum(), t, create_graph=True)
            return d
        check(g, randn(3, 4, dtype=np.float64))


INPLACE = [
    ("relu", lambda F, x: F.relu(x, inplace=True)),
    ("relu_", lambda F, x: F.relu_(x)),
    ("relu6", lambda F, x: F.relu6(x, inplace=True)),
    ("elu", lambda F, x: F.elu(x, 0.5, inplace=True)),
    ("elu_", lambda F, x: F.elu_(x)),
    ("selu", lambda F, x: F.selu(x, inplace=True)),
    ("celu", lambda F, x: F.celu(x, 2.0, inplace=True)),
    ("leaky_relu_", lambda F, x: F.leaky_relu_(x, 0.3)),
    ("hardtanh_", lambda F, x: F.hardtanh_(x, -0.2, 0.2)),
    ("threshold_", lambda F, x: F.threshold_(x, 0.0, 5.0)),
    ("silu", lambda F, x: F.silu(x, inplace=True)),
    ("mish", lambda F, x: F.mish(x, inplace=True)),
    ("hardswish", lambda F, x: F.hardswish(x, inplace=True)),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x, inplace=True)),
    ("rrelu_eval", lambda F, x: F.rrelu(x, inplace=True)),
]


@pytest.mark.parametrize("name,fn", INPLACE, ids=[a[0] for a in INPLACE])
def test_inplace_variants(name, fn):
    def run(L, t):
        y = t * 1.5          # a non-leaf, so in-place is allowed
        out = fn(_F(L), y)
        assert out is y
        return y
    check(run, A)
    # version counter bumps and a leaf that requires grad is refused
    e = ember.tensor(A)
    v = e._version
    fn(ember.nn.functional, e)
    assert e._version > v
    check_error(lambda L, t: fn(_F(L), t.requires_grad_()), A)


def test_inplace_on_view_rebases_history():
    def run(L, t):
        y = t * 1.0
        _F(L).elu(y[:, 0], inplace=True)
        return y
    check(run, A)


ERRORS = [
    lambda F, x: F.gelu(x, approximate="x"),
    lambda F, x: F.softshrink(x, -1.0),
    lambda F, x: F.glu(x[:, :3], 1),
    lambda F, x: F.glu(x[0, 0]),
    lambda F, x: F.glu(x, 2),
    lambda F, x: F.rrelu(x, 0.5, 0.1, True),
    lambda F, x: F.hardtanh(x, 2.0, 1.0),
    lambda F, x: F.celu(x, 0.0),
    lambda F, x: F.prelu(x, x[0, :2]),
    lambda F, x: F.prelu(x, x[:1]),
    lambda F, x: F.gelu(x.long()),
    lambda F, x: F.elu(x.long()),
    lambda F, x: F.softplus(x.long()),
    lambda F, x: F.leaky_relu(x.long()),
    lambda F, x: F.linear(x, x.t()[:2]),
    lambda F, x: F.linear(x, x[:1], x[0]),
    lambda F, x: F.linear(x.double(), x),
    lambda F, x: F.linear(x[0, 0], x),
    lambda F, x: F.linear(x, x[0].clone(), x[0, 0].clone()),
    lambda F, x: F.bilinear(x, x[:2], x.reshape(1, 3, 4)),
    lambda F, x: F.bilinear(x, x, x.reshape(1, 3, 4)),
    lambda F, x: F.one_hot(x),
    lambda F, x: F.one_hot(x.long()[:0]),
    lambda F, x: F.one_hot(x.abs().long() + 3, 2),
    lambda F, x: F.one_hot(x.long() - 5, 10),
    lambda F, x: F.cosine_similarity(x.long(), x.long()),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    check_error(lambda L, t: ERRORS[i](_F(L), t), A)


def test_integer_inputs():
    ints = np.array([[-5, 1, 7], [0, 2, -1]], np.int64)
    for fn in (lambda F, x: F.hardtanh(x), lambda F, x: F.relu6(x), lambda F, x: F.relu(x),
               lambda F, x: F.threshold(x, 1, 20), lambda F, x: F.softsign(x),
               lambda F, x: F.tanhshrink(x)):
        check(lambda L, t: fn(_F(L), t), ints)


# -------------------------------------------------------------------------- prelu

@pytest.mark.parametrize("x,w", [(randn(2, 3, 4), randn(3)), (randn(2, 3), randn(1)),
                                 (randn(5), randn(1)), (randn(2, 3, 2, 2), randn(3)),
                                 (NC(randn(3, 4)), randn(4)), (SCALAR, randn(1)),
                                 (randn(0, 3), randn(3))])
def test_prelu(x, w):
    check(lambda L, a, b: _F(L).prelu(a, b), x, w)


def test_prelu_gradcheck():
    gradcheck(lambda L, a, b: _F(L).prelu(a, b), randn(2, 3, 4, dtype=np.float64),
              randn(3, dtype=np.float64))


# -------------------------------------------------------------------------- rrelu

def test_rrelu_training_randomness():
    x = ember.tensor(-np.ones((200, 50), np.float32), requires_grad=True)
    y = ember.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    slopes = (y / x).detach().numpy()
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3 and slopes.std() > 0.03
    assert abs(slopes.mean() - 0.2) < 0.01
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes, rtol=1e-6)
    pos = ember.nn.functional.rrelu(ember.ones(10), training=True)
    assert (pos.numpy() == 1).all()
    m = ember.nn.RReLU(0.1, 0.3)
    m.eval()
    check(lambda L, t: (L.nn.RReLU(0.1, 0.3).eval())(t), A)


# --------------------------------------------------------------------- linear

@pytest.mark.parametrize("x,w,b", [
    (randn(4, 3), randn(5, 3), randn(5)),
    (randn(2, 4, 3), randn(5, 3), None),
    (randn(3), randn(5, 3), randn(5)),
    (randn(4, 3), randn(3), None),
    (randn(3), randn(3), SCALAR),
    (NC(randn(4, 3)), NC(randn(5, 3)), randn(5)),
    (randn(0, 3), randn(5, 3), randn(5)),
    (randn(4, 0), randn(5, 0), randn(5)),
    (randn(4, 3, dtype=np.float64), randn(5, 3, dtype=np.float64), randn(5, dtype=np.float64)),
    (randn(4, 3), randn(5, 3), randn(4, 5)),
])
def test_linear_functional(x, w, b):
    if b is None:
        check(lambda L, a, c: _F(L).linear(a, c), x, w)
    else:
        check(lambda L, a, c, d: _F(L).linear(a, c, d), x, w, b)


def test_linear_half_bf16_and_int():
    check(lambda L, a, c, d: _F(L).linear(a, c, d), randn(4, 3, dtype=np.float16),
          randn(5, 3, dtype=np.float16), randn(5, dtype=np.float16), atol=3e-3, rtol=3e-3)
    check(lambda L, a, c: _F(L).linear(a.to(L.bfloat16), c.to(L.bfloat16)), randn(4, 3),
          randn(5, 3), atol=3e-2, rtol=3e-2)
    ints = np.arange(12).reshape(4, 3)
    check(lambda L, a, c: _F(L).linear(a, c), ints, ints[:2])


def test_linear_gradcheck_and_double_backward():
    gradcheck(lambda L, a, c, d: _F(L).linear(a, c, d), randn(2, 4, 3, dtype=np.float64),
              randn(5, 3, dtype=np.float64), randn(5, dtype=np.float64))

    def g(L, a, c):
        y = _F(L).linear(a, c).pow(2).sum()
        (d,) = L.autograd.grad(y, c, create_graph=True)
        return d
    check(g, randn(4, 3, dtype=np.float64), randn(5, 3, dtype=np.float64))


def test_linear_autocast_lower_precision():
    x, w = ember.randn(4, 3), ember.randn(5, 3)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        assert ember.nn.functional.linear(x, w).dtype is ember.bfloat16


def _copy(tm, em):
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


def _compare_module(tm, em, *inputs, atol=1e-5):
    _copy(tm, em)
    xt = [torch.tensor(x, requires_grad=True) for x in inputs]
    xe = [ember.tensor(x, requires_grad=True) for x in inputs]
    yt, ye = tm(*xt), em(*xe)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), atol=atol, rtol=1e-4)
    w = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(np.float32)
    (yt * torch.tensor(w)).sum().backward()
    (ye * ember.tensor(w)).sum().backward()
    for a, b in zip(xe, xt):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=atol * 10, rtol=1e-3)
    for (n, p), (_, q) in zip(em.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), atol=atol * 10, rtol=1e-3,
                                   err_msg=n)


@pytest.mark.parametrize("bias", [True, False])
def test_linear_module(bias):
    tm, em = torch.nn.Linear(3, 5, bias=bias), ember.nn.Linear(3, 5, bias=bias)
    assert repr(tm) == repr(em)
    assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in em.named_parameters()]
    _compare_module(tm, em, randn(2, 4, 3))
    _compare_module(tm, em, randn(0, 3))


def test_linear_default_init_bounds():
    ember.manual_seed(0)
    m = ember.nn.Linear(400, 300)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    bound = 1 / np.sqrt(400)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.98 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.002
    assert np.abs(b).max() <= bound and m.weight.is_leaf and m.weight.grad is None
    assert ember.nn.Linear(3, 4, dtype=ember.float64).weight.dtype is ember.float64


def test_bilinear_module_and_functional():
    tm, em = torch.nn.Bilinear(3, 4, 5), ember.nn.Bilinear(3, 4, 5)
    assert repr(tm) == repr(em)
    _compare_module(tm, em, randn(2, 3), randn(2, 4))
    tm, em = torch.nn.Bilinear(3, 4, 5, bias=False), ember.nn.Bilinear(3, 4, 5, bias=False)
    assert repr(tm) == repr(em)
    _compare_module(tm, em, randn(2, 6, 3), randn(2, 6, 4))
    check(lambda L, a, b, w: _F(L).bilinear(a, b, w), randn(3), randn(4), randn(2, 3, 4))


def test_lazy_linear():
    em, tm = ember.nn.LazyLinear(5), torch.nn.LazyLinear(5)
    assert repr(em) == repr(tm)
    assert isinstance(em.weight, ember.nn.UninitializedParameter)
    y = em(ember.randn(2, 7))
    tm(torch.randn(2, 7))
    assert type(em) is ember.nn.Linear and repr(em) == repr(tm)
    assert tuple(y.shape) == (2, 5) and tuple(em.weight.shape) == (5, 7)
    assert type(em.weight) is ember.nn.Parameter
    _compare_module(tm, em, randn(3, 7))
    nb = ember.nn.LazyLinear(2, bias=False)
    nb(ember.randn(1, 3))
    assert nb.bias is None and tuple(nb.weight.shape) == (2, 3)


# --------------------------------------------------------------- activation modules

MODULES = [
    ("ReLU", (), {}), ("ReLU", (True,), {}), ("ReLU6", (), {}), ("ReLU6", (), {"inplace": True}),
    ("LeakyReLU", (0.2,), {}), ("LeakyReLU", (), {"inplace": True}), ("ELU", (0.5,), {}),
    ("ELU", (), {"inplace": True}), ("CELU", (1.5,), {}), ("SELU", (), {}),
    ("SELU", (True,), {}), ("GELU", (), {}), ("GELU", ("tanh",), {}), ("SiLU", (), {}),
    ("SiLU", (True,), {}), ("Mish", (), {}), ("Mish", (True,), {}), ("Hardswish", (), {}),
    ("Hardswish", (True,), {}), ("Hardsigmoid", (), {}), ("Hardsigmoid", (True,), {}),
    ("Hardtanh", (-2.0, 2.0), {}), ("Hardtanh", (), {"inplace": True}),
    ("Hardshrink", (), {}), ("Hardshrink", (0.2,), {}), ("Softshrink", (0.1,), {}),
    ("Tanhshrink", (), {}), ("Softplus", (2, 10), {}), ("Softsign", (), {}),
    ("Sigmoid", (), {}), ("LogSigmoid", (), {}), ("Tanh", (), {}),
    ("Threshold", (0.1, 20.0), {}), ("Threshold", (0.1, 20.0, True), {}),
    ("GLU", (), {}), ("GLU", (1,), {}), ("Softmax", (1,), {}), ("Softmin", (-1,), {}),
    ("LogSoftmax", (0,), {}), ("Softmax2d", (), {}), ("RReLU", (), {}),
    ("RReLU", (0.1, 0.2, True), {}), ("PReLU", (), {}), ("PReLU", (4, 0.1), {}),
]


@pytest.mark.parametrize("name,args,kw", MODULES,
                         ids=[f"{m[0]}{i}" for i, m in enumerate(MODULES)])
def test_activation_modules(name, args, kw):
    tm = getattr(torch.nn, name)(*args, **kw)
    em = getattr(ember.nn, name)(*args, **kw)
    assert repr(em) == repr(tm)
    tm.eval(), em.eval()
    _copy(tm, em)
    x = randn(2, 4, 3, 2)

    def run(m, L, t):
        return m(t * 1.0)
    check(lambda L, t: run(em if L is ember else tm, L, t), x)
    if name == "PReLU":
        assert [n for n, _ in em.named_parameters()] == ["weight"]
        np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy())


def test_softmax_implicit_dim_warns():
    for ndim, dim in ((1, 0), (2, 1), (3, 0), (4, 1)):
        x = ember.randn(*([2] * ndim))
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
            y = ember.nn.functional.softmax(x)
        np.testing.assert_allclose(y.numpy(), x.softmax(dim).numpy())
    with pytest.warns(UserWarning, match="log_softmax"):
        ember.nn.Softmax()   # constructing does not warn; calling does
        ember.nn.LogSoftmax()(ember.randn(2, 3))
    check_error(lambda L, t: L.nn.Softmax2d()(t), randn(2, 3))


# ------------------------------------------------------------- flatten & distance

def test_flatten_unflatten():
    for tm, em in [(torch.nn.Flatten(), ember.nn.Flatten()),
                   (torch.nn.Flatten(0, 2), ember.nn.Flatten(0, 2)),
                   (torch.nn.Unflatten(1, (2, 2)), ember.nn.Unflatten(1, (2, 2))),
                   (torch.nn.Unflatten(-1, [3, -1]), ember.nn.Unflatten(-1, [3, -1]))]:
        assert repr(tm) == repr(em)
        check(lambda L, t: (em if L is ember else tm)(t), randn(2, 4, 3, 6))
    for args in [(1, 4), (1, (2, 2.0)), ("a", ((2,), 3))]:
        check_error(lambda L, t: L.nn.Unflatten(*args), A)


@pytest.mark.parametrize("x1,x2,kw", [
    (randn(4, 5), randn(4, 5), {}), (randn(4, 5), randn(5), {"dim": -1}),
    (randn(3, 4, 2), randn(3, 4, 2), {"dim": 0, "eps": 1e-3}), (np.zeros((2, 3), np.float32),
                                                               randn(2, 3), {}),
    (NC(randn(3, 4)), randn(3, 4), {}), (randn(0, 3), randn(0, 3), {}),
])
def test_cosine_similarity(x1, x2, kw):
    check(lambda L, a, b: _F(L).cosine_similarity(a, b, **kw), x1, x2)
    check(lambda L, a, b: L.nn.CosineSimilarity(**kw)(a, b), x1, x2)


@pytest.mark.parametrize("x1,x2,kw", [
    (randn(4, 5), randn(4, 5), {}), (randn(4, 5), randn(5), {"p": 1.0}),
    (randn(3, 4), randn(3, 4), {"p": 3.0, "keepdim": True}), (randn(5), randn(5), {}),
    (randn(3, 4), randn(3, 4), {"p": float("inf")}), (randn(0, 3), randn(0, 3), {}),
])
def test_pairwise_distance(x1, x2, kw):
    check(lambda L, a, b: _F(L).pairwise_distance(a, b, **kw), x1, x2)
    p = kw.get("p", 2.0)
    check(lambda L, a, b: L.nn.PairwiseDistance(p, keepdim=kw.get("keepdim", False))(a, b),
          x1, x2)
    assert repr(ember.nn.PairwiseDistance()) == repr(torch.nn.PairwiseDistance())
    assert repr(ember.nn.CosineSimilarity()) == repr(torch.nn.CosineSimilarity())


# ---------------------------------------------------------- one_hot, normalize, gumbel

def test_one_hot():
    idx = np.array([[0, 3], [2, 1]], np.int64)
    check(lambda L, t: _F(L).one_hot(t), idx)
    check(lambda L, t: _F(L).one_hot(t, 6), idx)
    check(lambda L, t: _F(L).one_hot(t, 3), np.zeros((0,), np.int64))
    check(lambda L, t: _F(L).one_hot(t), np.asarray(2, np.int64))


@pytest.mark.parametrize("kw", [{}, {"p": 1.0}, {"dim": 0}, {"p": 3.0, "dim": -1},
                                {"eps": 10.0}])
def test_normalize(kw):
    check(lambda L, t: _F(L).normalize(t, **kw), randn(3, 4))
    check(lambda L, t: _F(L).normalize(t, **kw), np.zeros((2, 3), np.float32))


def test_normalize_out():
    out = ember.empty(0)
    x = ember.tensor(A)
    ember.nn.functional.normalize(x, out=out)
    np.testing.assert_allclose(out.numpy(), torch.nn.functional.normalize(torch.tensor(A)).numpy(),
                               rtol=1e-6)


def test_gumbel_softmax():
    ember.manual_seed(0)
    logits = ember.tensor(np.log(np.array([[0.1, 0.2, 0.7]] * 4000, np.float32)),
                          requires_grad=True)
    y = ember.nn.functional.gumbel_softmax(logits, tau=0.5, hard=True)
    yn = y.detach().numpy()
    assert ((yn == 0) | (yn == 1)).all() and (yn.sum(-1) == 1).all()
    np.testing.assert_allclose(yn.mean(0), [0.1, 0.2, 0.7], atol=0.03)
    y.backward(ember.randn(*y.shape))
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0
    soft = ember.nn.functional.gumbel_softmax(logits, dim=0)
    np.testing.assert_allclose(soft.detach().numpy().sum(0), np.ones(3), rtol=1e-5)
    with pytest.warns(UserWarning, match="eps"):
        ember.nn.functional.gumbel_softmax(logits, eps=1e-3)


def test_functional_namespace_has_torch_names():
    import torch.nn.functional as TF
    names = ["threshold", "threshold_", "relu", "relu_", "hardtanh", "hardtanh_", "relu6",
             "elu", "elu_", "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_",
             "prelu", "rrelu", "rrelu_", "glu", "gelu", "logsigmoid", "hardshrink",
             "tanhshrink", "softsign", "softplus", "softmin", "softmax", "gumbel_softmax",
             "log_softmax", "softshrink", "tanh", "sigmoid", "hardsigmoid", "linear",
             "bilinear", "silu", "mish", "hardswish", "one_hot", "normalize",
             "cosine_similarity", "pairwise_distance"]
    for n in names:
        assert hasattr(TF, n) and hasattr(ember.nn.functional, n), n
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.nn.functional.relu(ember.randn(2))


@pytest.mark.parametrize("p", [2, 1, 0.5, float("inf")])
def test_pdist_matches_torch(p):
    from oracle import check
    x = np.random.default_rng(3).standard_normal((5, 3))
    check(lambda L, a: L.nn.functional.pdist(a, p), x)
