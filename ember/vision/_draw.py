"""draw_bounding_boxes / draw_segmentation_masks (torchvision.utils), drawn with pillow."""
import warnings

import numpy as np

from .. import Tensor, bool as _bool, from_numpy, int64, tensor, uint8


def _generate_color_palette(num_objects):
    palette = np.array([2 ** 25 - 1, 2 ** 15 - 1, 2 ** 21 - 1])
    return [tuple(int(v) for v in (i * palette) % 255) for i in range(num_objects)]


def _parse_colors(colors, *, num_objects, floating=False):
    from PIL import ImageColor
    if colors is None:
        colors = _generate_color_palette(num_objects)
    elif isinstance(colors, list):
        if len(colors) < num_objects:
            raise ValueError(f"Number of colors must be equal or larger than the number of "
                             f"objects, but got {len(colors)} < {num_objects}.")
    elif not isinstance(colors, (tuple, str)):
        raise ValueError(f"colors must be a tuple or a string, or a list thereof, but got "
                         f"{colors}.")
    elif isinstance(colors, tuple) and len(colors) != 3:
        raise ValueError(f"If passed as tuple, colors should be an RGB triplet, but got "
                         f"{colors}.")
    else:
        colors = [colors] * num_objects
    colors = [ImageColor.getrgb(c) if isinstance(c, str) else c for c in colors]
    if floating:
        colors = [tuple(v / 255 for v in c) for c in colors]
    return colors


def _check_image(image, rgb_only):
    if not isinstance(image, Tensor):
        raise TypeError(f"Tensor expected, got {type(image)}")
    if not (image.dtype == uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.dim() != 3:
        raise ValueError("Pass individual images, not batches")
    if rgb_only and image.shape[0] != 3:
        raise ValueError("Pass an RGB image. Other Image formats are not supported")
    if image.shape[0] not in (1, 3):
        raise ValueError("Only grayscale and RGB images are supported")


def draw_bounding_boxes(image, boxes, labels=None, colors=None, fill=False, width=1, font=None,
                        font_size=None, label_colors=None, label_background_colors=None,
                        fill_labels=False):
    """Draw (xmin, ymin, xmax, ymax) boxes and optional labels on a [C, H, W] image."""
    from PIL import Image, ImageDraw, ImageFont
    from .transforms.functional import convert_image_dtype
    _check_image(image, rgb_only=False)
    if boxes.shape[-1] != 4:
        raise NotImplementedError("ember.vision.utils.draw_bounding_boxes: oriented (8-value) "
                                  "boxes are not supported")
    if (boxes[:, 0] > boxes[:, 2]).any() or (boxes[:, 1] > boxes[:, 3]).any():
        raise ValueError("Boxes need to be in (xmin, ymin, xmax, ymax) format. Use "
                         "torchvision.ops.box_convert to convert them")
    num_boxes = boxes.shape[0]
    if num_boxes == 0:
        warnings.warn("boxes doesn't contain any box. No box was drawn")
        return image
    if labels is None:
        labels = [None] * num_boxes
    elif len(labels) != num_boxes:
        raise ValueError(f"Number of boxes ({num_boxes}) and labels ({len(labels)}) mismatch. "
                         "Please specify labels for each box.")
    colors = _parse_colors(colors, num_objects=num_boxes)
    if label_colors or fill_labels:
        label_colors = _parse_colors(label_colors if label_colors else "black",
                                     num_objects=num_boxes)
    else:
        label_colors = list(colors)
    if fill_labels and label_background_colors:
        label_background_colors = _parse_colors(label_background_colors, num_objects=num_boxes)
    else:
        label_background_colors = list(colors)
    if font is None:
        if font_size is not None:
            warnings.warn("Argument 'font_size' will be ignored since 'font' is not set.")
        txt_font = ImageFont.load_default()
    else:
        txt_font = ImageFont.truetype(font=font, size=font_size or 10)
    if image.shape[0] == 1:
        image = image.repeat(3, 1, 1)
    original_dtype = image.dtype
    if original_dtype.is_floating_point:
        image = convert_image_dtype(image, uint8)
    img_to_draw = Image.fromarray(np.ascontiguousarray(image.numpy().transpose(1, 2, 0)))
    draw = ImageDraw.Draw(img_to_draw, "RGBA" if fill else None)
    for bbox, color, label, label_color, bg in zip(boxes.to(int64).tolist(), colors,
                                                   labels, label_colors,
                                                   label_background_colors):
        draw.rectangle(bbox, width=width, outline=color, fill=color + (100,) if fill else None)
        if label is not None:
            margin = width + 1
            if fill_labels:
                left, top, right, bottom = draw.textbbox((bbox[0] + margin, bbox[1] + margin),
                                                         label, font=txt_font)
                draw.rectangle((left - 1, top - 1, right + 1, bottom + 1), fill=bg)
            draw.text((bbox[0] + margin, bbox[1] + margin), label, fill=label_color,
                      font=txt_font)
    out = from_numpy(np.ascontiguousarray(np.asarray(img_to_draw).transpose(2, 0, 1)))
    if original_dtype.is_floating_point:
        out = convert_image_dtype(out, original_dtype)
    return out


def draw_segmentation_masks(image, masks, alpha=0.8, colors=None):
    """Blend one colour per boolean mask into an RGB image; overlaps become black."""
    _check_image(image, rgb_only=True)
    if masks.dim() == 2:
        masks = masks[None, :, :]
    if masks.dim() != 3:
        raise ValueError("masks must be of shape (H, W) or (batch_size, H, W)")
    if masks.dtype != _bool:
        raise ValueError(f"The masks must be of dtype bool. Got {masks.dtype}")
    if tuple(masks.shape[-2:]) != tuple(image.shape[-2:]):
        raise ValueError("The image and the masks must have the same height and width")
    num_masks = masks.shape[0]
    if num_masks == 0:
        warnings.warn("masks doesn't contain any mask. No mask was drawn")
        return image
    overlapping = masks.sum(dim=0) > 1
    original_dtype = image.dtype
    colors = [tensor(c, dtype=original_dtype) for c in
              _parse_colors(colors, num_objects=num_masks,
                            floating=original_dtype.is_floating_point)]
    img_to_draw = image.detach().clone()
    for mask, color in zip(masks, colors):
        img_to_draw[:, mask] = color[:, None]
    img_to_draw[:, overlapping] = 0
    out = image * (1 - alpha) + img_to_draw * alpha
    return out.to(original_dtype)
