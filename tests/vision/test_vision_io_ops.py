"""ember.vision.io / utils / ops against torchvision's Python code, pillow, and (for nms,
whose torchvision kernel lives in the C extension that cannot load) a greedy torch reference."""
import numpy as np
import pytest
from tv_oracle import to_np, torch, torchvision

import ember
import ember.vision.io as vio
import ember.vision.ops as ops
from ember.vision.utils import make_grid, save_image

PIL = pytest.importorskip("PIL.Image")


def _boxes(n, seed, scale=20.0):
    rng = np.random.RandomState(seed)
    xy = rng.rand(n, 2) * scale
    wh = rng.rand(n, 2) * scale / 2 + 0.5
    return np.concatenate([xy, xy + wh], 1).astype(np.float32)


def _ref_nms(boxes, scores, thr):
    """Greedy NMS written with torch ops: keep the best, drop overlaps > thr, repeat."""
    order = torch.sort(scores, descending=True, stable=True).indices
    keep = []
    alive = torch.ones(len(boxes), dtype=torch.bool)
    iou = torchvision().ops.box_iou(boxes, boxes)
    for i in order.tolist():
        if not alive[i]:
            continue
        keep.append(i)
        alive &= ~(iou[i] > thr)
    return torch.tensor(keep, dtype=torch.int64)


@pytest.mark.parametrize("thr", [0.1, 0.5, 0.8])
def test_nms_and_batched_nms(thr, monkeypatch):
    tv = torchvision()
    b = _boxes(60, 0)
    s = np.random.RandomState(1).rand(60).astype(np.float32)
    got = ops.nms(ember.tensor(b), ember.tensor(s), thr)
    exp = _ref_nms(torch.from_numpy(b), torch.from_numpy(s), thr)
    assert got.dtype == ember.int64
    np.testing.assert_array_equal(to_np(got), exp.numpy())
    # torchvision's batched_nms logic, over the reference nms
    monkeypatch.setattr(tv.ops.boxes, "nms", _ref_nms)
    idxs = np.random.RandomState(2).randint(0, 3, 60)
    got = ops.batched_nms(ember.tensor(b), ember.tensor(s), ember.tensor(idxs), thr)
    exp = tv.ops.boxes._batched_nms_vanilla(torch.from_numpy(b), torch.from_numpy(s),
                                            torch.from_numpy(idxs), thr)
    np.testing.assert_array_equal(to_np(got), exp.numpy())
    assert tuple(ops.batched_nms(ember.zeros(0, 4), ember.zeros(0), ember.zeros(0), 0.5)
                 .shape) == (0,)


def test_box_functions_match_torchvision():
    tv = torchvision()
    a, b = _boxes(7, 3), _boxes(5, 4)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    ea, eb = ember.tensor(a), ember.tensor(b)
    for name in ("box_iou", "generalized_box_iou"):
        np.testing.assert_allclose(to_np(getattr(ops, name)(ea, eb)),
                                   getattr(tv.ops, name)(ta, tb).numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(to_np(ops.box_area(ea)), tv.ops.box_area(ta).numpy(), rtol=1e-6)
    for fin in ("xyxy", "xywh", "cxcywh"):
        for fout in ("xyxy", "xywh", "cxcywh"):
            np.testing.assert_allclose(to_np(ops.box_convert(ea, fin, fout)),
                                       tv.ops.box_convert(ta, fin, fout).numpy(), rtol=1e-6,
                                       atol=1e-6)
    np.testing.assert_array_equal(to_np(ops.clip_boxes_to_image(ea, (9, 12))),
                                  tv.ops.clip_boxes_to_image(ta, (9, 12)).numpy())
    np.testing.assert_array_equal(to_np(ops.remove_small_boxes(ea, 4.0)),
                                  tv.ops.remove_small_boxes(ta, 4.0).numpy())
    with pytest.raises(ValueError, match="Unsupported Bounding Box"):
        ops.box_convert(ea, "xyxy", "polar")
    ea.requires_grad_(True)
    ops.box_iou(ea, eb).sum().backward()
    assert ea.grad is not None and tuple(ea.grad.shape) == (7, 4)


@pytest.mark.parametrize("aligned,sampling,scale", [(False, -1, 1.0), (True, 2, 0.5),
                                                    (False, 3, 0.25), (True, -1, 1.0)])
def test_roi_align_matches_torchvision_reference(aligned, sampling, scale):
    import importlib
    torchvision()
    ref = importlib.import_module("torchvision.ops.roi_align")._roi_align
    ref = getattr(ref, "__wrapped__", ref)           # skip its lazy torch.compile wrapper
    rng = np.random.RandomState(5)
    x = rng.randn(2, 3, 16, 20).astype(np.float32)
    boxes = _boxes(6, 6, scale=12.0) / scale * 0.9
    rois = np.concatenate([rng.randint(0, 2, (6, 1)), boxes], 1).astype(np.float32)
    exp = ref(torch.from_numpy(x), torch.from_numpy(rois), scale, 4, 5, sampling, aligned)
    ex = ember.tensor(x, requires_grad=True)
    got = ops.roi_align(ex, ember.tensor(rois), (4, 5), scale, sampling, aligned)
    np.testing.assert_allclose(to_np(got), exp.numpy(), rtol=1e-5, atol=1e-5)
    # gradient: autograd of the torch reference
    tx = torch.from_numpy(x).requires_grad_(True)
    w = rng.randn(*exp.shape).astype(np.float32)
    (ref(tx, torch.from_numpy(rois), scale, 4, 5, sampling, aligned) * torch.from_numpy(w)
     ).sum().backward()
    (got * ember.tensor(w)).sum().backward()
    np.testing.assert_allclose(to_np(ex.grad), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    # the List[Tensor[L, 4]] form gives the same result
    per_image = [ember.tensor(boxes[rois[:, 0] == i]) for i in range(2)]
    order = np.argsort(rois[:, 0], kind="stable")
    np.testing.assert_allclose(to_np(ops.roi_align(ember.tensor(x), per_image, (4, 5), scale,
                                                   sampling, aligned)),
                               exp.numpy()[order], rtol=1e-5, atol=1e-5)


def test_roi_align_zeroes_samples_outside_the_map():
    """torchvision's kernel: samples beyond [-1, size] contribute 0 (still counted)."""
    x = ember.ones(1, 1, 4, 4)
    out = ops.roi_align(x, ember.tensor([[0, 2.0, 2.0, 10.0, 10.0]]), 1, sampling_ratio=2)
    # sample points at x,y in {4, 8}: only (4, 4) is within [-1, 4], so 1 of 4 samples counts
    assert out.item() == pytest.approx(0.25)


def test_make_grid_and_save_image(tmp_path):
    tv = torchvision()
    x = np.random.RandomState(7).rand(5, 3, 6, 7).astype(np.float32) * 3 - 1
    for kwargs in ({}, {"nrow": 2, "padding": 1, "pad_value": 0.5}, {"normalize": True},
                   {"normalize": True, "scale_each": True, "value_range": (-1.0, 1.0)}):
        np.testing.assert_allclose(to_np(make_grid(ember.tensor(x), **kwargs)),
                                   tv.utils.make_grid(torch.from_numpy(x), **kwargs).numpy(),
                                   rtol=1e-6, atol=1e-6)
    gray = np.random.RandomState(8).rand(1, 4, 4).astype(np.float32)
    np.testing.assert_array_equal(to_np(make_grid(ember.tensor(gray))),
                                  tv.utils.make_grid(torch.from_numpy(gray)).numpy())
    y = np.clip(x, 0, 1)
    save_image(ember.tensor(y), tmp_path / "ours.png", nrow=3)
    tv.utils.save_image(torch.from_numpy(y), tmp_path / "ref.png", nrow=3)
    np.testing.assert_array_equal(np.asarray(PIL.open(tmp_path / "ours.png")),
                                  np.asarray(PIL.open(tmp_path / "ref.png")))


def test_read_decode_encode_images(tmp_path):
    rng = np.random.RandomState(9)
    rgba = rng.randint(0, 256, (5, 6, 4)).astype(np.uint8)
    PIL.fromarray(rgba, "RGBA").save(tmp_path / "a.png")
    img = vio.read_image(str(tmp_path / "a.png"))
    assert img.dtype == ember.uint8 and tuple(img.shape) == (4, 5, 6)
    np.testing.assert_array_equal(to_np(img), rgba.transpose(2, 0, 1))
    rgb = vio.read_image(str(tmp_path / "a.png"), vio.ImageReadMode.RGB)
    np.testing.assert_array_equal(to_np(rgb), np.asarray(PIL.open(tmp_path / "a.png")
                                                         .convert("RGB")).transpose(2, 0, 1))
    gray = vio.decode_image(vio.read_file(str(tmp_path / "a.png")), vio.ImageReadMode.GRAY)
    assert tuple(gray.shape) == (1, 5, 6)
    vio.write_png(rgb, str(tmp_path / "b.png"))
    np.testing.assert_array_equal(to_np(vio.read_image(str(tmp_path / "b.png"))), to_np(rgb))
    jpg = vio.encode_jpeg(rgb, quality=95)
    assert to_np(jpg)[:2].tolist() == [0xFF, 0xD8]
    back = vio.decode_jpeg(jpg)
    assert tuple(back.shape) == (3, 5, 6)
    import io
    pil_back = np.asarray(PIL.open(io.BytesIO(to_np(jpg).tobytes())))
    np.testing.assert_array_equal(to_np(back), pil_back.transpose(2, 0, 1))
    smooth = ember.tensor(np.tile(np.arange(0, 240, 10, dtype=np.uint8), (3, 16, 1)))
    lossy = vio.decode_jpeg(vio.encode_jpeg(smooth, quality=95))
    assert np.abs(to_np(lossy).astype(int) - to_np(smooth).astype(int)).max() <= 8
    with pytest.raises(RuntimeError, match="uint8"):
        vio.decode_image(ember.zeros(3))


@pytest.mark.parametrize("alpha,gamma,reduction", [(0.25, 2, "none"), (-1, 1.5, "mean"),
                                                   (0.5, 0, "sum")])
def test_sigmoid_focal_loss_matches_torchvision(alpha, gamma, reduction):
    tv = torchvision()
    rng = np.random.RandomState(10)
    x = rng.randn(6, 4).astype(np.float32)
    t = (rng.rand(6, 4) > 0.5).astype(np.float32)
    ex = ember.tensor(x, requires_grad=True)
    tx = torch.from_numpy(x).requires_grad_(True)
    got = ops.sigmoid_focal_loss(ex, ember.tensor(t), alpha, gamma, reduction)
    exp = tv.ops.sigmoid_focal_loss(tx, torch.from_numpy(t), alpha, gamma, reduction)
    np.testing.assert_allclose(to_np(got), exp.detach().numpy(), rtol=1e-5, atol=1e-6)
    got.sum().backward()
    exp.sum().backward()
    np.testing.assert_allclose(to_np(ex.grad), tx.grad.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("kwargs", [{}, {"labels": ["a", "bb", "cat"], "width": 2},
                                    {"fill": True, "colors": "red"},
                                    {"labels": ["x", "y", "z"], "fill_labels": True,
                                     "colors": [(0, 255, 0), "blue", (9, 9, 9)]}])
def test_draw_bounding_boxes_matches_torchvision(kwargs):
    from ember.vision.utils import draw_bounding_boxes
    tv = torchvision()
    img = np.random.RandomState(12).randint(0, 256, (3, 40, 50)).astype(np.uint8)
    boxes = np.array([[2, 3, 20, 30], [10, 5, 45, 25], [0, 0, 49, 39]], dtype=np.float32)
    got = draw_bounding_boxes(ember.tensor(img), ember.tensor(boxes), **kwargs)
    exp = tv.utils.draw_bounding_boxes(torch.from_numpy(img), torch.from_numpy(boxes), **kwargs)
    np.testing.assert_array_equal(to_np(got), exp.numpy())
    fimg = img.astype(np.float32) / 255
    gotf = draw_bounding_boxes(ember.tensor(fimg), ember.tensor(boxes), **kwargs)
    expf = tv.utils.draw_bounding_boxes(torch.from_numpy(fimg), torch.from_numpy(boxes), **kwargs)
    np.testing.assert_allclose(to_np(gotf), expf.numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="xmin, ymin, xmax, ymax"):
        draw_bounding_boxes(ember.tensor(img), ember.tensor(boxes[:, [2, 1, 0, 3]]))


def test_draw_segmentation_masks_matches_torchvision():
    from ember.vision.utils import draw_segmentation_masks
    tv = torchvision()
    rng = np.random.RandomState(13)
    img = rng.randint(0, 256, (3, 12, 14)).astype(np.uint8)
    masks = rng.rand(3, 12, 14) > 0.6
    for colors in (None, ["red", (1, 2, 3), "#00ff00"]):
        got = draw_segmentation_masks(ember.tensor(img), ember.tensor(masks), 0.6, colors)
        exp = tv.utils.draw_segmentation_masks(torch.from_numpy(img), torch.from_numpy(masks),
                                               0.6, colors)
        np.testing.assert_array_equal(to_np(got), exp.numpy())
    fimg = img.astype(np.float32) / 255
    np.testing.assert_allclose(
        to_np(draw_segmentation_masks(ember.tensor(fimg), ember.tensor(masks[0]))),
        tv.utils.draw_segmentation_masks(torch.from_numpy(fimg),
                                         torch.from_numpy(masks[0])).numpy(), rtol=1e-6)
