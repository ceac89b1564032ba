"""Normalization layers against PyTorch: BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d,
LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm and their functionals.

Modules are built in both frameworks, torch's state_dict is copied into ember's, and
outputs, input and parameter gradients and running statistics are compared over
several training steps, then in eval mode."""
import numpy as np
import pytest

from oracle import check, check_error, gradcheck, randn, NC, torch, to_numpy

import ember

# -------------------------------------------------------------------- helpers


def pair(ctor, double=False):
    """ctor(nn) in torch and ember, with torch's state copied into ember's module."""
    tm, em = ctor(torch.nn), ctor(ember.nn)
    if double:
        tm, em = tm.double(), em.double()
    em.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    return em, tm


def step(em, tm, x, atol=1e-5, seed=0):
    """One forward/backward in both; compares output, input grad, parameter grads."""
    xe = ember.from_numpy(x.copy()).requires_grad_(True)
    xt = torch.from_numpy(x.copy()).requires_grad_(True)
    ye, yt = em(xe), tm(xt)
    np.testing.assert_allclose(to_numpy(ye), to_numpy(yt), atol=atol, rtol=1e-4)
    assert str(ye.dtype) == str(yt.dtype)
    w = np.random.default_rng(seed).standard_normal(tuple(yt.shape)).astype(x.dtype)
    (ye * ember.from_numpy(w)).sum().backward()
    (yt * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(to_numpy(xe.grad), to_numpy(xt.grad), atol=atol * 10, rtol=1e-3)
    pe, pt = dict(em.named_parameters()), dict(tm.named_parameters())
    assert pe.keys() == pt.keys()
    for k in pt:
        np.testing.assert_allclose(to_numpy(pe[k].grad), to_numpy(pt[k].grad), atol=atol * 10,
                                   rtol=1e-3, err_msg=k)


def same_buffers(em, tm, atol=1e-5):
    be, bt = dict(em.named_buffers()), dict(tm.named_buffers())
    assert be.keys() == bt.keys()
    for k in bt:
        assert str(be[k].dtype) == str(bt[k].dtype), k
        np.testing.assert_allclose(to_numpy(be[k]), to_numpy(bt[k]), atol=atol, rtol=1e-5,
                                   err_msg=k)


# ---------------------------------------------------------------- reprs, state

REPRS = [
    "nn.BatchNorm1d(3)", "nn.BatchNorm2d(4, eps=1e-3, momentum=None, affine=False)",
    "nn.BatchNorm3d(2, track_running_stats=False, bias=False)",
    "nn.InstanceNorm1d(3)", "nn.InstanceNorm2d(3, affine=True, track_running_stats=True)",
    "nn.InstanceNorm3d(2, momentum=0.2)",
    "nn.LayerNorm(5)", "nn.LayerNorm([3, 4], eps=1e-6, elementwise_affine=False)",
    "nn.LayerNorm((2, 3), bias=False)", "nn.GroupNorm(2, 4)",
    "nn.GroupNorm(3, 6, eps=0.1, affine=False)", "nn.GroupNorm(1, 2, bias=False)",
    "nn.RMSNorm(4)", "nn.RMSNorm([2, 3], eps=1e-4, elementwise_affine=False)",
    "nn.LocalResponseNorm(3)", "nn.LocalResponseNorm(2, alpha=0.5, beta=1.0, k=2)",
]


@pytest.mark.parametrize("src", REPRS)
def test_repr_state_dict_and_init_match_torch(src):
    em, tm = eval(src, {"nn": ember.nn}), eval(src, {"nn": torch.nn})
    assert repr(em) == repr(tm)
    se, st = em.state_dict(), tm.state_dict()
    assert list(se) == list(st)
    for k in st:     # norm layers initialise deterministically: ones, zeros, counters
        assert str(se[k].dtype) == str(st[k].dtype) and tuple(se[k].shape) == tuple(st[k].shape)
        np.testing.assert_array_equal(to_numpy(se[k]), to_numpy(st[k]))
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]


def test_constructor_errors_match_torch():
    with pytest.raises(ValueError, match="must be divisible"):
        ember.nn.GroupNorm(4, 6)
    check_error(lambda L: L.nn.GroupNorm(4, 6))


def test_dtype_argument():
    m = ember.nn.BatchNorm1d(3, dtype=ember.float64)
    assert m.weight.dtype == ember.float64 and m.running_var.dtype == ember.float64
    assert m.num_batches_tracked.dtype == ember.int64
    assert ember.nn.LayerNorm(3, dtype=ember.float64).bias.dtype == ember.float64


# ---------------------------------------------------------------- batch norm

BN = [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)), ("BatchNorm2d", (4, 3, 3, 2)),
      ("BatchNorm3d", (2, 3, 2, 3, 2))]
BN_KW = [{}, {"momentum": None}, {"affine": False}, {"track_running_stats": False},
         {"bias": False, "eps": 1e-3, "momentum": 0.3}]


@pytest.mark.parametrize("kw", BN_KW, ids=str)
@pytest.mark.parametrize("cls,shape", BN, ids=lambda v: str(v))
def test_batchnorm_training_steps_then_eval(cls, shape, kw):
    em, tm = pair(lambda nn: getattr(nn, cls)(3, **kw))
    for i in range(3):
        step(em, tm, randn(*shape, seed=i) * (i + 1) + i, seed=i)
        same_buffers(em, tm)
        for m in (em, tm):
            m.zero_grad()
    em.eval(), tm.eval()
    step(em, tm, randn(*shape, seed=9))
    same_buffers(em, tm)


@pytest.mark.parametrize("cls", ["BatchNorm2d", "InstanceNorm2d", "GroupNorm", "LayerNorm"])
def test_float64_modules(cls):
    ctor = {"BatchNorm2d": lambda nn: nn.BatchNorm2d(3),
            "InstanceNorm2d": lambda nn: nn.InstanceNorm2d(3, affine=True,
                                                           track_running_stats=True),
            "GroupNorm": lambda nn: nn.GroupNorm(3, 3), "LayerNorm": lambda nn: nn.LayerNorm(2)}
    em, tm = pair(ctor[cls], double=True)
    for i in range(2):
        step(em, tm, randn(4, 3, 3, 2, dtype=np.float64, seed=i), atol=1e-10)
    same_buffers(em, tm, atol=1e-12)


def test_batchnorm_input_checks():
    for cls, x in (("BatchNorm1d", (2, 3, 4, 5)), ("BatchNorm2d", (2, 3)),
                   ("BatchNorm3d", (2, 3, 4, 5))):
        check_error(lambda L, a: getattr(L.nn, cls)(3)(a), np.zeros(x, np.float32))
    check_error(lambda L, a: L.nn.BatchNorm1d(3)(a), np.zeros((1, 3), np.float32))
    check_error(lambda L, a: L.nn.BatchNorm1d(4)(a), np.zeros((2, 3), np.float32))


def test_batchnorm_old_checkpoint_without_num_batches_tracked():
    em, tm = pair(lambda nn: nn.BatchNorm1d(3))
    sd = {k: v for k, v in em.state_dict().items() if k != "num_batches_tracked"}
    from collections import OrderedDict
    old = OrderedDict(sd)
    old._metadata = OrderedDict({"": {"version": 1}})
    res = em.load_state_dict(old)
    assert not res.missing_keys and int(em.num_batches_tracked) == 0


def test_batchnorm_batch_size_zero():
    em, tm = pair(lambda nn: nn.BatchNorm2d(3))
    step(em, tm, np.zeros((0, 3, 2, 2), np.float32))
    same_buffers(em, tm)


def test_batchnorm_non_contiguous_and_half_precision():
    x = randn(5, 4, 3)
    check(lambda L, a, w, b: L.nn.functional.batch_norm(a, None, None, w, b, training=True),
          NC(x.transpose(2, 1, 0)), randn(4, seed=1), randn(4, seed=2))
    check(lambda L, a, w: L.nn.functional.batch_norm(a, L.zeros(4), L.ones(4), w,
                                                     training=True).float(),
          x.astype(np.float32), randn(4, seed=1), atol=1e-2, rtol=1e-2, grad=False)
    em, tm = pair(lambda nn: nn.BatchNorm1d(4))
    xb = randn(5, 4, 3)
    ye = em(ember.from_numpy(xb).bfloat16())
    yt = tm(torch.from_numpy(xb).bfloat16())
    assert str(ye.dtype) == str(yt.dtype) == "torch.bfloat16"
    np.testing.assert_allclose(to_numpy(ye), to_numpy(yt), atol=3e-2)
    same_buffers(em, tm, atol=1e-2)


FUNCTIONAL_BN = {
    "train": lambda L, x, w, b: L.nn.functional.batch_norm(x, None, None, w, b, training=True),
    "eval": lambda L, x, w, b: L.nn.functional.batch_norm(
        x, L.linspace(-1, 1, 3, dtype=x.dtype), L.linspace(0.5, 2, 3, dtype=x.dtype), w, b),
    "train_stats": lambda L, x, w, b: L.nn.functional.batch_norm(
        x, L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype), w, b, True, 0.5, 1e-3),
    "no_affine": lambda L, x, w, b: L.nn.functional.batch_norm(x, None, None, training=True)
    + w.sum() + b.sum(),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONAL_BN))
def test_functional_batch_norm(name):
    check(FUNCTIONAL_BN[name], randn(4, 3, 5), randn(3, seed=1), randn(3, seed=2))
    gradcheck(FUNCTIONAL_BN[name], randn(3, 3, 2), randn(3, seed=1), randn(3, seed=2))


def test_functional_batch_norm_updates_buffers_like_torch():
    outs = {}
    for L in (ember, torch):
        rm, rv = L.zeros(3), L.ones(3)
        x = L.from_numpy(randn(4, 3, 5) * 3 + 1)
        L.nn.functional.batch_norm(x, rm, rv, training=True, momentum=0.25)
        outs[L.__name__] = (to_numpy(rm), to_numpy(rv))
    for a, b in zip(outs["ember"], outs["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-5)


BN_ERRORS = {
    "eval_without_stats": (lambda L, x: L.nn.functional.batch_norm(x, None, None), (4, 3)),
    "one_value": (lambda L, x: L.nn.functional.batch_norm(x, None, None, training=True), (1, 3)),
    "eps_zero": (lambda L, x: L.nn.functional.batch_norm(x, None, None, training=True, eps=0.0),
                 (4, 3)),
    "stats_size": (lambda L, x: L.nn.functional.batch_norm(x, L.zeros(4), L.ones(4)), (4, 3)),
    "weight_size": (lambda L, x: L.nn.functional.batch_norm(x, L.zeros(3), L.ones(3),
                                                            L.ones(2)), (4, 3)),
    "mixed_dtype": (lambda L, x: L.nn.functional.batch_norm(x, L.zeros(3, dtype=L.float64),
                                                            L.ones(3), training=True), (4, 3)),
    "int_input": (lambda L, x: L.nn.functional.batch_norm(x.long(), None, None, training=True),
                  (4, 3)),
    "momentum_none": (lambda L, x: L.nn.functional.batch_norm(x, L.zeros(3), L.ones(3),
                                                              momentum=None), (4, 3)),
}


@pytest.mark.parametrize("name", sorted(BN_ERRORS))
def test_batch_norm_errors(name):
    fn, shape = BN_ERRORS[name]
    check_error(fn, randn(*shape))


# --------------------------------------------------------------- instance norm

IN = [("InstanceNorm1d", (3, 3, 5)), ("InstanceNorm1d", (3, 5)), ("InstanceNorm2d", (2, 3, 3, 4)),
      ("InstanceNorm2d", (3, 2, 4)), ("InstanceNorm3d", (2, 3, 2, 2, 3))]


@pytest.mark.parametrize("kw", [{}, {"affine": True}, {"track_running_stats": True},
                                {"affine": True, "track_running_stats": True, "momentum": 0.4}],
                         ids=str)
@pytest.mark.parametrize("cls,shape", IN, ids=str)
def test_instancenorm_training_steps_then_eval(cls, shape, kw):
    em, tm = pair(lambda nn: getattr(nn, cls)(3, **kw))
    for i in range(2):
        step(em, tm, randn(*shape, seed=i) * 2 + i, seed=i)
        same_buffers(em, tm)
    em.eval(), tm.eval()
    step(em, tm, randn(*shape, seed=5))


def test_instancenorm_errors_and_warning():
    check_error(lambda L, a: L.nn.InstanceNorm2d(3)(a), randn(2, 3))
    check_error(lambda L, a: L.nn.InstanceNorm2d(4, affine=True)(a), randn(2, 3, 2, 2))
    check_error(lambda L, a: L.nn.InstanceNorm1d(3)(a), randn(2, 3, 1))
    check_error(lambda L, a: L.nn.functional.instance_norm(a, use_input_stats=False),
                randn(2, 3, 4))
    with pytest.warns(UserWarning, match="does not match num_features"):
        ember.nn.InstanceNorm1d(4)(ember.randn(2, 3, 5))


def test_functional_instance_norm():
    fn = lambda L, x, w, b: L.nn.functional.instance_norm(x, weight=w, bias=b)  # noqa: E731
    check(fn, randn(2, 3, 4), randn(3, seed=1), randn(3, seed=2))
    gradcheck(fn, randn(2, 3, 3), randn(3, seed=1), randn(3, seed=2))


# ------------------------------------------------------ layer, group, rms norm

LN = {
    "last": (lambda L, x, w, b: L.nn.functional.layer_norm(x, (5,), w[0], b[0]), (2, 3, 5)),
    "two_dims": (lambda L, x, w, b: L.nn.functional.layer_norm(x, [3, 5], w, b), (2, 3, 5)),
    "all_dims": (lambda L, x, w, b: L.nn.functional.layer_norm(x, x.shape, w, b), (3, 5)),
    "no_affine": (lambda L, x, w, b: L.nn.functional.layer_norm(x, [5], eps=1e-2) * w[0], (4, 5)),
    "weight_only": (lambda L, x, w, b: L.nn.functional.layer_norm(x, (5,), w[1]) + b[0], (4, 5)),
    "empty": (lambda L, x, w, b: L.nn.functional.layer_norm(x, (5,), w[0], b[0]), (0, 5)),
}


@pytest.mark.parametrize("name", sorted(LN))
def test_layer_norm(name):
    fn, shape = LN[name]
    check(fn, randn(*shape), randn(3, 5, seed=1), randn(3, 5, seed=2))
    if 0 not in shape:
        gradcheck(fn, randn(*shape), randn(3, 5, seed=1), randn(3, 5, seed=2))


def test_layer_norm_non_contiguous_and_bfloat16():
    check(lambda L, x, w: L.nn.functional.layer_norm(x, (4,), w), NC(randn(3, 4)), randn(4))
    check(lambda L, x: L.nn.functional.layer_norm(x.bfloat16(), (4,)).float(), randn(3, 4),
          atol=2e-2, rtol=2e-2, grad=False)
    check(lambda L, x: L.nn.functional.layer_norm(x.bfloat16(), (4,), L.ones(4)).float(),
          randn(3, 4), atol=2e-2, rtol=2e-2, grad=False)


GN = {
    "plain": (lambda L, x, w, b: L.nn.functional.group_norm(x, 2, w, b), (3, 4, 5)),
    "one_group": (lambda L, x, w, b: L.nn.functional.group_norm(x, 1, w, b), (2, 4, 2, 2)),
    "per_channel": (lambda L, x, w, b: L.nn.functional.group_norm(x, 4, w, b, 1e-3), (2, 4, 3)),
    "no_affine": (lambda L, x, w, b: L.nn.functional.group_norm(x, 2) * w.sum(), (2, 4, 3)),
    "2d_input": (lambda L, x, w, b: L.nn.functional.group_norm(x, 2, w, b), (3, 4)),
}


@pytest.mark.parametrize("name", sorted(GN))
def test_group_norm(name):
    fn, shape = GN[name]
    check(fn, randn(*shape), randn(4, seed=1), randn(4, seed=2))
    gradcheck(fn, randn(*shape), randn(4, seed=1), randn(4, seed=2))


RMS = {
    "last": (lambda L, x, w: L.nn.functional.rms_norm(x, (4,), w[0]), (2, 3, 4)),
    "two": (lambda L, x, w: L.nn.functional.rms_norm(x, [3, 4], w, 1e-3), (2, 3, 4)),
    "no_weight": (lambda L, x, w: L.nn.functional.rms_norm(x, [4]) * w[0], (5, 4)),
}


@pytest.mark.parametrize("name", sorted(RMS))
def test_rms_norm(name):
    fn, shape = RMS[name]
    check(fn, randn(*shape), randn(3, 4, seed=1))
    gradcheck(fn, randn(*shape), randn(3, 4, seed=1))


def test_rms_norm_half_precision_default_eps():
    check(lambda L, x: L.nn.functional.rms_norm(x.half(), (4,)).float(), randn(3, 4) * 1e-3,
          atol=1e-2, rtol=1e-2, grad=False)


@pytest.mark.parametrize("ctor,shape", [
    (lambda nn: nn.LayerNorm([3, 4]), (2, 3, 4)), (lambda nn: nn.LayerNorm(4, bias=False), (5, 4)),
    (lambda nn: nn.GroupNorm(2, 4), (3, 4, 2, 2)), (lambda nn: nn.RMSNorm(4), (3, 4)),
    (lambda nn: nn.RMSNorm([2, 4], eps=1e-2), (3, 2, 4)),
    (lambda nn: nn.LocalResponseNorm(3, alpha=0.5), (2, 5, 3)),
    (lambda nn: nn.LocalResponseNorm(2, alpha=0.5, beta=0.5, k=2.0), (2, 5, 3, 2)),
])
def test_modules(ctor, shape):
    em, tm = pair(ctor)
    with torch.no_grad():       # non-trivial affine parameters
        for p in tm.parameters():
            p.copy_(torch.randn(p.shape))
    em.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in tm.state_dict().items()})
    step(em, tm, randn(*shape))


NORM_ERRORS = {
    "ln_shape": lambda L, x: L.nn.functional.layer_norm(x, (4,)),
    "ln_int_shape": lambda L, x: L.nn.functional.layer_norm(x, 5),
    "rms_int_shape": lambda L, x: L.nn.functional.rms_norm(x, 5),
    "ln_weight": lambda L, x: L.nn.functional.layer_norm(x, (5,), L.ones(4)),
    "ln_int": lambda L, x: L.nn.functional.layer_norm(x.long(), (5,)),
    "ln_mixed": lambda L, x: L.nn.functional.layer_norm(x.double(), (5,), L.ones(5)),
    "gn_groups": lambda L, x: L.nn.functional.group_norm(x, 2),
    "gn_weight": lambda L, x: L.nn.functional.group_norm(x, 3, L.ones(4)),
    "gn_1d": lambda L, x: L.nn.functional.group_norm(x[0, 0], 1),
    "gn_one_value": lambda L, x: L.nn.functional.group_norm(x[:1, :, :1], 3),
    "rms_shape": lambda L, x: L.nn.functional.rms_norm(x, (4,)),
    "rms_weight": lambda L, x: L.nn.functional.rms_norm(x, (5,), L.ones(4)),
    "lrn_2d": lambda L, x: L.nn.functional.local_response_norm(x[0], 2),
    "in_one_value": lambda L, x: L.nn.functional.instance_norm(x[:, :, :1]),
}


@pytest.mark.parametrize("name", sorted(NORM_ERRORS))
def test_norm_errors(name):
    check_error(NORM_ERRORS[name], randn(4, 3, 5))


@pytest.mark.parametrize("size", [1, 2, 3, 4, 6])
def test_local_response_norm(size):
    fn = lambda L, x: L.nn.functional.local_response_norm(x, size, 0.3, 0.6, 1.5)  # noqa: E731
    check(fn, randn(2, 5, 3))
    check(fn, randn(2, 4, 2, 3))
    gradcheck(fn, randn(1, 4, 2))


# ------------------------------------------------------------- double backward

@pytest.mark.parametrize("fn", [
    lambda L, x, w: L.nn.functional.batch_norm(x, None, None, w, None, True),
    lambda L, x, w: L.nn.functional.batch_norm(x, L.zeros(3, dtype=x.dtype),
                                               L.ones(3, dtype=x.dtype) * 2, w, None, False),
    lambda L, x, w: L.nn.functional.layer_norm(x, (3,), w),
    lambda L, x, w: L.nn.functional.group_norm(x, 3, w),
], ids=["bn_train", "bn_eval", "layer_norm", "group_norm"])
def test_double_backward_matches_torch(fn):
    x, w = randn(4, 3, dtype=np.float64), randn(3, seed=1, dtype=np.float64)
    res = {}
    for L in (ember, torch):
        xs, ws = (L.from_numpy(a.copy()).requires_grad_(True) for a in (x, w))
        y = fn(L, xs, ws)
        gx, gw = L.autograd.grad((y * y * y).sum(), (xs, ws), create_graph=True)
        res[L.__name__] = [to_numpy(g) for g in
                           L.autograd.grad((gx * gx).sum() + gw.sum(), (xs, ws))]
    for a, b in zip(res["ember"], res["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)
