"""interpolate / Upsample, grid_sample and affine_grid against PyTorch: outputs and
gradients over modes, sizes, scale factors and align_corners, float64 gradcheck,
dtypes, errors, reprs and autocast."""
import warnings

import numpy as np
import pytest

from oracle import NC, check, check_error, gradcheck, torch

import ember

R = np.random.default_rng(1)
X2 = R.standard_normal((2, 3, 5, 7)).astype(np.float32)
X1 = R.standard_normal((2, 3, 6))
X3 = R.standard_normal((2, 2, 3, 4, 5))


def F(L):
    return L.nn.functional


# ------------------------------------------------------------------ interpolate

SIZES = [dict(scale_factor=2), dict(scale_factor=1.7), dict(size=3), dict(scale_factor=0.6),
         dict(scale_factor=2.3, recompute_scale_factor=True), dict(size=11),
         dict(scale_factor=3, recompute_scale_factor=False)]
MODES = [("nearest", X2), ("nearest-exact", X2), ("bilinear", X2), ("bicubic", X2),
         ("linear", X1), ("trilinear", X3), ("area", X2), ("nearest", X1), ("nearest", X3),
         ("area", X3), ("nearest-exact", X1), ("area", X1)]


@pytest.mark.parametrize("kw", SIZES)
@pytest.mark.parametrize("mode,x", MODES, ids=[f"{m}-{x.ndim}d" for m, x in MODES])
def test_interpolate(mode, x, kw):
    for ac in ([None] if mode in ("nearest", "nearest-exact", "area") else [False, True]):
        check(lambda L, a: F(L).interpolate(a, mode=mode, align_corners=ac, **kw), x)


def test_interpolate_per_dim_sizes_and_scales():
    check(lambda L, a: F(L).interpolate(a, size=(4, 11), mode="bilinear"), X2)
    check(lambda L, a: F(L).interpolate(a, scale_factor=(0.5, 2.5), mode="bicubic",
                                        align_corners=True), X2)
    check(lambda L, a: F(L).interpolate(a, scale_factor=(1, 2, 1.5), mode="trilinear"), X3)
    check(lambda L, a: F(L).interpolate(a, size=(2, 9, 3), mode="nearest"), X3)
    check(lambda L, a: F(L).interpolate(a, size=1, mode="linear", align_corners=True), X1)


def test_interpolate_gather_path_for_large_or_non_finite_inputs():
    """Large (in * out > 2**16) or non-finite inputs take per-tap gathers, not the matrix."""
    check(lambda L, a: F(L).interpolate(a, size=12000, mode="linear"), X1[:1, :2])
    x = X2.copy()
    x[0, 0, 2, 3], x[1, 2, 0, 0] = np.inf, np.nan
    for mode in ("bilinear", "bicubic"):
        check(lambda L, a: F(L).interpolate(a, scale_factor=1.5, mode=mode), x, grad=False)


def test_interpolate_dtypes_and_layouts():
    check(lambda L, a: F(L).interpolate(a, scale_factor=2, mode="bilinear"), NC(X2))
    check(lambda L, a: F(L).interpolate(a, size=(3, 9), mode="bicubic"),
          X2.astype(np.float16), atol=1e-2, rtol=1e-2)
    check(lambda L, a: F(L).interpolate(a, scale_factor=2), R.integers(0, 255, (1, 2, 3, 3))
          .astype(np.uint8))
    check(lambda L, a: F(L).interpolate(a, scale_factor=2, mode="bilinear"),
          np.zeros((0, 2, 3, 3)))
    check(lambda L, a: F(L).interpolate(a.bfloat16(), scale_factor=1.5,
                                        mode="bilinear").float(), X2, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("mode,x", [("bilinear", X2[:1, :2]), ("bicubic", X2[:1, :1]),
                                    ("linear", X1[:1]), ("trilinear", X3[:1, :1]),
                                    ("nearest", X2[:1, :1]), ("area", X2[:1, :1])])
def test_interpolate_gradcheck(mode, x):
    ac = None if mode in ("nearest", "area") else False
    gradcheck(lambda L, a: F(L).interpolate(a, scale_factor=1.5, mode=mode,
                                            align_corners=ac), x)


def test_interpolate_double_backward():
    x = ember.tensor(X2[:1, :1].astype(np.float64), requires_grad=True)
    assert ember.autograd.gradgradcheck(
        lambda a: F(ember).interpolate(a, scale_factor=1.5, mode="bicubic",
                                       align_corners=False) ** 2, [x])


def test_antialias_downscale_matches_torch():
    """antialias=True is implemented (PyTorch's _upsample_*2d_aa filters); the full
    comparison is in tests/test_opinfo_coverage.py."""
    x = np.random.default_rng(0).standard_normal((1, 1, 4, 4))
    got = F(ember).interpolate(ember.tensor(x), scale_factor=0.5, mode="bilinear",
                               antialias=True)
    want = F(torch).interpolate(torch.tensor(x), scale_factor=0.5, mode="bilinear",
                                antialias=True)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


# ------------------------------------------------------------------ grid_sample

@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d(mode, padding_mode, align_corners):
    g = R.uniform(-1.3, 1.3, (2, 4, 6, 2))
    check(lambda L, a, gg: F(L).grid_sample(a, gg, mode=mode, padding_mode=padding_mode,
                                            align_corners=align_corners), X2.astype(np.float64),
          g)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_3d(mode, padding_mode):
    g = R.uniform(-1.3, 1.3, (2, 3, 4, 2, 3))
    for ac in (False, True):
        check(lambda L, a, gg: F(L).grid_sample(a, gg, mode=mode, padding_mode=padding_mode,
                                                align_corners=ac), X3, g)


@pytest.mark.parametrize("mode,padding_mode", [("bilinear", "zeros"), ("bicubic", "border"),
                                               ("bicubic", "reflection"),
                                               ("bilinear", "reflection")])
def test_grid_sample_gradcheck(mode, padding_mode):
    g = R.uniform(-1.2, 1.2, (1, 3, 2, 2))
    gradcheck(lambda L, a, gg: F(L).grid_sample(a, gg, mode=mode, padding_mode=padding_mode,
                                                align_corners=False), X2[:1, :2, :4, :5], g)


def test_grid_sample_float32_empty_and_double_backward():
    g = R.uniform(-1, 1, (2, 3, 3, 2)).astype(np.float32)
    check(lambda L, a, gg: F(L).grid_sample(a, gg, align_corners=True), X2, g)
    check(lambda L, a, gg: F(L).grid_sample(a, gg, align_corners=False), X2[:0], g[:0])
    x = ember.tensor(X2[:1, :1, :3, :3].astype(np.float64), requires_grad=True)
    gr = ember.tensor(g[:1, :2, :2].astype(np.float64), requires_grad=True)
    assert ember.autograd.gradgradcheck(
        lambda a, b: F(ember).grid_sample(a, b, align_corners=False), [x, gr])


def test_grid_sample_warns_without_align_corners():
    with pytest.warns(UserWarning, match="align_corners=False"):
        F(ember).grid_sample(ember.randn(1, 1, 3, 3), ember.zeros(1, 2, 2, 2))


# ------------------------------------------------------------------ affine_grid

@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(align_corners):
    check(lambda L, t: F(L).affine_grid(t, (2, 3, 4, 5), align_corners=align_corners),
          R.standard_normal((2, 2, 3)))
    check(lambda L, t: F(L).affine_grid(t, [2, 3, 4, 5, 6], align_corners=align_corners),
          R.standard_normal((2, 3, 4)))
    check(lambda L, t: F(L).affine_grid(t, (1, 1, 1, 3), align_corners=align_corners),
          R.standard_normal((1, 2, 3)).astype(np.float32))


def test_affine_grid_then_grid_sample():
    theta = np.array([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.2]]] * 2)
    check(lambda L, t, a: F(L).grid_sample(a, F(L).affine_grid(t, a.shape, align_corners=False),
                                           align_corners=False), theta, X2.astype(np.float64))


# ------------------------------------------------------------------ errors

ERRORS = {
    "size_and_scale": lambda L, a: F(L).interpolate(a, scale_factor=2, size=3),
    "neither": lambda L, a: F(L).interpolate(a),
    "size_len": lambda L, a: F(L).interpolate(a, size=(2, 3, 4)),
    "size_float": lambda L, a: F(L).interpolate(a, size=(2, 3.0)),
    "scale_len": lambda L, a: F(L).interpolate(a, scale_factor=(2, 3, 4)),
    "align_nearest": lambda L, a: F(L).interpolate(a, scale_factor=2, align_corners=True),
    "linear_4d": lambda L, a: F(L).interpolate(a, scale_factor=2, mode="linear"),
    "trilinear_4d": lambda L, a: F(L).interpolate(a, scale_factor=2, mode="trilinear"),
    "rank_2": lambda L, a: F(L).interpolate(a[0, 0], scale_factor=2),
    "antialias_nearest": lambda L, a: F(L).interpolate(a, scale_factor=2, antialias=True),
    "recompute_with_size": lambda L, a: F(L).interpolate(a, size=3,
                                                         recompute_scale_factor=True),
    "bilinear_int": lambda L, a: F(L).interpolate(a.long(), scale_factor=2, mode="bilinear"),
    "empty_output": lambda L, a: F(L).interpolate(a, scale_factor=0.1, mode="bilinear"),
    "no_channels": lambda L, a: F(L).interpolate(a[:, :0], scale_factor=2),
    "bad_mode": lambda L, a: F(L).interpolate(a, scale_factor=2, mode="foo"),
    "bicubic_3d": lambda L, a: F(L).interpolate(a[0], scale_factor=2, mode="bicubic"),
    "gs_mode": lambda L, a: F(L).grid_sample(a, L.rand(2, 3, 3, 2), mode="foo",
                                             align_corners=False),
    "gs_padding": lambda L, a: F(L).grid_sample(a, L.rand(2, 3, 3, 2), padding_mode="foo",
                                                align_corners=False),
    "gs_dtype": lambda L, a: F(L).grid_sample(a, L.rand(2, 3, 3, 2).double(),
                                              align_corners=False),
    "gs_batch": lambda L, a: F(L).grid_sample(a, L.rand(1, 3, 3, 2), align_corners=False),
    "gs_last_dim": lambda L, a: F(L).grid_sample(a, L.rand(2, 3, 3, 3), align_corners=False),
    "gs_rank": lambda L, a: F(L).grid_sample(a[0], L.rand(2, 3, 2), align_corners=False),
    "gs_bicubic_3d": lambda L, a: F(L).grid_sample(a.unsqueeze(2), L.rand(2, 3, 3, 3, 3),
                                                   mode="bicubic", align_corners=False),
    "gs_empty": lambda L, a: F(L).grid_sample(a[:, :, :0], L.rand(2, 3, 3, 2),
                                              align_corners=False),
    "gs_int": lambda L, a: F(L).grid_sample(a.long(), L.rand(2, 3, 3, 2).long(),
                                            align_corners=False),
    "ag_int": lambda L, a: F(L).affine_grid(a[0, 0, :2, :3].long().unsqueeze(0), (1, 1, 3, 3),
                                            align_corners=False),
    "ag_shape": lambda L, a: F(L).affine_grid(a[0, 0, :2, :3].unsqueeze(0), (1, 1, 3, 3, 3),
                                              align_corners=False),
    "ag_shape_2d": lambda L, a: F(L).affine_grid(a[0, 0, :3, :4].unsqueeze(0), (1, 1, 3, 3),
                                                 align_corners=False),
    "ag_size_len": lambda L, a: F(L).affine_grid(a[0, 0, :2, :3].unsqueeze(0), (1, 1, 3),
                                                 align_corners=False),
    "ag_size_zero": lambda L, a: F(L).affine_grid(a[0, 0, :2, :3].unsqueeze(0), (1, 1, 0, 3),
                                                  align_corners=False),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_error(ERRORS[name], X2)


# ------------------------------------------------------------------ modules

MODULES = [("Upsample", (None, 2), {}, X2),
           ("Upsample", ((3, 4), None, "bilinear"), {}, X2),
           ("Upsample", (None, (1.5, 2.0), "bicubic", True), {}, X2),
           ("Upsample", (None, 2.5, "trilinear"), dict(recompute_scale_factor=True), X3),
           ("Upsample", (7, None, "linear", True), {}, X1),
           ("Upsample", (None, 0.5, "area"), {}, X2),
           ("UpsamplingNearest2d", (None, 2), {}, X2),
           ("UpsamplingBilinear2d", ((4, 9),), {}, X2)]


@pytest.mark.parametrize("name,args,kw,x", MODULES,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)])
def test_modules_match_torch(name, args, kw, x):
    em, tm = getattr(ember.nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
    assert repr(em) == repr(tm)
    check(lambda L, a: (em if L is ember else tm)(a), x)


# ------------------------------------------------------------------ autocast

def test_autocast_grid_sampler_is_float32_and_upsample_keeps_dtype():
    x = R.standard_normal((1, 2, 4, 4)).astype(np.float32)
    g = R.uniform(-1, 1, (1, 3, 3, 2)).astype(np.float32)
    for L in (torch, ember):
        with L.autocast("cpu", dtype=L.bfloat16):
            a, gg = L.from_numpy(x).bfloat16(), L.from_numpy(g).bfloat16()
            assert str(F(L).grid_sample(a, gg, align_corners=False).dtype) == "torch.float32"
            assert str(F(L).interpolate(a, scale_factor=2, mode="bilinear").dtype) == \
                "torch.bfloat16"


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_nan_and_inf_coordinates_zeros_padding(mode):
    """Non-finite grid points must not index out of range; with zeros padding the
    result equals PyTorch's (NaN for interpolating modes, 0 for nearest)."""
    import numpy as np
    from oracle import torch
    import ember
    x = np.arange(4.0, dtype=np.float32).reshape(1, 1, 2, 2)
    g = np.array([[[[np.nan, 0.0], [0.5, np.inf]]]], dtype=np.float32)
    e = ember.nn.functional.grid_sample(ember.tensor(x), ember.tensor(g), mode=mode,
                                        align_corners=False)
    t = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), mode=mode,
                                        align_corners=False)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
