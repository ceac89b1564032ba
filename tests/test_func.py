"""ember.func against torch.func on the same functions: per-sample gradients, jacobians,
hessians, vmap over common ops with in_dims/out_dims, nesting, the fallback warning and the
error types."""
import warnings

import numpy as np
import pytest

import ember
import ember.func as efunc
import ember.nn.functional as EF

torch = pytest.importorskip("torch")
tfunc = torch.func
TF = torch.nn.functional


def pair(*shape, seed=0, dtype=np.float64):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.tensor(a), torch.tensor(a)


def close(e, t, atol=1e-6):
    if isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)) and len(e) == len(t)
        for a, b in zip(e, t):
            close(a, b, atol)
        return
    if isinstance(t, dict):
        assert set(e) == set(t)
        for k in t:
            close(e[k], t[k], atol)
        return
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=1e-5)


# ------------------------------------------------------------------ per-sample gradients

def _mlp_params(lib, rng):
    w1 = rng.standard_normal((8, 5)) * 0.5
    b1 = rng.standard_normal(8) * 0.1
    w2 = rng.standard_normal((3, 8)) * 0.5
    b2 = rng.standard_normal(3) * 0.1
    return {k: lib.tensor(v) for k, v in dict(w1=w1, b1=b1, w2=w2, b2=b2).items()}


def test_per_sample_grads_mlp():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 5))
    y = rng.integers(0, 3, 6)

    def make(lib, F):
        def loss(p, xi, yi):
            h = F.relu(F.linear(xi, p["w1"], p["b1"]))
            logits = F.linear(h, p["w2"], p["b2"])
            return F.cross_entropy(logits.unsqueeze(0), yi.unsqueeze(0))
        return loss
    pe = _mlp_params(ember, np.random.default_rng(2))
    pt = _mlp_params(torch, np.random.default_rng(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ge = efunc.vmap(efunc.grad(make(ember, EF)), in_dims=(None, 0, 0))(
            pe, ember.tensor(x), ember.tensor(y))
    gt = tfunc.vmap(tfunc.grad(make(torch, TF)), in_dims=(None, 0, 0))(
        pt, torch.tensor(x), torch.tensor(y))
    close(ge, gt)
    assert ge["w1"].shape == (6, 8, 5)
    # the same numbers as one backward per sample
    for i in (0, 5):
        gi = efunc.grad(make(ember, EF))(pe, ember.tensor(x[i]), ember.tensor(y[i]))
        np.testing.assert_allclose(gi["w2"].numpy(), ge["w2"][i].numpy(), atol=1e-12)


def test_per_sample_grads_cnn_with_functional_call():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 1, 6, 6))
    y = rng.integers(0, 2, 4)

    def build(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.Tanh(), lib.nn.Flatten(0),
                              lib.nn.Linear(32, 2)).double()
        return m
    me, mt = build(ember), build(torch)
    sd = {k: v.detach().numpy() for k, v in mt.state_dict().items()}
    me.load_state_dict({k: ember.tensor(v) for k, v in sd.items()})

    def make(lib, F, model):
        def loss(params, xi, yi):
            out = lib.func.functional_call(model, params, (xi,))
            return F.cross_entropy(out.unsqueeze(0), yi.unsqueeze(0))
        return loss
    pe = {k: v.detach() for k, v in me.named_parameters()}
    pt = {k: v.detach() for k, v in mt.named_parameters()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ge = efunc.vmap(efunc.grad(make(ember, EF, me)), in_dims=(None, 0, 0))(
            pe, ember.tensor(x), ember.tensor(y))
    gt = tfunc.vmap(tfunc.grad(make(torch, TF, mt)), in_dims=(None, 0, 0))(
        pt, torch.tensor(x), torch.tensor(y))
    close(ge, gt)


# ------------------------------------------------------------------ jacobians, hessians

FUNCS = [
    ("sin_mul", lambda L: (lambda x: L.sin(x) * x), (4,)),
    ("matvec_tanh", lambda L: (lambda x: L.tanh(L.ones(3, 4, dtype=x.dtype) @ x)), (4,)),
    ("softmax", lambda L: (lambda x: L.softmax(x, -1)), (2, 3)),
    ("sum_exp", lambda L: (lambda x: (x.exp() * x).sum(0)), (3, 2)),
]


@pytest.mark.parametrize("name,make,shape", FUNCS, ids=[f[0] for f in FUNCS])
def test_jacrev_jacfwd(name, make, shape):
    xe, xt = pair(*shape, seed=4)
    jt = tfunc.jacrev(make(torch))(xt)
    close(efunc.jacrev(make(ember))(xe), jt)
    close(efunc.jacfwd(make(ember))(xe), jt)


def test_jacobian_argnums_and_multiple_outputs():
    (ae, at), (be, bt) = pair(3, seed=5), pair(3, seed=6)

    def f(L):
        return lambda a, b: (a * b, (a.sin() + b).sum())
    for fn in ("jacrev", "jacfwd"):
        res_e = getattr(efunc, fn)(f(ember), argnums=(0, 1))(ae, be)
        res_t = getattr(tfunc, fn)(f(torch), argnums=(0, 1))(at, bt)
        close(res_e, res_t)


def test_hessian():
    xe, xt = pair(4, seed=7)

    def f(L):
        return lambda x: (x.sin() * x.exp()).sum() + (x @ x) ** 2
    close(efunc.hessian(f(ember))(xe), tfunc.hessian(f(torch))(xt))
    close(efunc.jacrev(efunc.jacrev(f(ember)))(xe), tfunc.hessian(f(torch))(xt))


def test_grad_has_aux_argnums_and_nesting():
    (xe, xt), (ye, yt) = pair(3, seed=8), pair(3, seed=9)

    def f(L):
        return lambda x, y: ((x * y).sin().sum(), x.cos())
    ge, ae = efunc.grad(f(ember), argnums=(0, 1), has_aux=True)(xe, ye)
    gt, at = tfunc.grad(f(torch), argnums=(0, 1), has_aux=True)(xt, yt)
    close(ge, gt)
    close(ae, at)
    ge, ve = efunc.grad_and_value(lambda x: (x ** 3).sum())(xe)
    close(ve, (xt ** 3).sum())
    g2 = efunc.grad(lambda x: efunc.grad(lambda z: (z ** 3).sum())(x).sum())(xe)
    close(g2, 6 * xt)
    assert not ge[0].requires_grad
    with pytest.raises(RuntimeError, match="scalar Tensor"):
        efunc.grad(lambda x: x * 2)(xe)


def test_vjp():
    xe, xt = pair(2, 3, seed=10)
    ce, ct = pair(2, 3, seed=11)
    oe, fe = efunc.vjp(lambda x: x.tanh() * x, xe)
    ot, ft = tfunc.vjp(lambda x: x.tanh() * x, xt)
    close(oe, ot)
    close(fe(ce), ft(ct))


# ------------------------------------------------------------------ vmap over ops

def _b(L):
    """name -> (fn, shapes, in_dims, out_dims)"""
    return {
        "add_bcast": (lambda a, b: a + b * 2, [(3, 4), (4,)], (0, None), 0),
        "mul_in1": (lambda a, b: a * b, [(4, 3), (3, 4)], (1, 0), 0),
        "where": (lambda a, b: L.where(a > 0, a, b), [(2, 3), (2, 3)], 0, 1),
        "sum_dim": (lambda a: a.sum(-1, keepdim=True), [(3, 4, 5)], 1, 0),
        "mean_all": (lambda a: a.mean(), [(5, 2, 3)], 0, 0),
        "amax": (lambda a: a.amax(0), [(3, 4, 2)], 2, 0),
        "argmax_flat": (lambda a: a.argmax().double(), [(3, 4, 2)], 0, 0),
        "max_dim": (lambda a: a.max(1)[0], [(3, 4, 2)], 0, 0),
        "softmax": (lambda a: L.softmax(a, dim=0), [(3, 4)], 1, 1),
        "log_softmax": (lambda a: L.log_softmax(a, -1), [(2, 3, 4)], 0, 0),
        "view_t": (lambda a: a.reshape(2, 3).t().reshape(-1), [(5, 6)], 0, 0),
        "permute": (lambda a: a.permute(2, 0, 1), [(3, 2, 4, 5)], 0, 0),
        "transpose": (lambda a: a.transpose(0, 1), [(2, 3, 4)], 2, 0),
        "unsqueeze": (lambda a: a.unsqueeze(-1) * a.unsqueeze(0), [(3, 4)], 0, 0),
        "squeeze": (lambda a: a.squeeze(0), [(3, 1, 4)], 0, 0),
        "expand": (lambda a: a.expand(2, 3, 4), [(5, 4)], 0, 0),
        "select_slice": (lambda a: a[1:, 0] + a[-1, 1:3].sum(), [(3, 4, 5)], 2, 0),
        "cat": (lambda a, b: L.cat([a, b], dim=-1), [(3, 2), (4,)], (0, None), 0),
        "cat2d": (lambda a, b: L.cat([b, a], dim=0), [(3, 2, 4), (5, 4)], (0, None), 1),
        "stack": (lambda a, b: L.stack([a, b], 1), [(3, 4), (3, 4)], (0, 0), 1),
        "matmul_mv": (lambda a, b: a @ b, [(3, 4, 5), (5,)], (0, None), 0),
        "matmul_vm": (lambda a, b: a @ b, [(3, 4), (4, 5)], (0, None), 0),
        "matmul_bb": (lambda a, b: a @ b, [(3, 2, 4), (4, 3, 5)], (0, 1), 0),
        "matmul_vv": (lambda a, b: a @ b, [(3, 4), (3, 4)], (0, 0), 0),
        "matmul_mb": (lambda a, b: a @ b, [(2, 4), (6, 4, 3)], (None, 0), 0),
        "matmul_3d2d": (lambda a, b: a @ b, [(6, 2, 3, 4), (4,)], (0, None), 0),
        "matmul_v_vb": (lambda a, b: a @ b, [(4,), (6, 4)], (None, 0), 0),
        "mm": (lambda a, b: L.mm(a, b), [(3, 2, 4), (4, 5)], (0, None), 0),
        "linear_relu": (lambda a, w: L.relu(a @ w.t() + 1), [(3, 4), (5, 4)], (0, None), 0),
        "gelu_silu": (lambda a: TFL(L).gelu(a) + TFL(L).silu(a), [(3, 4)], 0, 0),
        "layer_norm": (lambda a: TFL(L).layer_norm(a, (4,)), [(3, 2, 4)], 0, 0),
        "mse": (lambda a, b: TFL(L).mse_loss(a, b), [(3, 4), (4,)], (0, None), 0),
        "tril": (lambda a: a.tril(), [(2, 3, 3)], 0, 0),
        "flip": (lambda a: a.flip(-1), [(2, 3, 3)], 1, 0),
        "clamp": (lambda a: a.clamp(-0.5, 0.5) ** 2, [(2, 3)], 0, 0),
        "sort_topk": (lambda a: a.sort(-1)[0] + a.topk(3, 1)[0].sum(), [(2, 3, 4)], 0, 0),
        "pad_repeat": (lambda a: TFL(L).pad(a, (1, 2)).repeat(2, 1, 1), [(2, 3, 4)], 1, 0),
        "contiguous": (lambda a: a.t().contiguous().cumsum(0), [(2, 3, 4)], 0, 0),
        "einsum_norm": (lambda a, b: L.einsum("ij,kj->ik", a, b) + a.norm(dim=-1, keepdim=True),
                        [(2, 3, 4), (5, 4)], (0, None), 0),
    }


def TFL(L):
    return EF if L is ember else TF


VM = sorted(_b(ember))


@pytest.mark.parametrize("name", VM)
def test_vmap_ops(name):
    fe, shapes, ind, outd = _b(ember)[name]
    ft = _b(torch)[name][0]
    ins = [pair(*s, seed=20 + i) for i, s in enumerate(shapes)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        re = efunc.vmap(fe, in_dims=ind, out_dims=outd)(*[e for e, _ in ins])
    rt = tfunc.vmap(ft, in_dims=ind, out_dims=outd)(*[t for _, t in ins])
    close(re, rt)


def test_vmap_conv2d_batched_input_and_weight():
    xe, xt = pair(3, 2, 1, 5, 5, seed=30)
    we, wt = pair(3, 4, 1, 3, 3, seed=31)
    close(efunc.vmap(lambda x: EF.conv2d(x, we[0], padding=1))(xe),
          tfunc.vmap(lambda x: TF.conv2d(x, wt[0], padding=1))(xt))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        re = efunc.vmap(EF.conv2d)(xe, we)
    close(re, tfunc.vmap(TF.conv2d)(xt, wt))


def test_vmap_pytrees_out_dims_and_chunks():
    (ae, at), (be, bt) = pair(4, 3, seed=32), pair(3, 4, seed=33)

    lib_b = {ember: be, torch: bt}

    def f(L):
        return lambda d, c: {"s": d["a"] * c, "t": (d["b"].sum(), lib_b[L] * c)}
    ine = ({"a": ae, "b": be}, 2.0)
    int_ = ({"a": at, "b": bt}, 2.0)
    ind = ({"a": 0, "b": 1}, None)
    outd = {"s": 1, "t": (0, None)}
    assert efunc.vmap(f(ember), in_dims=ind, out_dims={"s": 1, "t": (0, 0)})(*ine)["s"].shape \
        == (3, 4)
    close(efunc.vmap(f(ember), in_dims=ind, out_dims=outd)(*ine),
          tfunc.vmap(f(torch), in_dims=ind, out_dims=outd)(*int_))
    with pytest.raises(ValueError):                                # a batched output
        efunc.vmap(f(ember), in_dims=ind, out_dims={"s": None, "t": (0, None)})(*ine)
    re = efunc.vmap(lambda d, c: d["a"].sin() * c, in_dims=ind, chunk_size=3)(*ine)
    rt = tfunc.vmap(lambda d, c: d["a"].sin() * c, in_dims=ind, chunk_size=3)(*int_)
    close(re, rt)
    # out_dims=None for an unbatched output; unbatched outputs are expanded
    ue, ve = efunc.vmap(lambda a: (a.sum(), be), out_dims=(0, None))(ae)
    ut, vt = tfunc.vmap(lambda a: (a.sum(), bt), out_dims=(0, None))(at)
    close((ue, ve), (ut, vt))
    close(efunc.vmap(lambda a: be)(ae), tfunc.vmap(lambda a: bt)(at))


def test_nested_vmap_and_compositions():
    xe, xt = pair(2, 3, 4, seed=34)
    ye, yt = pair(4, seed=35)
    close(efunc.vmap(efunc.vmap(lambda a, b: (a * b).sum(), in_dims=(0, None)),
                     in_dims=(0, None))(xe, ye),
          tfunc.vmap(tfunc.vmap(lambda a, b: (a * b).sum(), in_dims=(0, None)),
                     in_dims=(0, None))(xt, yt))
    close(efunc.vmap(efunc.vmap(lambda a: a @ ye, in_dims=0), in_dims=1)(xe),
          tfunc.vmap(tfunc.vmap(lambda a: a @ yt, in_dims=0), in_dims=1)(xt))
    close(efunc.vmap(efunc.jacrev(lambda a: a.sin() * a.sum()))(xe[0]),
          tfunc.vmap(tfunc.jacrev(lambda a: a.sin() * a.sum()))(xt[0]))
    # grad of a vmapped function (the outer autograd sees the physical ops)
    close(efunc.grad(lambda a: efunc.vmap(lambda r: r.tanh().sum())(a).sum())(xe[0]),
          tfunc.grad(lambda a: tfunc.vmap(lambda r: r.tanh().sum())(a).sum())(xt[0]))


def test_ensemble_stack_module_state():
    def models(lib):
        lib.manual_seed(0)
        return [lib.nn.Linear(3, 2).double() for _ in range(4)]
    me, mt = models(ember), models(torch)
    for a, b in zip(me, mt):
        a.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in b.state_dict().items()})
    xe, xt = pair(5, 3, seed=36)
    pe, be = efunc.stack_module_state(me)
    pt, bt = tfunc.stack_module_state(mt)
    close(pe, pt)
    assert pe["weight"].requires_grad
    re = efunc.vmap(lambda p, b, x: efunc.functional_call(me[0], (p, b), (x,)),
                    in_dims=(0, 0, None))(pe, be, xe)
    rt = tfunc.vmap(lambda p, b, x: tfunc.functional_call(mt[0], (p, b), (x,)),
                    in_dims=(0, 0, None))(pt, bt, xt)
    close(re, rt)


# ------------------------------------------------------------------ fallback and errors

def test_fallback_warns_and_is_correct():
    xe, xt = pair(3, 4, 4, seed=37)
    # searchsorted: a primitive without a batch rule (trace and histc now batch through
    # their decompositions)
    with pytest.warns(UserWarning, match="There is a performance drop because we have not yet "
                      "implemented the batching rule for aten::searchsorted"):
        re = efunc.vmap(lambda a: ember.searchsorted(a.sort(-1)[0], a))(xe)
    close(re, tfunc.vmap(lambda a: torch.searchsorted(a.sort(-1)[0], a))(xt))


def test_index_ops_batch_without_fallback():
    xe, xt = pair(3, 4, 5, seed=41)
    ie, it = ember.tensor([[[1], [0], [4], [2]]] * 3), torch.tensor([[[1], [0], [4], [2]]] * 3)
    ke, kt = ember.tensor([2, 0, 1]), torch.tensor([2, 0, 1])
    cases = [
        (lambda L, a, i: L.gather(a, 1, i), (0, 0)),
        (lambda L, a, i: L.gather(a, -1, i), (0, None)),
        (lambda L, a, i: L.zeros(4, 5, dtype=a.dtype).scatter_add(1, i, a), (0, 0)),
        (lambda L, a, i: a.index_select(0, i.reshape(-1)[:2]), (0, None)),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fn, ind in cases:
            re = efunc.vmap(lambda a, i: fn(ember, a, i), in_dims=ind)(
                xe, ie if ind[1] == 0 else ie[0])
            rt = tfunc.vmap(lambda a, i: fn(torch, a, i), in_dims=ind)(
                xt, it if ind[1] == 0 else it[0])
            close(re, rt)
        we, wt = pair(6, 3, seed=42)
        close(efunc.vmap(lambda k: EF.embedding(k, we))(ke.reshape(3, 1)),
              tfunc.vmap(lambda k: TF.embedding(k, wt))(kt.reshape(3, 1)))


def test_randomness():
    xe, _ = pair(3, 4, seed=38)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        efunc.vmap(lambda a: a + ember.rand(4))(xe)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        tfunc.vmap(lambda a: a + torch.rand(4))(torch.zeros(3, 4))
    r = efunc.vmap(lambda a: ember.rand(4) + a * 0, randomness="different")(xe)
    assert not np.allclose(r[0].numpy(), r[1].numpy())
    r = efunc.vmap(lambda a: ember.rand(4) + a * 0, randomness="same")(xe)
    np.testing.assert_array_equal(r[0].numpy(), r[2].numpy())
    with pytest.raises(RuntimeError, match="randomness"):
        efunc.vmap(lambda a: a, randomness="sometimes")(xe)
    # random ops on batched inputs: 'same' replays one draw per sample, 'different' does not
    p = ember.full((4, 64), 0.5)
    same = efunc.vmap(ember.bernoulli, randomness="same")(p)
    assert all(np.array_equal(same[0].numpy(), same[i].numpy()) for i in range(4))
    diff = efunc.vmap(ember.bernoulli, randomness="different")(p)
    assert not np.array_equal(diff[0].numpy(), diff[1].numpy())
    drop = efunc.vmap(lambda a: EF.dropout(a, 0.5), randomness="same")(ember.ones(3, 64))
    np.testing.assert_array_equal(drop[0].numpy(), drop[2].numpy())
    assert set(np.unique(drop.numpy())) <= {0.0, 2.0}


@pytest.mark.parametrize("case", ["in_dim_range", "structure", "type", "non_tensor",
                                  "sizes", "no_tensor", "out_type"])
def test_vmap_errors_match_torch(case):
    xe, xt = pair(3, 4, seed=39)
    ye, yt = pair(5, 4, seed=40)
    calls = {
        "in_dim_range": lambda f, x, y: f.vmap(lambda a: a, in_dims=2)(x),
        "structure": lambda f, x, y: f.vmap(lambda a, b: a, in_dims=(0, 0, 0))(x, x),
        "type": lambda f, x, y: f.vmap(lambda a: a, in_dims="0")(x),
        "non_tensor": lambda f, x, y: f.vmap(lambda a, s: a, in_dims=(0, 0))(x, 2.0),
        "sizes": lambda f, x, y: f.vmap(lambda a, b: a + b)(x, y),
        "no_tensor": lambda f, x, y: f.vmap(lambda a: a, in_dims=None)(x),
        "out_type": lambda f, x, y: f.vmap(lambda a: 1.0)(x),
    }
    with pytest.raises(Exception) as et:
        calls[case](tfunc, xt, yt)
    with pytest.raises(type(et.value)):
        calls[case](efunc, xe, ye)
