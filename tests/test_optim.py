"""ember.optim against torch.optim: 20-step parameter trajectories, state_dict round trips
in both directions, the Optimizer base class (groups, hooks, zero_grad, repr) and errors."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember  # noqa: E402

RNG = np.random.default_rng(0)
W0, B0, U0 = RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal(2)
X, Y = RNG.standard_normal((6, 3)), RNG.standard_normal((6, 4))
TOL = {np.float64: 1e-6, np.float32: 1e-5}


def _params(L, dtype):
    """w, b get gradients; u never does (optimizers must skip it and create no state)."""
    return [L.tensor(a.astype(dtype), requires_grad=True) for a in (W0, B0, U0)]


def _loss(L, w, b, dtype):
    x, y = L.tensor(X.astype(dtype)), L.tensor(Y.astype(dtype))
    return ((L.tanh(x @ w + b) - y) ** 2).sum()


def _flat(ps):
    return np.concatenate([p.detach().numpy().ravel() for p in ps])


def _make_opt(L, cls, kw, groups, params):
    if groups is None:
        return getattr(L.optim, cls)(params, **kw)
    g0, g1 = groups
    return getattr(L.optim, cls)([dict(params=params[:1], **g0), dict(params=params[1:], **g1)],
                                 **kw)


def _run(L, cls, kw, groups, dtype, steps=20, params=None, opt=None):
    params = params if params is not None else _params(L, dtype)
    opt = opt if opt is not None else _make_opt(L, cls, kw, groups, params)
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        _loss(L, params[0], params[1], dtype).backward()
        opt.step()
        traj.append(_flat(params))
    return np.array(traj), params, opt


CONFIGS = [
    ("SGD", dict(lr=0.05), None),
    ("SGD", dict(lr=0.05, momentum=0.9), None),
    ("SGD", dict(lr=0.02, momentum=0.9, dampening=0.3, weight_decay=0.1), None),
    ("SGD", dict(lr=0.02, momentum=0.9, nesterov=True), None),
    ("SGD", dict(lr=0.02, momentum=0.5, maximize=True), None),
    ("SGD", dict(lr=0.02, momentum=0.9), ({}, dict(lr=0.05, momentum=0.0))),
    ("Adam", {}, None),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.9)), None),
    ("Adam", dict(lr=0.02, amsgrad=True), None),
    ("Adam", dict(lr=0.02, weight_decay=0.1), None),
    ("Adam", dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True), None),
    ("Adam", dict(lr=0.02, amsgrad=True, weight_decay=0.1, maximize=True), None),
    ("Adam", dict(lr=0.02), ({}, dict(lr=0.1, amsgrad=True))),
    ("AdamW", {}, None),
    ("AdamW", dict(lr=0.02, amsgrad=True, weight_decay=0.3), None),
    ("AdamW", dict(lr=0.02, maximize=True), None),
    ("Adagrad", {}, None),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.1), None),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True), None),
    ("Adadelta", {}, None),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1), None),
    ("Adadelta", dict(maximize=True), ({}, dict(lr=0.3))),
    ("Adamax", {}, None),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, betas=(0.8, 0.99)), None),
    ("Adamax", dict(lr=0.01, maximize=True), None),
    ("NAdam", {}, None),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01, weight_decay=0.1), None),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True), None),
    ("NAdam", dict(lr=0.01, maximize=True), None),
    ("RAdam", {}, None),
    ("RAdam", dict(lr=0.05, weight_decay=0.1), None),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True), None),
    ("RAdam", dict(lr=0.05, maximize=True), None),
    ("RMSprop", {}, None),
    ("RMSprop", dict(lr=0.01, centered=True), None),
    ("RMSprop", dict(lr=0.01, momentum=0.5, alpha=0.9), None),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1), None),
    ("RMSprop", dict(lr=0.01, maximize=True), None),
    ("Rprop", {}, None),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.1)), None),
    ("Rprop", dict(maximize=True), None),
    ("ASGD", {}, None),
    ("ASGD", dict(lr=0.05, t0=5), None),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1), None),
    ("ASGD", dict(lr=0.05, maximize=True), None),
]


def _cfg_id(c):
    return f"{c[0]}-{c[1]}" + ("-groups" if c[2] else "")


def _assert_state_close(e_state, t_state, tol):
    assert set(e_state) == set(t_state)
    for k, tv in t_state.items():
        ev = e_state[k]
        if isinstance(tv, torch.Tensor):
            assert isinstance(ev, ember.Tensor), k
            assert str(ev.dtype) == str(tv.dtype) and tuple(ev.shape) == tuple(tv.shape), k
            np.testing.assert_allclose(ev.numpy(), tv.numpy(), rtol=tol, atol=tol, err_msg=k)
        else:
            assert ev == tv, k


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("cfg", CONFIGS, ids=[_cfg_id(c) for c in CONFIGS])
def test_trajectory_matches_torch(cfg, dtype):
    cls, kw, groups = cfg
    e_traj, e_params, e_opt = _run(ember, cls, kw, groups, dtype)
    t_traj, t_params, t_opt = _run(torch, cls, kw, groups, dtype)
    tol = TOL[dtype]
    np.testing.assert_allclose(e_traj, t_traj, rtol=tol, atol=tol)
    # u (no grad) gets no state, except Adagrad which creates state eagerly (as torch)
    assert (e_params[2] in e_opt.state) == (t_params[2] in t_opt.state) == (cls == "Adagrad")
    for ep, tp in zip(e_params, t_params):
        if tp in t_opt.state:   # float32 accumulators (Adagrad's sum) amplify rounding
            _assert_state_close(e_opt.state[ep], t_opt.state[tp], tol * (10 if
                                                                          dtype == np.float32 else 1))
        assert ep.is_leaf and ep.grad_fn is None and ep.requires_grad


TENSOR_HP = [("SGD", dict(momentum=0.9)), ("Adam", dict(weight_decay=0.1)),
             ("AdamW", dict(amsgrad=True)), ("Adagrad", dict(lr_decay=0.1)), ("Adamax", {}),
             ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
             ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
             ("RMSprop", {}), ("Rprop", {}), ("Adadelta", {}), ("ASGD", dict(t0=3))]


@pytest.mark.parametrize("cls,kw", TENSOR_HP, ids=[c[0] for c in TENSOR_HP])
def test_tensor_lr(cls, kw):
    e_traj = _run(ember, cls, dict(kw, lr=ember.tensor(0.05)), None, np.float64)[0]
    t_traj = _run(torch, cls, dict(kw, lr=torch.tensor(0.05)), None, np.float64)[0]
    # a float32 lr makes the step sizes float32 scalars (1-ulp differences in pow possible)
    np.testing.assert_allclose(e_traj, t_traj, rtol=1e-6, atol=1e-8)


def test_tensor_betas():
    e_traj = _run(ember, "Adam", dict(betas=(ember.tensor(0.8), ember.tensor(0.9))), None,
                  np.float64)[0]
    t_traj = _run(torch, "Adam", dict(betas=(torch.tensor(0.8), torch.tensor(0.9))), None,
                  np.float64)[0]
    np.testing.assert_allclose(e_traj, t_traj, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("cls,kw", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.05)),
                                    ("RMSprop", dict(lr=0.01, centered=True)),
                                    ("Adagrad", dict(lr=0.1))])
def test_complex_params(cls, kw):
    z0 = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)

    def run(L):
        z = L.tensor(z0, requires_grad=True)
        opt = getattr(L.optim, cls)([z], **kw)
        for _ in range(20):
            opt.zero_grad()
            ((z - (1 + 2j)).abs() ** 2).sum().backward()
            opt.step()
        return z.detach().numpy()
    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- LBFGS
LBFGS_CONFIGS = [dict(lr=0.1), dict(lr=0.1, history_size=3, max_iter=5),
                 dict(lr=1, line_search_fn="strong_wolfe"),
                 dict(lr=1, line_search_fn="strong_wolfe", history_size=2, max_iter=10,
                      tolerance_change=1e-12)]


@pytest.mark.parametrize("kw", LBFGS_CONFIGS, ids=str)
def test_lbfgs_matches_torch(kw):
    def run(L):
        w, b, _ = _params(L, np.float64)
        opt = L.optim.LBFGS([w, b], **kw)

        def closure():
            opt.zero_grad()
            loss = _loss(L, w, b, np.float64)
            loss.backward()
            return loss
        losses = [float(opt.step(closure)) for _ in range(3)]
        return _flat([w, b]), losses, opt.state[w]["func_evals"], opt.state[w]["n_iter"]
    e, t = run(ember), run(torch)
    np.testing.assert_allclose(e[0], t[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(e[1], t[1], rtol=1e-9)
    assert e[2:] == t[2:]


def test_lbfgs_errors():
    w = ember.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="per-parameter options"):
        ember.optim.LBFGS([{"params": [w]}, {"params": [ember.zeros(1, requires_grad=True)]}])
    opt = ember.optim.LBFGS([w], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = ((w - 1) ** 2).sum()
        loss.backward()
        return loss
    with pytest.raises(RuntimeError, match="strong_wolfe"):
        opt.step(closure)


# ---------------------------------------------------------------- state_dict round trips
def _convert(obj, to):
    if isinstance(obj, (ember.Tensor, torch.Tensor)):
        arr = obj.detach().numpy().copy()
        return torch.from_numpy(arr) if to is torch else ember.from_numpy(arr)
    if isinstance(obj, dict):
        return {k: _convert(v, to) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_convert(v, to) for v in obj)
    return obj


ROUND_TRIP = [c for c in CONFIGS if c[2] is not None] + [
    ("SGD", dict(lr=0.02, momentum=0.9, nesterov=True), None),
    ("Adam", dict(lr=0.02, amsgrad=True), None), ("AdamW", {}, None), ("Adagrad", {}, None),
    ("Adamax", {}, None), ("NAdam", {}, None), ("RAdam", {}, None),
    ("RMSprop", dict(centered=True, momentum=0.5), None), ("Rprop", {}, None),
    ("ASGD", dict(t0=3), None)]


@pytest.mark.parametrize("direction", ["ember_to_torch", "torch_to_ember"])
@pytest.mark.parametrize("cfg", ROUND_TRIP, ids=[_cfg_id(c) for c in ROUND_TRIP])
def test_state_dict_round_trip(cfg, direction):
    cls, kw, groups = cfg
    src, dst = (ember, torch) if direction == "ember_to_torch" else (torch, ember)
    _, src_params, src_opt = _run(src, cls, kw, groups, np.float64, steps=5)
    sd = src_opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == ([[0, 1, 2]] if groups is None
                                                         else [[0], [1, 2]])
    # the layout equals the other framework's after the same 5 steps
    _, _, ref_opt = _run(dst, cls, kw, groups, np.float64, steps=5)
    ref_sd = ref_opt.state_dict()
    assert _convert(sd["param_groups"], dst) == ref_sd["param_groups"]
    assert sorted(sd["state"]) == sorted(ref_sd["state"])
    for i in sd["state"]:
        assert set(sd["state"][i]) == set(ref_sd["state"][i])
    # load into the other framework and continue: both follow the same trajectory
    dst_params = [dst.tensor(p.detach().numpy().copy(), requires_grad=True) for p in src_params]
    dst_opt = _make_opt(dst, cls, kw, groups, dst_params)
    dst_opt.load_state_dict(_convert(sd, dst))
    a = _run(src, cls, kw, groups, np.float64, steps=5, params=src_params, opt=src_opt)[0]
    b = _run(dst, cls, kw, groups, np.float64, steps=5, params=dst_params, opt=dst_opt)[0]
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_state_dict_lbfgs_round_trip():
    def make(L):
        w, b, _ = _params(L, np.float64)
        opt = L.optim.LBFGS([w, b], lr=0.1, history_size=4)

        def closure():
            opt.zero_grad()
            loss = _loss(L, w, b, np.float64)
            loss.backward()
            return loss
        return w, b, opt, closure
    ew, eb, eopt, eclos = make(ember)
    eopt.step(eclos)
    tw, tb, topt, tclos = make(torch)
    with torch.no_grad():
        tw.copy_(torch.from_numpy(ew.detach().numpy().copy()))
        tb.copy_(torch.from_numpy(eb.detach().numpy().copy()))
    topt.load_state_dict(_convert(eopt.state_dict(), torch))
    eopt.step(eclos)
    topt.step(tclos)
    np.testing.assert_allclose(_flat([ew, eb]), _flat([tw, tb]), rtol=1e-9, atol=1e-12)


def test_load_state_dict_casts_state_to_param_dtype_and_keeps_step():
    p = ember.zeros(3, dtype=ember.float32, requires_grad=True)
    opt = ember.optim.Adam([p])
    sd = {"state": {0: {"step": ember.tensor(4.0), "exp_avg": ember.ones(3, dtype=ember.float64),
                        "exp_avg_sq": ember.ones(3, dtype=ember.float64)}},
          "param_groups": [dict(opt.state_dict()["param_groups"][0], lr=0.5)]}
    opt.load_state_dict(sd)
    assert opt.state[p]["exp_avg"].dtype is ember.float32
    assert opt.state[p]["step"].dtype is ember.float32
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["params"][0] is p


def test_load_state_dict_errors():
    a, b = ember.zeros(2, requires_grad=True), ember.zeros(2, requires_grad=True)
    opt = ember.optim.SGD([a, b], lr=0.1)
    t_opt = torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict(_convert(t_opt.state_dict(), ember))
    two = ember.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        two.load_state_dict(opt.state_dict())


def test_state_dict_hooks():
    p = ember.zeros(2, requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1)
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: dict(sd, extra=1))
    assert opt.state_dict()["extra"] == 1 and calls == ["pre"]
    opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append("lpre"))
    opt.register_load_state_dict_post_hook(lambda o: calls.append("lpost"), prepend=True)
    opt.load_state_dict(opt.state_dict())
    assert calls == ["pre", "pre", "lpre", "lpost"]


# ---------------------------------------------------------------- base class behaviour
def test_repr_matches_torch():
    for cls, kw in [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", {}), ("AdamW", {}),
                    ("RMSprop", {}), ("LBFGS", {}), ("Rprop", {}), ("NAdam", {}),
                    ("ASGD", {}), ("Adagrad", {})]:
        e = getattr(ember.optim, cls)([ember.zeros(2, requires_grad=True)], **kw)
        t = getattr(torch.optim, cls)([torch.zeros(2, requires_grad=True)], **kw)
        assert repr(e) == repr(t)
    e = ember.optim.SGD([{"params": [ember.zeros(1, requires_grad=True)]},
                         {"params": [ember.zeros(1, requires_grad=True)], "lr": 0.5}], lr=0.1)
    t = torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)]},
                         {"params": [torch.zeros(1, requires_grad=True)], "lr": 0.5}], lr=0.1)
    assert repr(e) == repr(t)


def test_defaults_and_groups_match_torch():
    for name in ["SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
                 "RMSprop", "Rprop", "ASGD", "LBFGS"]:
        e = getattr(ember.optim, name)([ember.zeros(1, requires_grad=True)])
        t = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)])
        assert e.defaults == t.defaults, name
        assert list(e.param_groups[0]) == list(t.param_groups[0]), name


def test_add_param_group_and_named_params():
    a, b = ember.zeros(2, requires_grad=True), ember.zeros(3, requires_grad=True)
    opt = ember.optim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.5})
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["momentum"] == 0.9
    named = ember.optim.Adam([("w", a), ("b", b)])
    assert named.param_groups[0]["param_names"] == ["w", "b"]
    assert named.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]


def _errors(L):
    a = L.zeros(2, requires_grad=True)
    return [
        (TypeError, lambda: L.optim.SGD(a, lr=0.1)),
        (ValueError, lambda: L.optim.SGD([], lr=0.1)),
        (TypeError, lambda: L.optim.SGD([1.0], lr=0.1)),
        (ValueError, lambda: L.optim.SGD([a * 2], lr=0.1)),
        (TypeError, lambda: L.optim.SGD(lr=0.1, params=[{"params": {a}}])),
        (TypeError, lambda: L.optim.SGD([a], lr=0.1).add_param_group([a])),
        (ValueError, lambda: L.optim.SGD([a], lr=0.1).add_param_group({"params": [a]})),
        (ValueError, lambda: L.optim.SGD([("a", a)], lr=0.1).add_param_group(
            {"params": [L.zeros(1, requires_grad=True)]})),
        (ValueError, lambda: L.optim.SGD([a], lr=-0.1)),
        (ValueError, lambda: L.optim.SGD([a], momentum=-0.1)),
        (ValueError, lambda: L.optim.SGD([a], weight_decay=-0.1)),
        (ValueError, lambda: L.optim.SGD([a], nesterov=True)),
        (ValueError, lambda: L.optim.SGD([a], lr=L.tensor([0.1, 0.2]))),
        (ValueError, lambda: L.optim.Adam([a], lr=-1.0)),
        (ValueError, lambda: L.optim.Adam([a], eps=-1.0)),
        (ValueError, lambda: L.optim.Adam([a], betas=(1.0, 0.9))),
        (ValueError, lambda: L.optim.Adam([a], betas=(0.9, -0.1))),
        (ValueError, lambda: L.optim.Adam([a], betas=(0, 0.9))),
        (ValueError, lambda: L.optim.Adam([a], weight_decay=-1)),
        (ValueError, lambda: L.optim.AdamW([a], lr=-1.0)),
        (ValueError, lambda: L.optim.Adagrad([a], lr_decay=-1.0)),
        (ValueError, lambda: L.optim.Adagrad([a], initial_accumulator_value=-1.0)),
        (ValueError, lambda: L.optim.Adadelta([a], rho=1.5)),
        (ValueError, lambda: L.optim.Adamax([a], betas=(0.9, 1.0))),
        (ValueError, lambda: L.optim.NAdam([a], momentum_decay=-1.0)),
        (ValueError, lambda: L.optim.RAdam([a], eps=-1.0)),
        (ValueError, lambda: L.optim.RMSprop([a], alpha=-1.0)),
        (ValueError, lambda: L.optim.RMSprop([a], momentum=-1.0)),
        (ValueError, lambda: L.optim.Rprop([a], etas=(1.5, 1.2))),
        (ValueError, lambda: L.optim.ASGD([a], weight_decay=-1.0)),
        (ValueError, lambda: L.optim.LBFGS([a], lr=-1.0)),
        (ValueError, lambda: L.optim.SparseAdam([a], lr=0.0)),
        (ValueError, lambda: L.optim.SparseAdam([a], eps=0.0)),
        (TypeError, lambda: L.optim.Adadelta([a], fused=True)),
    ]


@pytest.mark.parametrize("i", range(len(_errors(ember))))
def test_errors_match_torch(i):
    exc, fn = _errors(torch)[i]
    with pytest.raises(exc):
        fn()
    exc, fn = _errors(ember)[i]
    with pytest.raises(exc):
        fn()


@pytest.mark.parametrize("name", ["RMSprop", "NAdam", "RAdam", "Adadelta", "Adamax",
                                  "Rprop", "ASGD"])
def test_capturable_on_cpu_raises_like_torch(name):
    # Adam/AdamW accept capturable=True on ember's cpu (tests/test_capture_effects.py)
    for L in (torch, ember):
        p = L.ones(2, requires_grad=True)
        p.grad = L.ones(2)
        with pytest.raises(AssertionError, match="capturable=True"):
            getattr(L.optim, name)([p], capturable=True).step()


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
def test_fused_and_differentiable_not_implemented(name):
    p = ember.zeros(2, requires_grad=True)
    with pytest.raises(NotImplementedError, match="fused=True"):
        getattr(ember.optim, name)([p], fused=True)
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        getattr(ember.optim, name)([p], differentiable=True)
    getattr(ember.optim, name)([p], foreach=True, fused=False)


def test_sparse_adam_not_implemented():
    with pytest.raises(NotImplementedError, match="SparseAdam.*sparse"):
        ember.optim.SparseAdam([ember.zeros(2, requires_grad=True)])


def test_duplicate_params_warn():
    a = ember.zeros(2, requires_grad=True)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        ember.optim.SGD([a, a], lr=0.1)


def test_zero_grad():
    a = ember.ones(2, requires_grad=True)
    opt = ember.optim.SGD([a], lr=0.1)
    (a * 3).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert a.grad is not None and a.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None


def test_step_hooks_and_closure():
    w = ember.ones(2, requires_grad=True)
    opt = ember.optim.SGD([w], lr=0.5)
    calls = []

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    def pre(o, args, kwargs):
        calls.append(("pre", len(args)))
        return (args[0],), {"closure": closure}
    h1 = opt.register_step_pre_hook(pre)
    h2 = opt.register_step_post_hook(lambda o, a, k: calls.append(("post", "closure" in k)))
    g = ember.optim.optimizer.register_optimizer_step_post_hook(
        lambda o, a, k: calls.append("global"))
    loss = opt.step()
    assert float(loss) == 2.0 and w.tolist() == [0.0, 0.0]
    assert calls == [("pre", 1), ("post", True), "global"]
    h1.remove(), h2.remove(), g.remove()
    calls.clear()
    opt.step(closure)
    assert calls == []
    opt.register_step_pre_hook(lambda o, a, k: 5)
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step(closure)


def test_step_ops_are_visible_to_modes():
    from ember.utils._python_dispatch import TorchDispatchMode
    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func.name)
            return func(*args, **(kwargs or {}))
    w = ember.ones(3, requires_grad=True)
    opt = ember.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    with Record():
        opt.step()
    assert any("addcdiv" in n for n in seen) and any("lerp" in n for n in seen)
    assert w.is_leaf and w.grad_fn is None


def test_step_under_grad_mode_keeps_leaves():
    w = ember.ones(3, requires_grad=True)
    opt = ember.optim.RMSprop([w], lr=0.1, momentum=0.5)
    for _ in range(2):
        opt.zero_grad()
        (w ** 3).sum().backward()
        opt.step()
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    assert ember.is_grad_enabled()
    assert all(not t.requires_grad for t in opt.state[w].values())


def test_scheduler_compatible_scalar_state_dtype_follows_default_dtype():
    prev = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        w = ember.ones(2, dtype=ember.float32, requires_grad=True)
        opt = ember.optim.Adam([w])
        w.grad = ember.ones(2, dtype=ember.float32)
        opt.step()
        assert opt.state[w]["step"].dtype is ember.float64
    finally:
        ember.set_default_dtype(prev)


def test_pickle_round_trip():
    import copy
    w = ember.ones(2, requires_grad=True)
    opt = ember.optim.Adam([w], lr=0.1)
    w.grad = ember.ones(2)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt2 = copy.deepcopy(opt)
    assert opt2.param_groups[0]["lr"] == 0.1 and len(opt2.state) == 1
