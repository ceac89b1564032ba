"""torchvision.io (images): read/decode/encode/write PNG and JPEG as uint8 CHW tensors.

Decoding and encoding use pillow (torchvision uses libpng/libjpeg); the tensors match."""
import io as _pyio
import os
from enum import Enum

import numpy as np

from ... import Tensor, from_numpy, uint8

__all__ = ["ImageReadMode", "read_file", "write_file", "decode_image", "read_image",
           "decode_png", "decode_jpeg", "encode_png", "encode_jpeg", "write_png", "write_jpeg"]


class ImageReadMode(Enum):
    """Channels to decode to (UNCHANGED keeps the file's own)."""
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = 4


_PIL_MODE = {ImageReadMode.GRAY: "L", ImageReadMode.GRAY_ALPHA: "LA", ImageReadMode.RGB: "RGB",
             ImageReadMode.RGB_ALPHA: "RGBA"}


def read_file(path):
    """The file's bytes as a 1-D uint8 tensor."""
    with open(os.fspath(path), "rb") as f:
        data = f.read()
    return from_numpy(np.frombuffer(data, dtype=np.uint8).copy())


def write_file(filename, data):
    """Write a 1-D uint8 tensor's bytes (atomically)."""
    tmp = os.fspath(filename) + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data.numpy().tobytes())
    os.replace(tmp, filename)


def _mode(mode):
    if isinstance(mode, str):
        mode = ImageReadMode[mode.upper()]
    return mode


def decode_image(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Decode PNG/JPEG/... bytes (a uint8 tensor) or a path into a uint8 [C, H, W] tensor."""
    from PIL import Image, ImageOps
    if not isinstance(input, Tensor):
        input = read_file(input)
    if input.dtype != uint8 or input.dim() != 1:
        raise RuntimeError(f"Expected a 1-D torch.uint8 tensor, got {input.dtype} with "
                           f"{input.dim()} dims")
    img = Image.open(_pyio.BytesIO(input.numpy().tobytes()))
    if apply_exif_orientation:
        img = ImageOps.exif_transpose(img)
    mode = _mode(mode)
    if mode != ImageReadMode.UNCHANGED:
        img = img.convert(_PIL_MODE[mode])
    elif img.mode not in ("L", "LA", "RGB", "RGBA", "I;16"):
        img = img.convert("RGBA" if "A" in img.getbands() else "RGB")
    arr = np.asarray(img)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.dtype != np.uint8:
        raise NotImplementedError(f"ember.vision.io: decoding {img.mode} images to "
                                  f"{arr.dtype} tensors is not supported")
    return from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def read_image(path, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """read_file + decode_image."""
    return decode_image(read_file(path), mode, apply_exif_orientation)


decode_png = decode_image
decode_jpeg = decode_image


def _encode(input, fmt, **kwargs):
    from PIL import Image
    if input.dtype != uint8 or input.dim() != 3 or input.shape[0] not in (1, 3, 4):
        raise RuntimeError(f"Input should be a uint8 [C, H, W] tensor with 1, 3 or 4 channels, "
                           f"got {input.dtype} of shape {tuple(input.shape)}")
    arr = input.numpy().transpose(1, 2, 0)
    img = Image.fromarray(np.ascontiguousarray(arr[:, :, 0] if arr.shape[2] == 1 else arr))
    buf = _pyio.BytesIO()
    img.save(buf, format=fmt, **kwargs)
    return from_numpy(np.frombuffer(buf.getvalue(), dtype=np.uint8).copy())


def encode_png(input, compression_level=6):
    if not 0 <= compression_level <= 9:
        raise ValueError("Compression level should be between 0 and 9")
    return _encode(input, "PNG", compress_level=compression_level)


def encode_jpeg(input, quality=75):
    if not 1 <= quality <= 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    return _encode(input, "JPEG", quality=quality)


def write_png(input, filename, compression_level=6):
    write_file(filename, encode_png(input, compression_level))


def write_jpeg(input, filename, quality=75):
    write_file(filename, encode_jpeg(input, quality))
