"""Pooling and padding (nn.functional and the modules) against PyTorch: outputs, indices
and gradients over many configurations, float64 gradcheck/gradgradcheck, dtypes,
unbatched / empty-batch / non-contiguous inputs, errors, reprs and autocast."""
import numpy as np
import pytest

from oracle import NC, check, check_error, gradcheck, torch

import ember

R = np.random.default_rng(0)
X2 = R.standard_normal((2, 3, 7, 9)).astype(np.float32)       # (N, C, H, W), odd sizes
X1 = X2[:, :, 0]                                                # (N, C, L)
X3 = R.standard_normal((2, 2, 5, 6, 7))                         # (N, C, D, H, W) float64


def F(L):
    return L.nn.functional


# ------------------------------------------------------------------ max pooling

MAX2D = [dict(kernel_size=3), dict(kernel_size=2, ceil_mode=True),
         dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
         dict(kernel_size=(2, 3), stride=(2, 1), dilation=(2, 1), padding=(1, 0)),
         dict(kernel_size=(3, 2), stride=1, dilation=2, padding=1),
         dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)]


@pytest.mark.parametrize("kw", MAX2D)
@pytest.mark.parametrize("shape", [(2, 3, 7, 9), (3, 8, 5), (0, 2, 6, 6)])
def test_max_pool2d(kw, shape):
    x = R.standard_normal(shape)
    check(lambda L, a: F(L).max_pool2d(a, return_indices=True, **kw), x)


@pytest.mark.parametrize("kw", [dict(kernel_size=3), dict(kernel_size=2, stride=1,
                                                          dilation=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)])
def test_max_pool1d_3d(kw):
    check(lambda L, a: F(L).max_pool1d(a, return_indices=True, **kw), X1)
    check(lambda L, a: F(L).max_pool1d(a, **kw), X1[0])                  # unbatched
    check(lambda L, a: F(L).max_pool3d(a, **kw), X3)
    check(lambda L, a: F(L).max_pool3d(a, return_indices=True, **kw), X3[0])


def test_max_pool_dtypes_and_layouts():
    check(lambda L, a: F(L).max_pool2d(a, 3, 2, 1), NC(X2))
    check(lambda L, a: F(L).max_pool2d(a, 2), X2.astype(np.float16))
    check(lambda L, a: F(L).max_pool2d(a.bfloat16(), 2).float(), X2)
    ints = R.integers(-9, 9, (2, 3, 5, 5))
    check(lambda L, a: F(L).max_pool2d(a, 2, return_indices=True, ceil_mode=True), ints)
    x = X2.copy()
    x[0, 0, 1, 1] = np.nan
    x[1, 2] = -np.inf
    check(lambda L, a: F(L).max_pool2d(a, 3, 2, 1), x, grad=False)


def test_max_pool_overlapping_windows_accumulate():
    gradcheck(lambda L, a: F(L).max_pool2d(a, 3, 1, 1), X2[:1, :2])
    gradcheck(lambda L, a: F(L).max_pool3d(a, 2, 1, ceil_mode=True), X3[:1, :1, :3, :3, :4])
    gradcheck(lambda L, a: F(L).max_pool1d(a, 3, 2, 1, ceil_mode=True), X1[:1])


# ------------------------------------------------------------------ average pooling

AVG = [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
       dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
       dict(kernel_size=(2, 4), stride=(1, 3), padding=(1, 2), ceil_mode=True),
       dict(kernel_size=2, divisor_override=3), dict(kernel_size=3, padding=1,
                                                     count_include_pad=False)]


@pytest.mark.parametrize("kw", AVG)
def test_avg_pool2d_3d(kw):
    check(lambda L, a: F(L).avg_pool2d(a, **kw), X2)
    check(lambda L, a: F(L).avg_pool2d(a, **kw), X2[0])                    # unbatched
    k3 = {k: (v[0],) + v if isinstance(v, tuple) else v for k, v in kw.items()}
    check(lambda L, a: F(L).avg_pool3d(a, **k3), X3)


@pytest.mark.parametrize("kw", [dict(kernel_size=3), dict(kernel_size=4, stride=3, padding=2,
                                                          ceil_mode=True),
                                dict(kernel_size=3, stride=2, padding=1,
                                     count_include_pad=False)])
def test_avg_pool1d(kw):
    check(lambda L, a: F(L).avg_pool1d(a, **kw), X1)
    check(lambda L, a: F(L).avg_pool1d(a, **kw), X1[0])


def test_avg_pool_dtypes_layouts_and_double_backward():
    check(lambda L, a: F(L).avg_pool2d(a, 3, 2, 1), NC(X2))
    check(lambda L, a: F(L).avg_pool2d(a, 2), X2.astype(np.float16), atol=1e-2, rtol=1e-2)
    check(lambda L, a: F(L).avg_pool2d(a, 2, ceil_mode=True), R.integers(-9, 9, (1, 2, 5, 5)))
    check(lambda L, a: F(L).avg_pool2d(a, 2), R.standard_normal((0, 2, 4, 4)))
    gradcheck(lambda L, a: F(L).avg_pool2d(a, 3, 2, 1, ceil_mode=True,
                                           count_include_pad=False), X2[:1, :2])
    x = ember.tensor(X2[:1, :1].astype(np.float64), requires_grad=True)
    assert ember.autograd.gradgradcheck(
        lambda a: F(ember).avg_pool2d(a, 3, 2, 1, ceil_mode=True) ** 2, [x])
    assert ember.autograd.gradgradcheck(lambda a: F(ember).max_pool2d(a, 2, 1) ** 2, [x])


# ------------------------------------------------------------------ adaptive pooling

@pytest.mark.parametrize("size", [(3, 4), (7, 9), (2, None), (14, 5), (1, 1), 5, (0, 2)])
def test_adaptive_pool2d(size):
    grad = size != (0, 2)           # torch's backward refuses an empty output
    check(lambda L, a: F(L).adaptive_avg_pool2d(a, size), X2, grad=grad)
    check(lambda L, a: F(L).adaptive_max_pool2d(a, size, return_indices=True), X2, grad=grad)
    check(lambda L, a: F(L).adaptive_max_pool2d(a, size), X2[1], grad=grad)     # unbatched


@pytest.mark.parametrize("size", [1, 4, 9, 13])
def test_adaptive_pool1d_3d(size):
    check(lambda L, a: F(L).adaptive_avg_pool1d(a, size), X1)
    check(lambda L, a: F(L).adaptive_max_pool1d(a, size, return_indices=True), X1)
    check(lambda L, a: F(L).adaptive_avg_pool3d(a, (2, size, 3)), X3)
    check(lambda L, a: F(L).adaptive_max_pool3d(a, (size, 4, None), True), X3)


def test_adaptive_gradcheck_and_layouts():
    gradcheck(lambda L, a: F(L).adaptive_avg_pool2d(a, (3, 4)), X2[:1, :2])
    gradcheck(lambda L, a: F(L).adaptive_max_pool2d(a, (4, 4)), X2[:1, :2])
    check(lambda L, a: F(L).adaptive_avg_pool2d(a, 3), NC(X2))
    check(lambda L, a: F(L).adaptive_max_pool2d(a, 3), R.standard_normal((0, 2, 4, 4)))
    check(lambda L, a: F(L).adaptive_avg_pool2d(a, 3), X2.astype(np.float16),
          atol=1e-2, rtol=1e-2)


# ------------------------------------------------------------------ lp pooling, unpooling

@pytest.mark.parametrize("p", [1, 2, 3.5, float("inf")])
def test_lp_pool(p):
    x = np.abs(X2) + 0.1
    check(lambda L, a: F(L).lp_pool2d(a, p, 3, 2), x)
    check(lambda L, a: F(L).lp_pool1d(a, p, 3, ceil_mode=True), x[0])
    check(lambda L, a: F(L).lp_pool3d(a, p, 2), np.abs(X3) + 0.1)


def test_max_unpool():
    check(lambda L, a: F(L).max_unpool2d(*F(L).max_pool2d(a, 2, return_indices=True), 2,
                                         output_size=a.shape[-2:]), X2)
    check(lambda L, a: F(L).max_unpool2d(*F(L).max_pool2d(a, 3, 2, 1, return_indices=True),
                                         3, 2, 1, output_size=a.shape), X2)
    check(lambda L, a: F(L).max_unpool1d(*F(L).max_pool1d(a, 2, return_indices=True), 2,
                                         output_size=[9]), X1)
    check(lambda L, a: F(L).max_unpool3d(*F(L).max_pool3d(a, 2, return_indices=True), 2,
                                         output_size=a.shape[-3:]), X3)
    check(lambda L, a: F(L).max_unpool2d(*F(L).max_pool2d(a, 2, return_indices=True), 2),
          X2[0, :, :6, :8])                                               # unbatched
    idx = ember.tensor([[[[0, 3], [9, 15]]]])
    x = ember.randn(1, 1, 2, 2, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: F(ember).max_unpool2d(a, idx, 2), [x])


# ------------------------------------------------------------------ padding

PADS = [(1, 2), (2, 1, 1, 2), (-1, 2, 2, -1), (0, 3, -2, 1), (1, 1, 2, 0, 1, 2),
        (-1, 1, 1, -1, 0, 1)]


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", PADS)
def test_pad_modes(mode, pad):
    x = {2: X1, 4: X2, 6: X3}[len(pad)]
    check(lambda L, a: F(L).pad(a, pad, mode=mode), x)
    check(lambda L, a: F(L).pad(a, pad, mode=mode), x[0])                  # unbatched


def test_pad_constant_any_rank_value_and_dtypes():
    check(lambda L, a: F(L).pad(a, (1, 2, 0, 1, 2, 0, 1, 1), value=2.5), X3)
    check(lambda L, a: F(L).pad(a, (-2, -2)), X2)
    check(lambda L, a: F(L).pad(a, (1, 1)), np.float64(3.0).reshape(1))
    check(lambda L, a: F(L).pad(a, (1, 1), value=7), R.integers(0, 5, (2, 3)))
    check(lambda L, a: F(L).pad(a, (1, 1), value=True), np.array([True, False]))
    check(lambda L, a: F(L).pad(a, (2, 1), mode="reflect"), R.integers(0, 5, (2, 3, 4)))
    check(lambda L, a: F(L).pad(a, (2, 1, 1, 1), mode="replicate"), NC(X2))
    check(lambda L, a: F(L).pad(a, (2, 1), mode="reflect"), R.standard_normal((0, 3, 4)))
    check(lambda L, a: F(L).pad(a, (2, 1, 1, 1), mode="circular"), X2.astype(np.float16))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_gradcheck(mode):
    gradcheck(lambda L, a: F(L).pad(a, (2, -1, 1, 2), mode=mode), X2[:1, :2, :4, :5])
    x = ember.tensor(X2[:1, :1, :3, :4].astype(np.float64), requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda a: F(ember).pad(a, (1, 2, 2, 1), mode=mode) ** 2,
                                        [x])


# ------------------------------------------------------------------ errors

ERRORS = {
    "max_pad_gt_half": lambda L, a: F(L).max_pool2d(a, 3, padding=2),
    "max_kernel_0": lambda L, a: F(L).max_pool2d(a, 0),
    "max_stride_0": lambda L, a: F(L).max_pool2d(a, 2, stride=0),
    "max_dilation_0": lambda L, a: F(L).max_pool2d(a, 2, dilation=0),
    "max_pad_neg": lambda L, a: F(L).max_pool2d(a, 2, padding=-1),
    "max_too_small": lambda L, a: F(L).max_pool2d(a, 8),
    "max_rank": lambda L, a: F(L).max_pool2d(a[0, 0], 2),
    "max_no_channels": lambda L, a: F(L).max_pool2d(a[:, :0], 2),
    "max_bool": lambda L, a: F(L).max_pool2d(a.bool(), 2),
    "max_kernel_len": lambda L, a: F(L).max_pool2d(a, (2, 2, 2)),
    "max1d_rank": lambda L, a: F(L).max_pool1d(a, 2),
    "max3d_rank": lambda L, a: F(L).max_pool3d(a[0], 2),
    "avg_pad": lambda L, a: F(L).avg_pool2d(a, 3, padding=2),
    "avg_too_small": lambda L, a: F(L).avg_pool2d(a, 8),
    "avg_divisor_0": lambda L, a: F(L).avg_pool2d(a, 2, divisor_override=0),
    "avg_rank": lambda L, a: F(L).avg_pool2d(a[0, 0], 2),
    "avg_no_channels": lambda L, a: F(L).avg_pool2d(a[:, :0], 2),
    "avg1d_rank": lambda L, a: F(L).avg_pool1d(a, 2),
    "aavg_rank": lambda L, a: F(L).adaptive_avg_pool2d(a[0, 0], (2, 2)),
    "aavg_int": lambda L, a: F(L).adaptive_avg_pool2d(a.long(), (2, 2)),
    "amax_int": lambda L, a: F(L).adaptive_max_pool2d(a.long(), (2, 2)),
    "aavg_len": lambda L, a: F(L).adaptive_avg_pool2d(a, (2, 2, 2)),
    "amax_empty": lambda L, a: F(L).adaptive_max_pool2d(a[:, :0], (2, 2)),
    "aavg_empty": lambda L, a: F(L).adaptive_avg_pool2d(a[:, :, :0], (2, 2)),
    "aavg1d_rank": lambda L, a: F(L).adaptive_avg_pool1d(a, 3),
    "aavg_negative": lambda L, a: F(L).adaptive_avg_pool2d(a, (-1, 2)),
    "unpool_float_idx": lambda L, a: F(L).max_unpool2d(a, a, 2),
    "unpool_int32_idx": lambda L, a: F(L).max_unpool2d(a, L.zeros(2, 3, 7, 9, dtype=L.int32),
                                                       2),
    "unpool_bad_idx": lambda L, a: F(L).max_unpool2d(a, L.full((2, 3, 7, 9), 500,
                                                               dtype=L.int64), 2),
    "unpool_shape": lambda L, a: F(L).max_unpool2d(a, L.zeros(2, 3, 7, 8, dtype=L.int64), 2),
    "unpool_output_size": lambda L, a: F(L).max_unpool2d(
        a, L.zeros(2, 3, 7, 9, dtype=L.int64), 2, output_size=(3, 3)),
    "pad_odd": lambda L, a: F(L).pad(a, (1,)),
    "pad_too_long": lambda L, a: F(L).pad(a, (1, 1) * 5),
    "pad_negative_size": lambda L, a: F(L).pad(a, (-5, -5)),
    "pad_value_reflect": lambda L, a: F(L).pad(a, (1, 1), mode="reflect", value=1),
    "pad_reflect_too_big": lambda L, a: F(L).pad(a, (9, 1), mode="reflect"),
    "pad_circular_wrap": lambda L, a: F(L).pad(a, (10, 1), mode="circular"),
    "pad_mode": lambda L, a: F(L).pad(a, (1, 1), mode="foo"),
    "pad_reflect_1d": lambda L, a: F(L).pad(a[0, 0, 0], (1, 1), mode="reflect"),
    "pad_replicate_rank": lambda L, a: F(L).pad(a, (1, 1) * 3, mode="replicate")[0, 0],
    "pad_replicate_empty": lambda L, a: F(L).pad(a[:, :, :0], (1, 1), mode="replicate"),
    "pad_float": lambda L, a: F(L).pad(a, [1.5, 1]),
    "pad_reflect_bool": lambda L, a: F(L).pad(a.bool(), (1, 1), mode="reflect"),
    "lp_too_small": lambda L, a: F(L).lp_pool2d(a, 2, 8),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    x = X2 if name != "pad_replicate_rank" else X2[0, 0]
    check_error(ERRORS[name], x)


# ------------------------------------------------------------------ modules

MODULES = [("MaxPool1d", (3, 2, 1, 2, True, True), X1), ("MaxPool2d", (3,), X2),
           ("MaxPool2d", ((2, 3), 1, (1, 0), 1, False, True), X2),
           ("MaxPool3d", (2, 1, 1), X3), ("AvgPool1d", (3, 2, 1, True, False), X1),
           ("AvgPool2d", (3, 2, 1, True, True, 4), X2), ("AvgPool3d", ((1, 2, 3),), X3),
           ("LPPool1d", (1.5, 3, 2, True), np.abs(X1) + .1),
           ("LPPool2d", (2, 3), np.abs(X2) + .1), ("LPPool3d", (2, 2), np.abs(X3) + .1),
           ("AdaptiveAvgPool1d", (4,), X1), ("AdaptiveAvgPool2d", ((3, None),), X2),
           ("AdaptiveAvgPool3d", (2,), X3), ("AdaptiveMaxPool1d", (4, True), X1),
           ("AdaptiveMaxPool2d", ((2, 5),), X2), ("AdaptiveMaxPool3d", ((None, 2, 3), True), X3),
           ("ConstantPad1d", (2, 3.5), X1), ("ConstantPad2d", ((1, 0, 2, 1), -1), X2),
           ("ConstantPad3d", (1, 2), X3), ("ZeroPad1d", ((1, 2),), X1), ("ZeroPad2d", (2,), X2),
           ("ZeroPad3d", ((1, 0, 0, 1, 2, 0),), X3), ("ReflectionPad1d", (2,), X1),
           ("ReflectionPad2d", ((1, 2, 3, 0),), X2), ("ReflectionPad3d", (1,), X3),
           ("ReplicationPad1d", ((3, 1),), X1), ("ReplicationPad2d", (2,), X2),
           ("ReplicationPad3d", ((1, 0, 2, 1, 0, 1),), X3), ("CircularPad1d", (2,), X1),
           ("CircularPad2d", ((1, 2, 0, 3),), X2), ("CircularPad3d", (1,), X3)]


@pytest.mark.parametrize("name,args,x", MODULES, ids=[f"{m[0]}-{i}" for i, m in
                                                      enumerate(MODULES)])
def test_modules_match_torch(name, args, x):
    em, tm = getattr(ember.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(em) == repr(tm)
    check(lambda L, a: (em if L is ember else tm)(a), x)


def test_unpool_modules_and_circular_rank_error():
    for n, x in ((1, X1), (2, X2), (3, X3)):
        def fn(L, a, n=n):
            pool = getattr(L.nn, f"MaxPool{n}d")(2, return_indices=True)
            unpool = getattr(L.nn, f"MaxUnpool{n}d")(2)
            out, idx = pool(a)
            return unpool(out, idx, output_size=a.shape)
        assert repr(ember.nn.MaxUnpool2d(2, 1, 1)) == repr(torch.nn.MaxUnpool2d(2, 1, 1))
        check(fn, x)
    check_error(lambda L, a: L.nn.CircularPad2d(1)(a), X1[0])


# ------------------------------------------------------------------ autocast

AMP = {"max_pool3d": lambda F, a: F.max_pool3d(a, 2),
       "max_pool2d": lambda F, a: F.max_pool2d(a[0], 2),
       "avg_pool2d": lambda F, a: F.avg_pool2d(a[0], 2),
       "avg_pool3d": lambda F, a: F.avg_pool3d(a, 2),
       "adaptive_avg_pool3d": lambda F, a: F.adaptive_avg_pool3d(a, 2),
       "adaptive_max_pool2d": lambda F, a: F.adaptive_max_pool2d(a[0], 2),
       "adaptive_max_pool3d": lambda F, a: F.adaptive_max_pool3d(a, 2),
       "max_unpool1d": lambda F, a: F.max_unpool1d(*F.max_pool1d(a[0, 0], 2,
                                                                return_indices=True), 2),
       "reflect2d": lambda F, a: F.pad(a[0], (1, 1, 1, 1), mode="reflect"),
       "reflect3d": lambda F, a: F.pad(a, (1, 1, 1, 1, 1, 1), mode="reflect"),
       "replicate3d": lambda F, a: F.pad(a, (1, 1, 1, 1, 1, 1), mode="replicate"),
       "constant": lambda F, a: F.pad(a, (1, 1))}


@pytest.mark.parametrize("name", sorted(AMP))
def test_autocast_dtype_matches_torch(name):
    x = R.standard_normal((1, 2, 4, 4, 4)).astype(np.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = AMP[name](torch.nn.functional, torch.from_numpy(x).bfloat16()).dtype
    with ember.autocast("cpu", dtype=ember.bfloat16):
        got = AMP[name](ember.nn.functional, ember.from_numpy(x).bfloat16()).dtype
    assert str(got) == str(want)
