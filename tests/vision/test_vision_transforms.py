"""ember.vision.transforms against torchvision.transforms (its Python code on torch tensors
and pillow images): same pixels for PIL inputs, same values for tensor inputs."""
import numpy as np
import pytest
from tv_oracle import to_np, torch, torchvision

import ember
import ember.vision.transforms as T
import ember.vision.transforms.functional as F

PIL = pytest.importorskip("PIL.Image")


@pytest.fixture(scope="module")
def tv():
    return torchvision()


def _pil(h=23, w=31, mode="RGB", seed=0):
    rng = np.random.RandomState(seed)
    shape = (h, w, 3) if mode == "RGB" else (h, w)
    return PIL.fromarray(rng.randint(0, 256, shape).astype(np.uint8), mode)


def _float_img(c=3, h=23, w=31, seed=0):
    return np.random.RandomState(seed).rand(c, h, w).astype(np.float32)


def _same_pil(a, b):
    assert a.mode == b.mode and a.size == b.size
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_to_tensor_pil_to_tensor_and_back(tv):
    TF = tv.transforms.functional
    for mode in ("RGB", "L"):
        img = _pil(mode=mode)
        got, exp = F.to_tensor(img), TF.to_tensor(img)
        assert got.dtype == ember.float32 and tuple(got.shape) == tuple(exp.shape)
        np.testing.assert_array_equal(to_np(got), exp.numpy())
        np.testing.assert_array_equal(to_np(F.pil_to_tensor(img)), TF.pil_to_tensor(img).numpy())
        _same_pil(F.to_pil_image(got), TF.to_pil_image(exp))
    arr = np.random.RandomState(1).randint(0, 256, (5, 6, 3)).astype(np.uint8)
    np.testing.assert_array_equal(to_np(F.to_tensor(arr)), TF.to_tensor(arr).numpy())
    with pytest.raises(TypeError, match="PIL Image or ndarray"):
        F.to_tensor([1, 2])


@pytest.mark.parametrize("size,interp", [((11, 17), "BILINEAR"), ((40, 50), "BILINEAR"),
                                         (12, "BICUBIC"), ((9, 40), "NEAREST"),
                                         ((7, 8), "BICUBIC")])
def test_resize_tensor_and_pil(tv, size, interp):
    TF = tv.transforms.functional
    x = _float_img()
    mode = getattr(F.InterpolationMode, interp)
    tmode = getattr(TF.InterpolationMode, interp)
    got = F.resize(ember.tensor(x), size, mode)
    exp = TF.resize(torch.from_numpy(x), size, tmode)
    assert tuple(got.shape) == tuple(exp.shape)
    np.testing.assert_allclose(to_np(got), exp.numpy(), rtol=1e-5, atol=2e-5)
    u8 = (x * 255).astype(np.uint8)
    got8 = F.resize(ember.tensor(u8), size, mode)
    exp8 = TF.resize(torch.from_numpy(u8), size, tmode)
    assert got8.dtype == ember.uint8
    assert np.abs(to_np(got8).astype(int) - exp8.numpy().astype(int)).max() <= 1
    img = _pil()
    _same_pil(F.resize(img, size, mode), TF.resize(img, size, tmode))


def test_resize_max_size_and_errors(tv):
    TF = tv.transforms.functional
    img = _pil(20, 60)
    _same_pil(F.resize(img, 10, max_size=25), TF.resize(img, 10, max_size=25))
    with pytest.raises(ValueError, match="max_size"):
        F.resize(img, [10, 10], max_size=25)
    with pytest.raises(TypeError):
        F.resize([1], 3)


@pytest.mark.parametrize("size", [(10, 12), 7, (30, 40), (23, 33)])
def test_center_crop_and_crop(tv, size):
    TF = tv.transforms.functional
    x = _float_img()
    np.testing.assert_array_equal(to_np(F.center_crop(ember.tensor(x), size)),
                                  TF.center_crop(torch.from_numpy(x), size).numpy())
    img = _pil()
    _same_pil(F.center_crop(img, size), TF.center_crop(img, size))
    np.testing.assert_array_equal(to_np(F.crop(ember.tensor(x), -2, 25, 8, 10)),
                                  TF.crop(torch.from_numpy(x), -2, 25, 8, 10).numpy())


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_flips_and_pad(tv, mode):
    TF = tv.transforms.functional
    x = _float_img(h=6, w=7)
    t = torch.from_numpy(x)
    np.testing.assert_array_equal(to_np(F.hflip(ember.tensor(x))), TF.hflip(t).numpy())
    np.testing.assert_array_equal(to_np(F.vflip(ember.tensor(x))), TF.vflip(t).numpy())
    for padding in (2, [1, 3], [1, 2, 3, 0]):
        np.testing.assert_array_equal(
            to_np(F.pad(ember.tensor(x), padding, padding_mode=mode)),
            TF.pad(t, padding, padding_mode=mode).numpy())
        img = _pil(6, 7)
        _same_pil(F.pad(img, padding, fill=0, padding_mode=mode),
                  TF.pad(img, padding, fill=0, padding_mode=mode))
    _same_pil(F.hflip(_pil()), TF.hflip(_pil()))


@pytest.mark.parametrize("fn,factor", [("adjust_brightness", 1.4), ("adjust_contrast", 0.6),
                                       ("adjust_saturation", 1.7), ("adjust_hue", 0.23),
                                       ("adjust_hue", -0.4)])
def test_color_adjustments(tv, fn, factor):
    TF = tv.transforms.functional
    x = _float_img()
    got = getattr(F, fn)(ember.tensor(x), factor)
    exp = getattr(TF, fn)(torch.from_numpy(x), factor)
    np.testing.assert_allclose(to_np(got), exp.numpy(), rtol=1e-5, atol=1e-5)
    u8 = (x * 255).astype(np.uint8)
    got8 = getattr(F, fn)(ember.tensor(u8), factor)
    exp8 = getattr(TF, fn)(torch.from_numpy(u8), factor)
    assert got8.dtype == ember.uint8
    assert np.abs(to_np(got8).astype(int) - exp8.numpy().astype(int)).max() <= 1
    img = _pil()
    _same_pil(getattr(F, fn)(img, factor), getattr(TF, fn)(img, factor))


def test_grayscale_normalize(tv):
    TF = tv.transforms.functional
    x = _float_img()
    for n in (1, 3):
        np.testing.assert_allclose(to_np(F.rgb_to_grayscale(ember.tensor(x), n)),
                                   TF.rgb_to_grayscale(torch.from_numpy(x), n).numpy(),
                                   rtol=1e-6)
        _same_pil(F.to_grayscale(_pil(), n), TF.to_grayscale(_pil(), n))
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    np.testing.assert_allclose(to_np(F.normalize(ember.tensor(x), mean, std)),
                               TF.normalize(torch.from_numpy(x), mean, std).numpy(), rtol=1e-6)
    with pytest.raises(TypeError, match="float tensor"):
        F.normalize(ember.zeros(3, 2, 2, dtype=ember.uint8), mean, std)
    with pytest.raises(ValueError, match="std evaluated to zero"):
        F.normalize(ember.zeros(3, 2, 2), mean, [1, 0, 1])
    with pytest.raises(ValueError, match="hue_factor"):
        F.adjust_hue(ember.tensor(x), 0.7)


def test_imagenet_pipeline_matches_torchvision(tv):
    def pipe(t):
        return t.Compose([t.Resize(40), t.CenterCrop(32), t.ToTensor(),
                          t.Normalize([0.5, 0.4, 0.3], [0.2, 0.25, 0.3])])
    img = _pil(50, 64)
    np.testing.assert_allclose(to_np(pipe(T)(img)), pipe(tv.transforms)(img).numpy(),
                               rtol=1e-6, atol=1e-6)
    assert "CenterCrop(size=(32, 32))" in repr(pipe(T))


def test_random_transforms():
    x = ember.tensor(_float_img())
    flipped = T.RandomHorizontalFlip(p=1.0)(x)
    np.testing.assert_array_equal(to_np(flipped), to_np(x)[..., ::-1])
    assert T.RandomHorizontalFlip(p=0.0)(x) is x
    out = T.RandomResizedCrop(16)(x)
    assert tuple(out.shape) == (3, 16, 16)
    for _ in range(20):
        i, j, h, w = T.RandomResizedCrop.get_params(x, (0.08, 1.0), (3 / 4, 4 / 3))
        assert 0 <= i and 0 <= j and i + h <= 23 and j + w <= 31 and h > 0 and w > 0
    # full scale and square ratio on a square image: the whole image, only resized
    sq = ember.tensor(_float_img(h=20, w=20))
    whole = T.RandomResizedCrop(10, scale=(1.0, 1.0), ratio=(1.0, 1.0))(sq)
    np.testing.assert_allclose(to_np(whole), to_np(F.resize(sq, [10, 10])), rtol=1e-6)
    # degenerate ranges make ColorJitter deterministic: compare with the functional call
    cj = T.ColorJitter(brightness=(1.3, 1.3), saturation=(0.5, 0.5))
    exp = F.adjust_saturation(F.adjust_brightness(x, 1.3), 0.5)
    exp2 = F.adjust_brightness(F.adjust_saturation(x, 0.5), 1.3)
    got = to_np(cj(x))
    assert np.allclose(got, to_np(exp), atol=1e-6) or np.allclose(got, to_np(exp2), atol=1e-6)
    assert T.ColorJitter(brightness=0).brightness is None
    with pytest.raises(ValueError, match="non negative"):
        T.ColorJitter(brightness=-1)
    ember.manual_seed(3)
    a = T.RandomCrop(8, padding=2)(x)
    ember.manual_seed(3)
    b = T.RandomCrop(8, padding=2)(x)
    np.testing.assert_array_equal(to_np(a), to_np(b))
    assert tuple(a.shape) == (3, 8, 8)
    assert T.Lambda(lambda v: v + 1)(1) == 2


@pytest.mark.parametrize("ks,sigma", [(3, None), ([5, 3], [1.2, 0.7]), (7, 2.0)])
def test_gaussian_blur_matches_torchvision(tv, ks, sigma):
    TF = tv.transforms.functional
    x = _float_img()
    np.testing.assert_allclose(to_np(F.gaussian_blur(ember.tensor(x), ks, sigma)),
                               TF.gaussian_blur(torch.from_numpy(x), ks, sigma).numpy(),
                               rtol=1e-5, atol=1e-6)
    u8 = (x * 255).astype(np.uint8)
    d = (to_np(F.gaussian_blur(ember.tensor(u8), ks, sigma)).astype(int)
         - TF.gaussian_blur(torch.from_numpy(u8), ks, sigma).numpy().astype(int))
    assert np.abs(d).max() <= 1
    img = _pil()
    a = np.asarray(F.gaussian_blur(img, ks, sigma)).astype(int)
    assert np.abs(a - np.asarray(TF.gaussian_blur(img, ks, sigma)).astype(int)).max() <= 1
    with pytest.raises(ValueError, match="odd and positive"):
        F.gaussian_blur(ember.tensor(x), 4)
    assert tuple(T.GaussianBlur(3)(ember.tensor(x)).shape) == x.shape


def test_random_erasing_and_erase(tv):
    x = _float_img() + 1.0
    np.testing.assert_array_equal(
        to_np(F.erase(ember.tensor(x), 2, 3, 4, 5, ember.tensor(0.5))),
        tv.transforms.functional.erase(torch.from_numpy(x), 2, 3, 4, 5,
                                       torch.tensor(0.5)).numpy())
    out = to_np(T.RandomErasing(p=1.0, value=0)(ember.tensor(x)))
    rows, cols = np.nonzero((out == 0).all(0))
    assert rows.size > 0
    box = (out[:, rows.min():rows.max() + 1, cols.min():cols.max() + 1] == 0)
    assert box.all() and (out != 0).sum() == out.size - box.size    # one zeroed rectangle
    rnd = to_np(T.RandomErasing(p=1.0, value="random")(ember.tensor(x)))
    assert (rnd != x).any()
    assert T.RandomErasing(p=0.0)(ember.tensor(x)) is not None
    with pytest.raises(ValueError, match="'random'"):
        T.RandomErasing(value="noise")


@pytest.mark.parametrize("angle,expand,center,fill,interp", [
    (30.0, False, None, None, "NEAREST"), (-47.5, True, None, [0.2, 0.5, 0.9], "BILINEAR"),
    (90.0, False, (4, 6), 1.0, "NEAREST"), (12.0, True, (10, 3), None, "BILINEAR")])
def test_rotate_matches_torchvision(tv, angle, expand, center, fill, interp):
    TF = tv.transforms.functional
    x = _float_img()
    mode, tmode = getattr(F.InterpolationMode, interp), getattr(TF.InterpolationMode, interp)
    got = F.rotate(ember.tensor(x), angle, mode, expand, center, fill)
    exp = TF.rotate(torch.from_numpy(x), angle, tmode, expand, center, fill)
    assert tuple(got.shape) == tuple(exp.shape)
    np.testing.assert_allclose(to_np(got), exp.numpy(), rtol=1e-5, atol=1e-5)
    img = _pil()
    pfill = None if fill is None else (int(fill * 255) if isinstance(fill, float)
                                       else [int(f * 255) for f in fill])
    _same_pil(F.rotate(img, angle, mode, expand, center, pfill),
              TF.rotate(img, angle, tmode, expand, center, pfill))


@pytest.mark.parametrize("angle,translate,scale,shear", [
    (20.0, [2, -3], 1.2, [5.0, 10.0]), (-70.0, [0, 0], 0.7, 15.0), (0.0, [4, 1], 1.0, [0.0])])
def test_affine_matches_torchvision(tv, angle, translate, scale, shear):
    TF = tv.transforms.functional
    x = _float_img()
    for interp in ("NEAREST", "BILINEAR"):
        got = F.affine(ember.tensor(x), angle, translate, scale, shear,
                       getattr(F.InterpolationMode, interp))
        exp = TF.affine(torch.from_numpy(x), angle, translate, scale, shear,
                        getattr(TF.InterpolationMode, interp))
        np.testing.assert_allclose(to_np(got), exp.numpy(), rtol=1e-5, atol=1e-5)
    img = _pil()
    _same_pil(F.affine(img, angle, translate, scale, shear, fill=7),
              TF.affine(img, angle, translate, scale, shear, fill=7))
    u8 = (x * 255).astype(np.uint8)
    d = (to_np(F.affine(ember.tensor(u8), angle, translate, scale, shear)).astype(int)
         - TF.affine(torch.from_numpy(u8), angle, translate, scale, shear).numpy().astype(int))
    assert np.abs(d).max() <= 1


def test_random_rotation_and_affine():
    x = ember.tensor(_float_img())
    out = T.RandomRotation((90, 90))(x)
    np.testing.assert_allclose(to_np(out), to_np(F.rotate(x, 90.0)), rtol=1e-6)
    out = T.RandomAffine(degrees=0, translate=(0.2, 0.2), scale=(0.9, 1.1), shear=5)(x)
    assert tuple(out.shape) == tuple(x.shape)
    assert T.RandomRotation(10)(_pil()).size == (31, 23)
    with pytest.raises(ValueError, match="must be positive"):
        T.RandomRotation(-3)


def test_v2_pipeline_and_structured_inputs(tv):
    from torchvision.transforms import v2 as tv2

    from ember.vision.transforms import v2

    def pipe(m, lib):
        return m.Compose([m.ToImage(), m.CenterCrop(16), m.ToDtype(lib.float32, scale=True),
                          m.Resize(10), m.Normalize([0.5, 0.4, 0.3], [0.2, 0.2, 0.3])])
    img = _pil(20, 30)
    ours, ref = pipe(v2, ember), pipe(tv2, torch)
    np.testing.assert_allclose(to_np(ours(img)), ref(img).numpy(), rtol=1e-5, atol=1e-5)
    # (image, label) samples: the label passes through, several positional inputs too
    x, y = ours((img, 7))
    rx, ry = ref((img, 7))
    assert y == ry == 7
    np.testing.assert_allclose(to_np(x), rx.numpy(), rtol=1e-5, atol=1e-5)
    x2, y2 = ours(img, {"label": 3})
    assert y2 == {"label": 3} and tuple(x2.shape) == tuple(rx.shape)
    # only the first plain tensor is an image (v2's rule)
    a, b = ember.rand(3, 10, 10), ember.rand(3, 10, 10)
    ca, cb = v2.CenterCrop(4)((a, b))
    assert tuple(ca.shape) == (3, 4, 4) and cb is b
    u8 = v2.ToImage()(np.zeros((4, 5, 3), dtype=np.uint8))
    assert u8.dtype == ember.uint8 and tuple(u8.shape) == (3, 4, 5)
    with pytest.raises(NotImplementedError, match="jointly"):
        v2.RandomHorizontalFlip()((img, _pil(20, 30)))


def test_batched_tensor_images(tv):
    """[B, C, H, W] batches go through the tensor kernels like single images."""
    TF = tv.transforms.functional
    x = np.random.RandomState(11).rand(2, 3, 12, 14).astype(np.float32)
    cases = [("resize", ([7, 9],)), ("rotate", (33.0,)), ("adjust_hue", (0.2,)),
             ("gaussian_blur", ([3, 5],)), ("adjust_contrast", (1.5,)),
             ("affine", (10.0, [1, 2], 0.9, [3.0, 0.0]))]
    for name, args in cases:
        np.testing.assert_allclose(to_np(getattr(F, name)(ember.tensor(x), *args)),
                                   getattr(TF, name)(torch.from_numpy(x), *args).numpy(),
                                   rtol=1e-5, atol=1e-5, err_msg=name)
