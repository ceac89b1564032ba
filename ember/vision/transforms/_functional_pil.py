"""PIL-image kernels of transforms.functional (pillow does the pixel work, as in torchvision)."""
import numpy as np

_PIL_FILTERS = {"nearest": 0, "nearest-exact": 0, "bilinear": 2, "bicubic": 3, "box": 4,
                "hamming": 5, "lanczos": 1}


def _pil():
    try:
        from PIL import Image, ImageEnhance, ImageOps
    except ImportError as e:      # pragma: no cover - exercised only without pillow
        raise ImportError("ember.vision needs pillow for PIL images: pip install "
                          "'ember[vision]'") from e
    return Image, ImageEnhance, ImageOps


def _is_pil_image(img):
    try:
        from PIL import Image
    except ImportError:
        return False
    return isinstance(img, Image.Image)


def get_dimensions(img):
    channels = len(img.getbands())
    width, height = img.size
    return [channels, height, width]


def resize(img, size, interpolation="bilinear"):
    return img.resize(tuple(size[::-1]), _PIL_FILTERS[interpolation])


def crop(img, top, left, height, width):
    return img.crop((left, top, left + width, top + height))


def hflip(img):
    return img.transpose(_pil()[0].FLIP_LEFT_RIGHT)


def vflip(img):
    return img.transpose(_pil()[0].FLIP_TOP_BOTTOM)


def pad(img, padding, fill=0, padding_mode="constant"):
    """padding = [left, top, right, bottom]."""
    Image, _, ImageOps = _pil()
    left, top, right, bottom = padding
    if padding_mode == "constant":
        return ImageOps.expand(img, border=(left, top, right, bottom), fill=fill)
    np_mode = {"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}[padding_mode]
    palette = img.getpalette() if img.mode == "P" else None
    arr = np.asarray(img)
    widths = ((top, bottom), (left, right)) + (((0, 0),) if arr.ndim == 3 else ())
    out = Image.fromarray(np.pad(arr, widths, mode=np_mode))
    if palette is not None:
        out.putpalette(palette)
    return out


def to_grayscale(img, num_output_channels=1):
    Image = _pil()[0]
    gray = img.convert("L")
    if num_output_channels == 3:
        arr = np.asarray(gray)
        gray = Image.fromarray(np.dstack([arr, arr, arr]), "RGB")
    return gray


def adjust_brightness(img, factor):
    return _pil()[1].Brightness(img).enhance(factor)


def adjust_contrast(img, factor):
    return _pil()[1].Contrast(img).enhance(factor)


def adjust_saturation(img, factor):
    return _pil()[1].Color(img).enhance(factor)


def adjust_hue(img, hue_factor):
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    Image = _pil()[0]
    input_mode = img.mode
    if input_mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    np_h = np.array(h, dtype=np.uint8)
    with np.errstate(over="ignore"):          # uint8 wrap-around is the hue rotation
        np_h += np.int32(hue_factor * 255).astype(np.uint8)
    h = Image.fromarray(np_h, "L")
    return Image.merge("HSV", (h, s, v)).convert(input_mode)
