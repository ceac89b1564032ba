"""Box utilities (torchvision.ops.boxes): nms, batched_nms, box_iou and friends.

Why: detection post-processing. IoU math is in ember ops (differentiable); nms picks indices
greedily on the host, like torchvision's CPU kernel (stable sort by descending score).
"""
import numpy as np

from ... import empty, int64, maximum, minimum, stack, tensor, where

__all__ = ["nms", "batched_nms", "box_area", "box_iou", "generalized_box_iou", "box_convert",
           "clip_boxes_to_image", "remove_small_boxes"]


def _check_boxes(boxes, name):
    if boxes.dim() != 2 or boxes.shape[-1] != 4:
        raise ValueError(f"{name}: boxes should be a [N, 4] tensor, got shape "
                         f"{tuple(boxes.shape)}")


def nms(boxes, scores, iou_threshold):
    """Indices of the boxes kept by greedy non-maximum suppression, highest score first."""
    _check_boxes(boxes, "nms")
    if scores.dim() != 1 or scores.shape[0] != boxes.shape[0]:
        raise RuntimeError(f"nms: boxes and scores should have the same number of elements, "
                           f"got {boxes.shape[0]} and {tuple(scores.shape)}")
    b = boxes.detach().numpy().astype(np.float64 if boxes.dtype.itemsize >= 8 else np.float32)
    s = scores.detach().numpy()
    order = np.argsort(-s, kind="stable")
    x1, y1, x2, y2 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    areas = (x2 - x1) * (y2 - y1)
    suppressed = np.zeros(len(b), dtype=bool)
    keep = []
    for _i, i in enumerate(order):
        if suppressed[i]:
            continue
        keep.append(i)
        rest = order[_i + 1:]
        rest = rest[~suppressed[rest]]
        w = np.maximum(0, np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]))
        h = np.maximum(0, np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]))
        inter = w * h
        with np.errstate(invalid="ignore", divide="ignore"):
            ovr = inter / (areas[i] + areas[rest] - inter)
        suppressed[rest[ovr > iou_threshold]] = True
    return tensor(np.asarray(keep, dtype=np.int64), device=boxes.device)


def batched_nms(boxes, scores, idxs, iou_threshold):
    """nms run independently per category idxs (boxes of different classes never suppress)."""
    if boxes.numel() == 0:
        return empty((0,), dtype=int64, device=boxes.device)
    # offset each class's boxes so that boxes of different classes never overlap
    max_coordinate = float(boxes.max())
    offsets = idxs.to(boxes.dtype) * (max_coordinate + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def box_area(boxes):
    """Area of (x1, y1, x2, y2) boxes."""
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def _box_inter_union(boxes1, boxes2):
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = maximum(boxes1[:, None, :2], boxes2[:, :2])
    rb = minimum(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter, area1[:, None] + area2 - inter


def box_iou(boxes1, boxes2):
    """[N, M] intersection-over-union of two sets of (x1, y1, x2, y2) boxes."""
    inter, union = _box_inter_union(boxes1, boxes2)
    return inter / union


def generalized_box_iou(boxes1, boxes2):
    """[N, M] generalized IoU: IoU minus the empty share of the enclosing box."""
    inter, union = _box_inter_union(boxes1, boxes2)
    iou = inter / union
    lti = minimum(boxes1[:, None, :2], boxes2[:, :2])
    rbi = maximum(boxes1[:, None, 2:], boxes2[:, 2:])
    whi = (rbi - lti).clamp(min=0)
    areai = whi[:, :, 0] * whi[:, :, 1]
    return iou - (areai - union) / areai


def box_convert(boxes, in_fmt, out_fmt):
    """Convert between 'xyxy', 'xywh' and 'cxcywh' box formats."""
    allowed = ("xyxy", "xywh", "cxcywh")
    if in_fmt not in allowed or out_fmt not in allowed:
        raise ValueError("Unsupported Bounding Box Conversions for given in_fmt and out_fmt")
    if in_fmt == out_fmt:
        return boxes.clone()
    a, b, c, d = boxes.unbind(-1)
    if in_fmt == "xywh":
        a, b, c, d = a, b, a + c, b + d
    elif in_fmt == "cxcywh":
        a, b, c, d = a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d
    if out_fmt == "xywh":
        a, b, c, d = a, b, c - a, d - b
    elif out_fmt == "cxcywh":
        a, b, c, d = (a + c) / 2, (b + d) / 2, c - a, d - b
    return stack((a, b, c, d), dim=-1)


def clip_boxes_to_image(boxes, size):
    """Clip (x1, y1, x2, y2) boxes to an image of size (height, width)."""
    height, width = size
    x = boxes[..., 0::2].clamp(min=0, max=width)
    y = boxes[..., 1::2].clamp(min=0, max=height)
    return stack((x, y), dim=boxes.dim()).reshape(boxes.shape)


def remove_small_boxes(boxes, min_size):
    """Indices of the boxes whose sides are both at least min_size."""
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = (ws >= min_size) & (hs >= min_size)
    return where(keep)[0]


