"""Forward-mode AD: ember.autograd.forward_ad dual tensors and ember.func.jvp/jacfwd/linearize
against torch.func.jvp and finite differences."""
import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as efw
import ember.func as efunc
import ember.nn.functional as EF

torch = pytest.importorskip("torch")
tfunc = torch.func
TF = torch.nn.functional


def pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return ember.tensor(a), torch.tensor(a)


def close(e, t, atol=1e-7):
    if isinstance(t, (tuple, list)):
        for a, b in zip(e, t):
            close(a, b, atol)
        return
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=1e-6)


def _f(L):
    F = EF if L is ember else TF
    w = {}
    return {
        "pointwise": ((3, 4),), "matmul": ((3, 4), (4, 2)), "reductions": ((3, 4),),
        "views": ((2, 3, 4),), "softmax": ((3, 5),), "activations": ((3, 4),),
        "conv2d": ((2, 1, 5, 5), (3, 1, 3, 3)), "norms": ((4, 6),),
        "losses": ((4, 3), (4, 3)), "where_clamp": ((3, 4),),
    }, {
        "pointwise": lambda x: (x.sin() * x.exp() - x / (x * x + 1)).tanh() + x.sigmoid().log(),
        "matmul": lambda a, b: (a @ b).relu() + L.mm(a, b) * 2,
        "reductions": lambda x: (x.sum(0), x.mean(-1, keepdim=True), x.amax(1), x.std(0),
                                 x.logsumexp(1), x.prod(1)),
        "views": lambda x: x.permute(2, 0, 1).reshape(4, 6)[1:3].t().unsqueeze(0).expand(
            2, 6, 2).flip(0) + L.cat([x[0], x[1]], 0).sum(),
        "softmax": lambda x: (F.softmax(x, -1), F.log_softmax(x, 0)),
        "activations": lambda x: F.gelu(x) + F.silu(x) + F.leaky_relu(x, 0.1) + F.elu(x) +
        F.softplus(x),
        "conv2d": lambda x, k: F.conv2d(x, k, padding=1, stride=2),
        "norms": lambda x: F.layer_norm(x, (6,)) + F.normalize(x, dim=1) +
        F.group_norm(x.reshape(4, 6, 1), 2).reshape(4, 6),
        "losses": lambda a, b: (F.mse_loss(a, b), F.smooth_l1_loss(a, b),
                                F.cross_entropy(a, b.softmax(-1)), F.binary_cross_entropy(
                                    a.sigmoid(), b.sigmoid())),
        "where_clamp": lambda x: L.where(x > 0, x * 3, x.clamp(min=-0.5)) ** 2,
    }, w


CASES = sorted(_f(ember)[0])


@pytest.mark.parametrize("name", CASES)
def test_jvp_matches_torch_and_finite_differences(name):
    shapes = _f(ember)[0][name]
    fe, ft = _f(ember)[1][name], _f(torch)[1][name]
    ins = [pair(*s, seed=i) for i, s in enumerate(shapes)]
    tans = [pair(*s, seed=10 + i) for i, s in enumerate(shapes)]
    pe, te = efunc.jvp(fe, tuple(e for e, _ in ins), tuple(e for e, _ in tans))
    pt, tt = tfunc.jvp(ft, tuple(t for _, t in ins), tuple(t for _, t in tans))
    close(pe, pt)
    close(te, tt, atol=1e-6)
    # central finite differences in float64
    h = 1e-6
    plus = fe(*[e + h * t for (e, _), (t, _) in zip(ins, tans)])
    minus = fe(*[e - h * t for (e, _), (t, _) in zip(ins, tans)])
    plus = plus if isinstance(plus, tuple) else (plus,)
    minus = minus if isinstance(minus, tuple) else (minus,)
    te = te if isinstance(te, tuple) else (te,)
    for p, m, t in zip(plus, minus, te):
        np.testing.assert_allclose(((p - m) / (2 * h)).numpy(), t.numpy(), atol=1e-5, rtol=1e-4)


def test_dual_level_make_unpack():
    (xe, xt), (te, tt) = pair(3, 4, seed=1), pair(3, 4, seed=2)
    with efw.dual_level():
        d = efw.make_dual(xe, te)
        p, t = efw.unpack_dual(d)
        assert t is te
        np.testing.assert_array_equal(p.numpy(), xe.numpy())
        y = (d * d).sum(1)
        ye, tye = efw.unpack_dual(y)
        assert efw.unpack_dual(xe).tangent is None        # the original carries no tangent
        plain = efw.unpack_dual(ember.ones(2) * 3)
        assert plain.tangent is None
    with torch.autograd.forward_ad.dual_level():
        dt = torch.autograd.forward_ad.make_dual(xt, tt)
        tyt = torch.autograd.forward_ad.unpack_dual((dt * dt).sum(1)).tangent
    close(tye, tyt)
    assert efw.unpack_dual(y).tangent is None             # tangents end with their level
    assert isinstance(efw.unpack_dual(y), tuple) and efw.unpack_dual(y).primal is y


def test_dual_errors():
    xe, _ = pair(3, seed=3)
    with pytest.raises(RuntimeError, match="no level exists"):
        efw.make_dual(xe, xe)
    with pytest.raises(RuntimeError):
        torch.autograd.forward_ad.make_dual(torch.zeros(3), torch.zeros(3))
    with efw.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            efw.make_dual(xe, ember.zeros(4, dtype=ember.float64))


def test_op_without_jvp_rule_raises():
    xe, _ = pair(20, seed=4)
    with efw.dual_level():
        d = efw.make_dual(xe, ember.ones_like(xe))
        with pytest.raises(NotImplementedError,
                           match="Trying to use forward AD with aten::histc that does not "
                                 "support it"):
            ember.histc(d, bins=4, min=-2, max=2)
        # non-differentiable outputs simply carry no tangent
        assert efw.unpack_dual(d.argmax()).tangent is None


def test_reverse_over_forward_composes():
    """jacfwd(jacrev(f)) (forward over the backward ops) equals jacrev(jacrev(f))."""
    xe, xt = pair(3, seed=5)

    def f(L):
        return lambda x: (x.sin() * (x @ x)).exp().sum()
    close(efunc.jacfwd(efunc.jacrev(f(ember)))(xe), tfunc.hessian(f(torch))(xt), atol=1e-6)


def test_nested_forward_levels():
    xe, xt = pair(3, seed=12)

    def g(L):
        return lambda x: L.softmax(x, -1).log() * x.sin() * x.exp()
    close(efunc.jacfwd(efunc.jacfwd(g(ember)))(xe), tfunc.jacfwd(tfunc.jacfwd(g(torch)))(xt))
    close(efunc.jacfwd(efunc.jacfwd(efunc.jacfwd(lambda x: x.sin() * x.exp())))(xe),
          tfunc.jacfwd(tfunc.jacfwd(tfunc.jacfwd(lambda x: x.sin() * x.exp())))(xt))
    with efw.dual_level():
        d = efw.make_dual(xe, ember.ones_like(xe))
        with efw.dual_level() as inner:
            d2 = efw.make_dual(d, ember.ones_like(xe))
            t = efw.unpack_dual(d2.sin(), level=inner).tangent
            close(t, xt.cos())
        close(efw.unpack_dual(t).tangent, -xt.sin())      # the outer level differentiates it


def test_jacfwd_argnums_linearize_and_has_aux():
    (ae, at), (be, bt) = pair(3, seed=6), pair(3, seed=7)

    def f(L):
        return lambda a, b: (a * b.exp(), a.sum())
    close(efunc.jacfwd(f(ember), argnums=(0, 1))(ae, be),
          tfunc.jacfwd(f(torch), argnums=(0, 1))(at, bt))
    out, fn = efunc.linearize(lambda a: a.sin() * 2, ae)
    outt, fnt = tfunc.linearize(lambda a: a.sin() * 2, at)
    close(out, outt)
    close(fn(be), fnt(bt))
    (p, t, aux) = efunc.jvp(lambda a: (a.cos(), a * 2), (ae,), (be,), has_aux=True)
    (pt, tt, auxt) = tfunc.jvp(lambda a: (a.cos(), a * 2), (at,), (bt,), has_aux=True)
    close((p, t), (pt, tt))
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        efunc.jvp(lambda a: a, ae, (be,))


def test_jvp_of_module_via_functional_call():
    def build(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2)).double()
    me, mt = build(ember), build(torch)
    me.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    xe, xt = pair(3, 4, seed=8)
    pe = {k: v.detach() for k, v in me.named_parameters()}
    pt = {k: v.detach() for k, v in mt.named_parameters()}
    ve = {k: ember.ones_like(v) for k, v in pe.items()}
    vt = {k: torch.ones_like(v) for k, v in pt.items()}
    _, te = efunc.jvp(lambda p: efunc.functional_call(me, p, (xe,)), (pe,), (ve,))
    _, tt = tfunc.jvp(lambda p: tfunc.functional_call(mt, p, (xt,)), (pt,), (vt,))
    close(te, tt)


def test_forward_and_vmap_compose():
    """grad(vmap), vmap(jvp), jvp(vmap), vmap(jacfwd), vmap(hessian) against torch.func."""
    rng = np.random.default_rng(9)
    W, X, T = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.standard_normal((5, 3))

    def run(L):
        w, x, t = L.tensor(W), L.tensor(X), L.tensor(T)
        fn = L.func

        def f(w, x):
            return (w @ x).tanh()
        return (fn.grad(lambda w: fn.vmap(f, in_dims=(None, 0))(w, x).sum())(w),
                fn.vmap(lambda x, t: fn.jvp(lambda x: f(w, x), (x,), (t,))[1])(x, t),
                fn.jvp(lambda x: fn.vmap(lambda x: f(w, x))(x), (x,), (t,))[1],
                fn.vmap(fn.jacfwd(lambda x: f(w, x)))(x),
                fn.vmap(fn.hessian(lambda x: f(w, x).sum()))(x))
    close(run(ember), run(torch), atol=1e-10)


def test_reverse_over_forward():
    """jacrev(jacfwd(f)): the tangents of ops without a closed-form rule (softmax, gelu use
    the transposed vjp) stay differentiable."""
    xe, xt = pair(4, seed=13)
    for g in (lambda L, F: (lambda x: F.softmax(x, -1) * x),
              lambda L, F: (lambda x: F.gelu(x) * x.exp())):
        close(efunc.jacrev(efunc.jacfwd(g(ember, EF)))(xe),
              tfunc.jacrev(tfunc.jacfwd(g(torch, TF)))(xt), atol=1e-10)
