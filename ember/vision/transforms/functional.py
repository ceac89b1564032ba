"""torchvision.transforms.functional: each function takes a PIL image or an ember tensor image
([..., C, H, W]) and dispatches to pillow or to ember ops, with torchvision's rules."""
import numbers
import sys
from enum import Enum

import numpy as np

from ... import Tensor, from_numpy, get_default_dtype, uint8
from . import _functional_pil as F_pil
from . import _functional_tensor as F_t

__all__ = ["InterpolationMode", "get_dimensions", "get_image_size", "get_image_num_channels",
           "to_tensor", "pil_to_tensor", "to_pil_image", "convert_image_dtype", "normalize",
           "resize", "crop", "center_crop", "resized_crop", "hflip", "vflip", "pad",
           "rgb_to_grayscale", "to_grayscale", "adjust_brightness", "adjust_contrast",
           "adjust_saturation", "adjust_hue", "five_crop", "ten_crop", "gaussian_blur",
           "erase", "rotate", "affine"]


class InterpolationMode(Enum):
    """Interpolation names shared by PIL and tensor paths."""
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


_PIL_CODES = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR,
              3: InterpolationMode.BICUBIC, 4: InterpolationMode.BOX,
              5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}


def _interp(interpolation):
    if isinstance(interpolation, int):
        interpolation = _PIL_CODES[interpolation]
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a corresponding "
                        "Pillow integer constant")
    return interpolation.value


def _check(img):
    if isinstance(img, Tensor):
        return F_t
    if F_pil._is_pil_image(img):
        return F_pil
    raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


def get_dimensions(img):
    """[channels, height, width]."""
    return _check(img).get_dimensions(img)


def get_image_size(img):
    """[width, height]."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    return get_dimensions(img)[0]


def to_tensor(pic):
    """PIL image or HWC ndarray -> CHW float tensor in [0, 1] (uint8 input is divided by 255)."""
    is_np = isinstance(pic, np.ndarray)
    if not (F_pil._is_pil_image(pic) or is_np):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if is_np and pic.ndim not in (2, 3):
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if is_np:
        arr = pic[:, :, None] if pic.ndim == 2 else pic
        img = from_numpy(np.ascontiguousarray(arr.transpose((2, 0, 1))))
    else:
        nptype = {"I": np.int32, "I;16" if sys.byteorder == "little" else "I;16B": np.int16,
                  "F": np.float32}.get(pic.mode, np.uint8)
        arr = np.array(pic, nptype, copy=True)
        if pic.mode == "1":
            arr = 255 * arr
        arr = arr.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
        img = from_numpy(np.ascontiguousarray(arr.transpose((2, 0, 1))))
    if img.dtype == uint8:
        return img.to(dtype=get_default_dtype()).div(255)
    return img


def pil_to_tensor(pic):
    """PIL image -> CHW tensor of the image's own dtype (no scaling)."""
    if not F_pil._is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    arr = np.array(pic, copy=True)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return from_numpy(np.ascontiguousarray(arr.transpose((2, 0, 1))))


def to_pil_image(pic, mode=None):
    """CHW tensor or HWC ndarray -> PIL image; floats are scaled by 255."""
    Image = F_pil._pil()[0]
    if isinstance(pic, Tensor):
        if pic.dim() not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.dim()} dimensions.")
        if pic.dim() == 2:
            pic = pic.unsqueeze(0)
        if pic.shape[-3] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-3]} channels.")
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).byte()
        npimg = np.transpose(pic.detach().numpy(), (1, 2, 0))
    elif isinstance(pic, np.ndarray):
        if pic.ndim == 2:
            pic = np.expand_dims(pic, 2)
        if pic.ndim != 3:
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.shape[-1] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-1]} channels.")
        npimg = pic
        if np.issubdtype(npimg.dtype, np.floating) and mode != "F":
            npimg = (npimg * 255).astype(np.uint8)
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if npimg.shape[2] == 1:
        npimg = npimg[:, :, 0]
        expected = {np.dtype(np.uint8): "L", np.dtype(np.int16): "I;16",
                    np.dtype(np.int32): "I", np.dtype(np.float32): "F"}.get(npimg.dtype)
        if mode is not None and mode != expected:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {np.dtype}. "
                             f"Should be {expected}")
        mode = expected
    elif mode is None and npimg.dtype == np.uint8:
        mode = {2: "LA", 3: "RGB", 4: "RGBA"}[npimg.shape[2]]
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    return Image.fromarray(np.ascontiguousarray(npimg), mode=mode)


def convert_image_dtype(image, dtype=None):
    """Change an image tensor's dtype, rescaling values to the new range."""
    from ... import float32
    if not isinstance(image, Tensor):
        raise TypeError("Input img should be Tensor Image")
    return F_t.convert_image_dtype(image, dtype or float32)


def normalize(tensor, mean, std, inplace=False):
    """(tensor - mean) / std per channel; tensors only."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    return F_t.normalize(tensor, mean=mean, std=std, inplace=inplace)


def _compute_resized_output_size(image_size, size, max_size=None):
    h, w = image_size
    if size is None or len(size) == 1:
        short, long = (w, h) if w <= h else (h, w)
        if size is None:
            if max_size is None:
                raise ValueError("size can only be None if max_size is also set")
            new_long = max_size
            new_short = int(max_size * short / long)
        else:
            requested = size[0]
            new_short, new_long = requested, int(requested * long / short)
            if max_size is not None:
                if max_size <= requested:
                    raise ValueError(f"max_size = {max_size} must be strictly greater than the "
                                     f"requested size for the smaller edge size = {size}")
                if new_long > max_size:
                    new_short, new_long = int(max_size * new_short / new_long), max_size
        return [new_long, new_short] if w <= h else [new_short, new_long]
    return [size[0], size[1]]


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resize to size (h, w), or the shorter edge to size (int / 1-element list)."""
    mode = _interp(interpolation)
    if isinstance(size, numbers.Number):
        size = [int(size)]
    elif size is not None:
        size = list(size)
        if len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
    if size is not None and len(size) == 2 and max_size is not None:
        raise ValueError("max_size should only be passed if size specifies the length of the "
                         "smaller edge, i.e. size should be an int or a sequence of length 1")
    _, h, w = get_dimensions(img)
    output_size = _compute_resized_output_size((h, w), size, max_size)
    if [h, w] == output_size:
        return img
    if isinstance(img, Tensor):
        if mode not in ("nearest", "nearest-exact", "bilinear", "bicubic"):
            raise ValueError(f"Tensor images support nearest, nearest-exact, bilinear and "
                             f"bicubic interpolation, got {mode}")
        return F_t.resize(img, output_size, mode, antialias=antialias)
    return F_pil.resize(img, output_size, mode)


def crop(img, top, left, height, width):
    return _check(img).crop(img, top, left, height, width)


def _setup_size(size):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if len(size) == 1:
        return size[0], size[0]
    return tuple(size)


def center_crop(img, output_size):
    """Crop the centre; pads with zeros first when the crop is larger than the image."""
    crop_height, crop_width = _setup_size(output_size)
    _, image_height, image_width = get_dimensions(img)
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [
            (crop_width - image_width) // 2 if crop_width > image_width else 0,
            (crop_height - image_height) // 2 if crop_height > image_height else 0,
            (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
            (crop_height - image_height + 1) // 2 if crop_height > image_height else 0]
        img = pad(img, padding_ltrb, fill=0)
        _, image_height, image_width = get_dimensions(img)
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop(img, crop_top, crop_left, crop_height, crop_width)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)


def hflip(img):
    return _check(img).hflip(img)


def vflip(img):
    return _check(img).vflip(img)


def _parse_pad(padding):
    if isinstance(padding, numbers.Number):
        padding = [int(padding)] * 4
    padding = list(padding)
    if len(padding) == 1:
        return padding * 4
    if len(padding) == 2:
        return [padding[0], padding[1], padding[0], padding[1]]
    if len(padding) == 4:
        return padding
    raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a "
                     f"{len(padding)} element tuple")


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad [left, top, right, bottom]; modes constant, edge, reflect, symmetric (PIL)."""
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    return _check(img).pad(img, _parse_pad(padding), fill=fill, padding_mode=padding_mode)


def rgb_to_grayscale(img, num_output_channels=1):
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if isinstance(img, Tensor):
        return F_t.rgb_to_grayscale(img, num_output_channels)
    return to_grayscale(img, num_output_channels)


def to_grayscale(img, num_output_channels=1):
    if isinstance(img, Tensor):
        return F_t.rgb_to_grayscale(img, num_output_channels)
    if not F_pil._is_pil_image(img):
        raise TypeError("Input should be PIL Image")
    return F_pil.to_grayscale(img, num_output_channels)


def _nonneg(name, factor):
    if factor < 0:
        raise ValueError(f"{name} ({factor}) is not non-negative.")


def adjust_brightness(img, brightness_factor):
    _nonneg("brightness_factor", brightness_factor)
    return _check(img).adjust_brightness(img, brightness_factor)


def adjust_contrast(img, contrast_factor):
    _nonneg("contrast_factor", contrast_factor)
    return _check(img).adjust_contrast(img, contrast_factor)


def adjust_saturation(img, saturation_factor):
    _nonneg("saturation_factor", saturation_factor)
    return _check(img).adjust_saturation(img, saturation_factor)


def adjust_hue(img, hue_factor):
    return _check(img).adjust_hue(img, hue_factor)


def five_crop(img, size):
    """Four corner crops and the centre crop."""
    crop_height, crop_width = _setup_size(size)
    _, image_height, image_width = get_dimensions(img)
    if crop_width > image_width or crop_height > image_height:
        raise ValueError(f"Requested crop size {size} is bigger than input size "
                         f"{(image_height, image_width)}")
    tl = crop(img, 0, 0, crop_height, crop_width)
    tr = crop(img, 0, image_width - crop_width, crop_height, crop_width)
    bl = crop(img, image_height - crop_height, 0, crop_height, crop_width)
    br = crop(img, image_height - crop_height, image_width - crop_width, crop_height, crop_width)
    return tl, tr, bl, br, center_crop(img, [crop_height, crop_width])


def ten_crop(img, size, vertical_flip=False):
    """five_crop of the image and of its flipped copy."""
    first = five_crop(img, size)
    flipped = vflip(img) if vertical_flip else hflip(img)
    return first + five_crop(flipped, size)


def gaussian_blur(img, kernel_size, sigma=None):
    """Gaussian blur with odd kernel sizes (x, y); sigma defaults to 0.3 * ((k - 1) / 2 - 1) + 0.8
    written as k * 0.15 + 0.35, as torchvision does."""
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError(f"kernel_size should be int or a sequence of integers. Got "
                        f"{type(kernel_size)}")
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    if len(kernel_size) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got "
                         f"{len(kernel_size)}")
    for ksize in kernel_size:
        if ksize % 2 == 0 or ksize < 0:
            raise ValueError(f"kernel_size should have odd and positive integers. Got "
                             f"{kernel_size}")
    if sigma is None:
        sigma = [ksize * 0.15 + 0.35 for ksize in kernel_size]
    if isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    if isinstance(sigma, (list, tuple)) and len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    for s in sigma:
        if s <= 0.0:
            raise ValueError(f"sigma should have positive values. Got {sigma}")
    if isinstance(img, Tensor):
        return F_t.gaussian_blur(img, kernel_size, sigma)
    if not F_pil._is_pil_image(img):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
    out = F_t.gaussian_blur(pil_to_tensor(img), kernel_size, sigma)
    return to_pil_image(out, mode=img.mode)


def erase(img, i, j, h, w, v, inplace=False):
    """Set img[..., i:i+h, j:j+w] to v (tensor images only)."""
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img


def _get_inverse_affine_matrix(center, angle, translate, scale, shear, inverted=True):
    """Inverse of (translate . centre . rotate-scale-shear . -centre), torchvision's algebra."""
    import math
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    if inverted:
        matrix = [x / scale for x in [d, -b, 0.0, -c, a, 0.0]]
        matrix[2] += matrix[0] * (-cx - tx) + matrix[1] * (-cy - ty)
        matrix[5] += matrix[3] * (-cx - tx) + matrix[4] * (-cy - ty)
        matrix[2] += cx
        matrix[5] += cy
    else:
        matrix = [a * scale, b * scale, 0.0, c * scale, d * scale, 0.0]
        matrix[2] += matrix[0] * (-cx) + matrix[1] * (-cy)
        matrix[5] += matrix[3] * (-cx) + matrix[4] * (-cy)
        matrix[2] += cx + tx
        matrix[5] += cy + ty
    return matrix


def _pil_fill(fill, img):
    channels = len(img.getbands())
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) and channels > 1:
        fill = tuple([fill] * channels)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = fill * channels
        if len(fill) != channels:
            raise ValueError(f"The number of elements in 'fill' does not match the number of "
                             f"channels of the image ({len(fill)} != {channels})")
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, tuple) else int(fill)
    return {"fillcolor": fill}


def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None,
           fill=None):
    """Rotate counter-clockwise by angle degrees around center (default: the image centre)."""
    mode = _interp(interpolation)
    if isinstance(img, Tensor):
        center_f = [0.0, 0.0]
        if center is not None:
            _, height, width = get_dimensions(img)
            center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
        matrix = _get_inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
        return F_t.affine(img, matrix, mode, fill, expand=expand)
    if not F_pil._is_pil_image(img):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
    return img.rotate(angle, F_pil._PIL_FILTERS[mode], expand, center, **_pil_fill(fill, img))


def affine(img, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST,
           fill=None, center=None):
    """Rotation, translation (pixels), scale and shear (degrees) about the centre."""
    mode = _interp(interpolation)
    if not isinstance(translate, (list, tuple)) or len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    _, height, width = get_dimensions(img)
    if isinstance(img, Tensor):
        center_f = [0.0, 0.0]
        if center is not None:
            center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
        translate_f = [1.0 * t for t in translate]
        matrix = _get_inverse_affine_matrix(center_f, angle, translate_f, scale, shear)
        return F_t.affine(img, matrix, mode, fill)
    if center is None:
        center = [width * 0.5, height * 0.5]
    matrix = _get_inverse_affine_matrix(center, angle, translate, scale, shear)
    Image = F_pil._pil()[0]
    return img.transform(img.size, Image.AFFINE, matrix, F_pil._PIL_FILTERS[mode],
                         **_pil_fill(fill, img))
