"""ember.optim.lr_scheduler and swa_utils against PyTorch: learning-rate (and momentum)
sequences over 35+ steps, chained/sequential schedulers, ReduceLROnPlateau on a scripted
metric, state_dict round trips, errors and warnings; AveragedModel/SWALR/update_bn."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember  # noqa: E402

STEPS = 36


def _opt(L, name="SGD"):
    params = [L.zeros(2, requires_grad=True), L.zeros(3, requires_grad=True)]
    groups = [{"params": params[:1]}, {"params": params[1:], "lr": 0.05}]
    if name == "SGD":
        return L.optim.SGD(groups, lr=0.1, momentum=0.9)
    return getattr(L.optim, name)(groups, lr=0.1)


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


def _sequence(L, make, opt_name="SGD", steps=STEPS):
    opt = _opt(L, opt_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = make(L.optim.lr_scheduler, opt)
    seq = [(list(sched.get_last_lr()), [g["lr"] for g in opt.param_groups], _momenta(opt))]
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append((list(sched.get_last_lr()), [g["lr"] for g in opt.param_groups],
                    _momenta(opt)))
    return seq


def _assert_same(e, t):
    assert len(e) == len(t)
    for i, (a, b) in enumerate(zip(e, t)):
        np.testing.assert_allclose(_flatten(a), _flatten(b), rtol=1e-12, atol=1e-15,
                                   err_msg=f"step {i}")


def _flatten(x):
    if isinstance(x, (list, tuple)):
        return np.concatenate([_flatten(v) for v in x]) if x else np.zeros(0)
    return np.array([float(x)])


SCHEDULERS = {
    "LambdaLR": lambda S, o: S.LambdaLR(o, lambda e: 0.95 ** e),
    "LambdaLR-list": lambda S, o: S.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)]),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.9),
    "StepLR": lambda S, o: S.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, milestones=[3, 10, 10, 25], gamma=0.3),
    "ConstantLR": lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=6),
    "LinearLR": lambda S, o: S.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=12),
    "LinearLR-down": lambda S, o: S.LinearLR(o, start_factor=1.0, end_factor=0.1,
                                             total_iters=20),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, gamma=0.93),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o, total_iters=20, power=2.0),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "CosineWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=5, eta_min=0.01),
    "CosineWarmRestarts-mult": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
    "CyclicLR": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR-tri2": lambda S, o: S.CyclicLR(o, 0.01, [0.1, 0.2], step_size_up=3,
                                             step_size_down=5, mode="triangular2"),
    "CyclicLR-exp": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4, mode="exp_range",
                                            gamma=0.9, base_momentum=0.7, max_momentum=0.95),
    "CyclicLR-fn": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=5,
                                           scale_fn=lambda x: 1 / (1 + 0.1 * x),
                                           scale_mode="iterations", cycle_momentum=False),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, max_lr=[0.1, 0.2], total_steps=40),
    "OneCycleLR-linear": lambda S, o: S.OneCycleLR(o, max_lr=0.1, epochs=4, steps_per_epoch=10,
                                                   anneal_strategy="linear", pct_start=0.25),
    "OneCycleLR-3phase": lambda S, o: S.OneCycleLR(o, max_lr=0.1, total_steps=37,
                                                   three_phase=True, div_factor=10.0,
                                                   final_div_factor=100.0),
    "SequentialLR": lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=5), S.ExponentialLR(o, gamma=0.9)],
        milestones=[5]),
    "SequentialLR-3": lambda S, o: S.SequentialLR(
        o, [S.ConstantLR(o, factor=0.5, total_iters=4), S.CosineAnnealingLR(o, T_max=8),
            S.StepLR(o, step_size=3, gamma=0.5)], milestones=[6, 20]),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.2, total_iters=4), S.ExponentialLR(o, gamma=0.9)]),
    "Chained-cos-multistep": lambda S, o: S.ChainedScheduler(
        [S.CosineAnnealingLR(o, T_max=12, eta_min=0.001), S.MultiStepLR(o, [5, 15], 0.5)],
        optimizer=o),
    "SWALR-cos": lambda S, o: ember_or_torch_swalr(S)(o, swa_lr=0.02, anneal_epochs=6),
    "SWALR-linear": lambda S, o: ember_or_torch_swalr(S)(o, swa_lr=[0.02, 0.01],
                                                        anneal_epochs=4,
                                                        anneal_strategy="linear"),
    "SWALR-0": lambda S, o: ember_or_torch_swalr(S)(o, swa_lr=0.02, anneal_epochs=0),
}


def ember_or_torch_swalr(S):
    return (ember.optim.swa_utils if S is ember.optim.lr_scheduler
            else torch.optim.swa_utils).SWALR


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_lr_sequence_matches_torch(name):
    make = SCHEDULERS[name]
    _assert_same(_sequence(ember, make), _sequence(torch, make))


@pytest.mark.parametrize("name", ["CyclicLR", "OneCycleLR", "OneCycleLR-3phase"])
def test_cycle_momentum_with_betas(name):
    make = SCHEDULERS[name]
    _assert_same(_sequence(ember, make, "Adam"), _sequence(torch, make, "Adam"))


def test_cycle_momentum_requires_momentum():
    for L in (ember, torch):
        with pytest.raises(ValueError, match="momentum or beta1"):
            L.optim.lr_scheduler.CyclicLR(_opt(L, "Adagrad"), 0.01, 0.1)


def test_schedulers_drive_optimizer_lr():
    """The written lr is what the optimizer uses (SGD, 36 steps, StepLR)."""
    def run(L):
        w = L.tensor(np.array([1.0, -2.0]), requires_grad=True)
        opt = L.optim.SGD([w], lr=0.1)
        sched = L.optim.lr_scheduler.StepLR(opt, 5, 0.5)
        for _ in range(STEPS):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
            sched.step()
        return w.detach().numpy()
    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-12)


PLATEAU = [dict(), dict(mode="max", patience=2), dict(threshold_mode="abs", threshold=0.05,
                                                       patience=1),
           dict(mode="max", threshold_mode="abs", threshold=0.1, patience=0, cooldown=2),
           dict(patience=1, cooldown=3, min_lr=[0.01, 0.02], factor=0.5),
           dict(patience=0, factor=0.5, min_lr=0.03, eps=1e-3)]
METRIC = [1.0, 0.9, 0.95, 0.95, 0.97, 0.8, 0.81, 0.82, 0.83, 0.79, 0.78, 0.9, 1.2, 1.3, 1.25,
          1.4, 0.5, 0.49, 0.495, 0.6, 0.7, 0.7, 0.7, 0.3, 0.3, 0.31, 0.32, 0.2, 0.25, 0.25,
          0.24, 0.26, 0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]


@pytest.mark.parametrize("kw", PLATEAU, ids=str)
def test_reduce_lr_on_plateau_scripted(kw):
    def run(L):
        opt = _opt(L)
        sched = L.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
        out = []
        for m in METRIC:
            opt.step()
            sched.step(L.tensor(m) if len(out) % 2 else m)
            out.append((sched.get_last_lr(), [g["lr"] for g in opt.param_groups],
                        [sched.num_bad_epochs, sched.cooldown_counter, sched.last_epoch]))
        return out
    _assert_same(run(ember), run(torch))


def test_reduce_lr_on_plateau_added_group():
    for L in (ember, torch):
        opt = _opt(L)
        sched = L.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, min_lr=[0.0, 0.0])
        opt.add_param_group({"params": [L.zeros(1, requires_grad=True)]})
        sched.step(1.0)
        with pytest.raises(RuntimeError, match="number of param groups"):
            sched.step(2.0)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "CosineAnnealingLR", "LinearLR",
                                  "ExponentialLR", "PolynomialLR", "ConstantLR",
                                  "CosineWarmRestarts-mult"])
def test_step_with_epoch_uses_closed_form(name):
    def run(L):
        opt = _opt(L)
        sched = SCHEDULERS[name](L.optim.lr_scheduler, opt)
        out = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for epoch in [3, 7, 8, 2, 15, 30]:
                opt.step()
                sched.step(epoch)
                out.append(sched.get_last_lr())
        out.append([float(any("epoch parameter" in str(x.message) for x in w))])
        return out
    _assert_same(run(ember), run(torch))


def _to_plain(sd, L):
    """Scheduler state is Python values; only the LambdaLR lists etc. pass through."""
    return {k: (_to_plain(v, L) if isinstance(v, dict) and k != "milestones" else
                [_to_plain(x, L) if isinstance(x, dict) else x for x in v]
                if isinstance(v, list) else v) for k, v in sd.items()}


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "CyclicLR", "OneCycleLR",
                                  "SequentialLR", "ChainedScheduler", "CosineWarmRestarts",
                                  "LambdaLR", "SWALR-cos"])
@pytest.mark.parametrize("src", ["ember", "torch"])
def test_scheduler_state_dict_round_trip(name, src):
    """Resume a schedule from a state_dict saved mid-way (by ember or by torch)."""
    make = SCHEDULERS[name]
    src_lib = ember if src == "ember" else torch
    opt = _opt(src_lib)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = make(src_lib.optim.lr_scheduler, opt)
    for _ in range(11):
        opt.step()
        sched.step()
    sd = sched.state_dict()
    e_opt = _opt(ember)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e_sched = make(ember.optim.lr_scheduler, e_opt)
    e_sched.load_state_dict(_to_plain(sd, ember))
    for g, sg in zip(e_opt.param_groups, opt.param_groups):
        g.update({k: v for k, v in sg.items() if k != "params"})
    out_e, out_s = [], []
    for _ in range(20):
        e_opt.step(), opt.step()
        e_sched.step(), sched.step()
        out_e.append(e_sched.get_last_lr())
        out_s.append(sched.get_last_lr())
    _assert_same(out_e, out_s)


def test_state_dict_contents_match_torch():
    for name in ["StepLR", "CyclicLR", "OneCycleLR", "SequentialLR", "LambdaLR"]:
        e_opt, t_opt = _opt(ember), _opt(torch)
        e = SCHEDULERS[name](ember.optim.lr_scheduler, e_opt).state_dict()
        t = SCHEDULERS[name](torch.optim.lr_scheduler, t_opt).state_dict()
        assert set(e) == set(t), name


def test_get_lr_outside_step_warns_and_call_order_warning():
    for L in (ember, torch):
        opt = _opt(L)
        sched = L.optim.lr_scheduler.StepLR(opt, 3)
        with pytest.warns(UserWarning, match="get_last_lr"):
            sched.get_lr()
        with pytest.warns(UserWarning, match=r"before `optimizer.step\(\)`"):
            sched.step()
        opt2 = _opt(L)
        sched2 = L.optim.lr_scheduler.ExponentialLR(opt2, 0.9)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            opt2.step()
            sched2.step()


def test_tensor_lr_is_updated_in_place():
    for L in (ember, torch):
        lr = L.tensor(0.1)
        opt = L.optim.SGD([L.zeros(2, requires_grad=True)], lr=lr)
        sched = L.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        opt.step()
        sched.step()
        assert opt.param_groups[0]["lr"] is lr
        assert abs(float(lr) - 0.05) < 1e-8


def _errors(L):
    S = L.optim.lr_scheduler
    o = _opt(L)
    return [
        (TypeError, lambda: S.StepLR(object(), 3)),
        (KeyError, lambda: S.StepLR(_opt(L), 3, last_epoch=4)),
        (ValueError, lambda: S.LambdaLR(o, [lambda e: 1.0])),
        (TypeError, lambda: S.MultiplicativeLR(o, [1.0, 2.0])),
        (ValueError, lambda: S.ConstantLR(o, factor=1.5)),
        (ValueError, lambda: S.LinearLR(o, start_factor=0)),
        (ValueError, lambda: S.LinearLR(o, end_factor=1.5)),
        (ValueError, lambda: S.CosineAnnealingWarmRestarts(o, T_0=0)),
        (ValueError, lambda: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0)),
        (ValueError, lambda: S.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="x")),
        (ValueError, lambda: S.CyclicLR(o, 0.01, 0.1, mode="bad")),
        (ValueError, lambda: S.CyclicLR(o, [0.01], 0.1)),
        (ValueError, lambda: S.OneCycleLR(o, 0.1)),
        (ValueError, lambda: S.OneCycleLR(o, 0.1, total_steps=0)),
        (ValueError, lambda: S.OneCycleLR(o, 0.1, epochs=0, steps_per_epoch=3)),
        (ValueError, lambda: S.OneCycleLR(o, 0.1, total_steps=10, pct_start=1.5)),
        (ValueError, lambda: S.OneCycleLR(o, 0.1, total_steps=10, anneal_strategy="x")),
        (ValueError, lambda: S.ReduceLROnPlateau(o, factor=1.0)),
        (ValueError, lambda: S.ReduceLROnPlateau(o, mode="x")),
        (ValueError, lambda: S.ReduceLROnPlateau(o, threshold_mode="x")),
        (ValueError, lambda: S.ReduceLROnPlateau(o, min_lr=[0.1])),
        (ValueError, lambda: S.SequentialLR(o, [], milestones=[])),
        (ValueError, lambda: S.SequentialLR(o, [S.StepLR(o, 2), S.StepLR(o, 3)], [])),
        (ValueError, lambda: S.SequentialLR(o, [S.ReduceLROnPlateau(o)], [])),
        (ValueError, lambda: S.SequentialLR(o, [S.StepLR(_opt(L), 2)], [])),
        (ValueError, lambda: S.ChainedScheduler([])),
        (ValueError, lambda: L.optim.swa_utils.SWALR(o, 0.1, anneal_strategy="x")),
        (ValueError, lambda: L.optim.swa_utils.SWALR(o, 0.1, anneal_epochs=-1)),
        (ValueError, lambda: L.optim.swa_utils.get_ema_avg_fn(1.5)),
        (ValueError, lambda: L.optim.swa_utils.get_ema_multi_avg_fn(-0.1)),
    ]


@pytest.mark.parametrize("i", range(len(_errors(ember))))
def test_errors_match_torch(i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for L in (torch, ember):
            exc, fn = _errors(L)[i]
            with pytest.raises(exc):
                fn()


def test_one_cycle_too_many_steps():
    for L in (ember, torch):
        opt = _opt(L)
        sched = L.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(3):
                opt.step()
                sched.step()
            with pytest.raises(ValueError, match="Tried to step 4 times"):
                sched.step()


# ---------------------------------------------------------------- swa_utils
def _model(L):
    return L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4), L.nn.Linear(4, 2))


def _twin_models():
    t = _model(torch)
    e = _model(ember)
    e.load_state_dict({k: ember.tensor(v.detach().numpy().copy()) for k, v in
                       t.state_dict().items()})
    return e, t


AVG = {
    "swa": lambda L: {},
    "ema-multi": lambda L: {"multi_avg_fn": L.optim.swa_utils.get_ema_multi_avg_fn(0.9)},
    "ema": lambda L: {"avg_fn": L.optim.swa_utils.get_ema_avg_fn(0.8)},
    "swa-multi": lambda L: {"multi_avg_fn": L.optim.swa_utils.get_swa_multi_avg_fn()},
    "ema-buffers": lambda L: {"multi_avg_fn": L.optim.swa_utils.get_ema_multi_avg_fn(0.7),
                              "use_buffers": True},
}


@pytest.mark.parametrize("name", list(AVG))
def test_averaged_model_matches_torch(name):
    e_model, t_model = _twin_models()
    e_avg = ember.optim.swa_utils.AveragedModel(e_model, **AVG[name](ember))
    t_avg = torch.optim.swa_utils.AveragedModel(t_model, **AVG[name](torch))
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = rng.standard_normal((8, 3)).astype(np.float32)
        e_model.train(), t_model.train()
        e_model(ember.tensor(x)), t_model(torch.tensor(x))   # moves BN running stats
        new = {k: rng.standard_normal(tuple(v.shape)).astype(np.float32)
               for k, v in t_model.named_parameters()}
        with torch.no_grad():
            for k, v in t_model.named_parameters():
                v.copy_(torch.tensor(new[k]))
        with ember.no_grad():
            for k, v in e_model.named_parameters():
                v.copy_(ember.tensor(new[k]))
        e_avg.update_parameters(e_model)
        t_avg.update_parameters(t_model)
    e_sd, t_sd = e_avg.state_dict(), t_avg.state_dict()
    assert list(e_sd) == list(t_sd)
    for k in t_sd:
        np.testing.assert_allclose(e_sd[k].numpy(), t_sd[k].numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=k)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    e_avg.eval(), t_avg.eval()
    np.testing.assert_allclose(e_avg(ember.tensor(x)).detach().numpy(),
                               t_avg(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_swa_multi_avg_fn_on_integer_buffers_raises_like_torch():
    """torch's get_swa_multi_avg_fn uses addcdiv_ on integer buffers (num_batches_tracked),
    which PyTorch rejects; ember raises the same RuntimeError."""
    for L in (ember, torch):
        m = _model(L)
        avg = L.optim.swa_utils.AveragedModel(
            m, multi_avg_fn=L.optim.swa_utils.get_swa_multi_avg_fn(), use_buffers=True)
        avg.update_parameters(m)
        with pytest.raises(RuntimeError, match="addcdiv"):
            avg.update_parameters(m)


def test_averaged_model_rejects_two_fns():
    m = _model(ember)
    fn = ember.optim.swa_utils.get_swa_avg_fn()
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        ember.optim.swa_utils.AveragedModel(m, avg_fn=fn,
                                            multi_avg_fn=ember.optim.swa_utils.get_swa_multi_avg_fn())


@pytest.mark.parametrize("tuples", [False, True], ids=["tensors", "tuples"])
def test_update_bn_matches_torch(tuples):
    e_model, t_model = _twin_models()
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((6, 3)).astype(np.float32) * 3 + 1 for _ in range(4)]
    e_loader = [(ember.tensor(x), 0) if tuples else ember.tensor(x) for x in xs]
    t_loader = [(torch.tensor(x), 0) if tuples else torch.tensor(x) for x in xs]
    e_model.eval(), t_model.eval()
    ember.optim.swa_utils.update_bn(e_loader, e_model)
    torch.optim.swa_utils.update_bn(t_loader, t_model)
    assert not e_model.training and e_model[1].momentum == 0.1
    for k in ["1.running_mean", "1.running_var", "1.num_batches_tracked"]:
        np.testing.assert_allclose(e_model.state_dict()[k].numpy(),
                                   t_model.state_dict()[k].numpy(), rtol=1e-5, atol=1e-6)


def test_update_bn_without_batchnorm_is_noop():
    m = ember.nn.Linear(2, 2)
    w = m.weight.detach().numpy().copy()
    ember.optim.swa_utils.update_bn([ember.ones(1, 2)], m)
    np.testing.assert_array_equal(m.weight.detach().numpy(), w)
