"""Tensor-image kernels of transforms.functional ([..., C, H, W], float in [0, 1] or uint8).

Written in ember ops so they run on any device and stay differentiable where torchvision's are.
"""
from ... import (float32, floor, int32, is_floating_point, ones_like, stack, uint8, where,
                 zeros_like)
from ...nn import functional as F
from . import _resample

_INT_MAX = {"uint8": 255, "int8": 127, "int16": 32767, "int32": 2 ** 31 - 1,
            "int64": 2 ** 63 - 1, "bool": 1}


def _assert_image_tensor(img):
    if img.dim() < 2:
        raise TypeError("Tensor is not a torch image.")


def get_dimensions(img):
    _assert_image_tensor(img)
    channels = 1 if img.dim() == 2 else img.shape[-3]
    return [channels, img.shape[-2], img.shape[-1]]


def _max_value(dtype):
    return 1.0 if dtype.is_floating_point else _INT_MAX[str(dtype).split(".")[-1]]


def convert_image_dtype(image, dtype=float32):
    """Rescale values between integer ranges and [0, 1] floats (torchvision's rules)."""
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        eps = 1e-3
        return image.mul(_max_value(dtype) + 1.0 - eps).to(dtype)
    if dtype.is_floating_point:
        return image.to(dtype) / _max_value(image.dtype)
    in_max, out_max = _max_value(image.dtype), _max_value(dtype)
    if in_max > out_max:
        factor = (in_max + 1) // (out_max + 1)
        return (image // factor).to(dtype)
    factor = (out_max + 1) // (in_max + 1)
    return image.to(dtype) * factor


def hflip(img):
    return img.flip(-1)


def vflip(img):
    return img.flip(-2)


def crop(img, top, left, height, width):
    """Crop; regions outside the image are zero-padded, as torchvision does."""
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        pads = [max(-left, 0), max(right - w, 0), max(-top, 0), max(bottom - h, 0)]
        img = img[..., max(top, 0):bottom, max(left, 0):right]
        return F.pad(img, pads, value=0)
    return img[..., top:bottom, left:right]


def pad(img, padding, fill=0, padding_mode="constant"):
    """padding = [left, top, right, bottom] (already expanded by the caller)."""
    left, top, right, bottom = padding
    mode = {"constant": "constant", "edge": "replicate", "reflect": "reflect"}.get(padding_mode)
    if mode is None:
        raise NotImplementedError(f"ember.vision: pad(padding_mode='{padding_mode}') on tensors "
                                  "is not supported (constant, edge, reflect are)")
    squeeze = img.dim() < 4 and mode != "constant"
    x = img
    need_float = mode != "constant" and not x.is_floating_point()
    if squeeze:
        x = x.unsqueeze(0) if x.dim() == 3 else x[None, None]
    if need_float:
        x = x.to(float32)
    if mode == "constant":
        out = F.pad(x, [left, right, top, bottom], value=fill if fill is not None else 0)
    else:
        out = F.pad(x, [left, right, top, bottom], mode=mode)
    if need_float:
        out = out.to(img.dtype)
    if squeeze:
        out = out[0] if img.dim() == 3 else out[0, 0]
    return out


def resize(img, size, interpolation="bilinear", antialias=True):
    """Resize to size=(h, w); uint8 images are computed in float and rounded back."""
    orig_dtype = img.dtype
    x = img
    while x.dim() < 4:
        x = x.unsqueeze(0)
    if not x.is_floating_point():
        x = x.to(float32)
    if interpolation in ("bilinear", "bicubic") and antialias:
        out = _resample.resize_aa(x, size, interpolation)
    else:
        mode = "nearest-exact" if interpolation == "nearest-exact" else interpolation
        align = False if interpolation in ("bilinear", "bicubic") else None
        out = F.interpolate(x, size=list(size), mode=mode, align_corners=align)
    if interpolation == "bicubic" and orig_dtype == uint8:
        out = out.clamp(min=0, max=255)
    if not orig_dtype.is_floating_point:
        out = out.round().to(orig_dtype)
    return out.reshape(*img.shape[:-2], *size)


def rgb_to_grayscale(img, num_output_channels=1):
    if img.dim() < 3 or img.shape[-3] not in (1, 3):
        raise TypeError(f"Input image tensor permitted channel values are [1, 3], but found "
                        f"{img.shape[-3] if img.dim() >= 3 else 'none'}")
    if img.shape[-3] == 3:
        r, g, b = img.unbind(dim=-3)
        gray = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(-3)
    else:
        gray = img.clone()
    if num_output_channels == 3:
        return gray.expand(img.shape)
    return gray


def _blend(img1, img2, ratio):
    ratio = float(ratio)
    bound = _max_value(img1.dtype)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def adjust_brightness(img, brightness_factor):
    return _blend(img, zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor):
    c = get_dimensions(img)[0]
    dtype = img.dtype if is_floating_point(img) else float32
    gray = rgb_to_grayscale(img) if c == 3 else img
    mean = gray.to(dtype).mean(dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor):
    if get_dimensions(img)[0] == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def _rgb2hsv(img):
    r, g, b = img.unbind(dim=-3)
    maxc = img.max(dim=-3).values
    minc = img.min(dim=-3).values
    eqc = maxc == minc
    cr = maxc - minc
    ones = ones_like(maxc)
    s = cr / where(eqc, ones, maxc)
    cr_divisor = where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / cr_divisor, (maxc - g) / cr_divisor, (maxc - b) / cr_divisor
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = ((hr + hg + hb) / 6.0 + 1.0).fmod(1.0)
    return stack((h, s, maxc), dim=-3)


def _hsv2rgb(img):
    h, s, v = img.unbind(dim=-3)
    i = floor(h * 6.0)
    f = h * 6.0 - i
    i = i.to(int32) % 6
    p = (v * (1.0 - s)).clamp(0.0, 1.0)
    q = (v * (1.0 - s * f)).clamp(0.0, 1.0)
    t = (v * (1.0 - s * (1.0 - f))).clamp(0.0, 1.0)
    table = ((v, q, p, p, t, v), (t, v, v, q, p, p), (p, p, t, v, v, q))
    out = []
    for row in table:
        ch = zeros_like(v)
        for k, val in enumerate(row):
            ch = ch + (i == k).to(img.dtype) * val
        out.append(ch)
    return stack(out, dim=-3)


def adjust_hue(img, hue_factor):
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if get_dimensions(img)[0] == 1:
        return img
    orig_dtype = img.dtype
    hsv = _rgb2hsv(convert_image_dtype(img, float32))
    h, s, v = hsv.unbind(dim=-3)
    h = (h + hue_factor) % 1.0
    return convert_image_dtype(_hsv2rgb(stack((h, s, v), dim=-3)), orig_dtype)


def normalize(tensor, mean, std, inplace=False):
    from ... import as_tensor
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.dim() < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"tensor.size() = {tuple(tensor.shape)}")
    mean = as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std = as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading "
                         "to division by zero.")
    if mean.dim() == 1:
        mean = mean.view(-1, 1, 1)
    if std.dim() == 1:
        std = std.view(-1, 1, 1)
    if inplace:
        return tensor.sub_(mean).div_(std)
    return (tensor - mean) / std


def _gaussian_kernel1d(kernel_size, sigma, dtype):
    from ... import exp, linspace
    half = (kernel_size - 1) * 0.5
    x = linspace(-half, half, steps=kernel_size, dtype=dtype)
    pdf = exp(-0.5 * (x / sigma).pow(2))
    return pdf / pdf.sum()


def gaussian_blur(img, kernel_size, sigma):
    """Depthwise conv with a separable Gaussian, reflect-padded (torchvision's kernel)."""
    dtype = img.dtype if img.is_floating_point() else float32
    kx = _gaussian_kernel1d(kernel_size[0], sigma[0], dtype)
    ky = _gaussian_kernel1d(kernel_size[1], sigma[1], dtype)
    kernel = ky[:, None] @ kx[None, :]
    c = img.shape[-3]
    kernel = kernel.expand(c, 1, kernel.shape[0], kernel.shape[1])
    x = img.reshape(-1, *img.shape[-3:]).to(dtype)
    pads = [kernel_size[0] // 2, kernel_size[0] // 2, kernel_size[1] // 2, kernel_size[1] // 2]
    out = F.conv2d(F.pad(x, pads, mode="reflect"), kernel, groups=c)
    if not img.dtype.is_floating_point:
        out = out.round().to(img.dtype)
    return out.reshape(img.shape)


def _affine_grid(theta, w, h, ow, oh):
    """Sampling grid for output pixel centres mapped by theta (torchvision's _gen_affine_grid)."""
    from ... import cat as _cat, linspace, tensor as _tensor
    d = 0.5
    xs = linspace(-ow * 0.5 + d, ow * 0.5 + d - 1, steps=ow, dtype=theta.dtype)
    ys = linspace(-oh * 0.5 + d, oh * 0.5 + d - 1, steps=oh, dtype=theta.dtype)
    base = _cat([xs.reshape(1, ow, 1).expand(oh, ow, 1),
                 ys.reshape(oh, 1, 1).expand(oh, ow, 1),
                 ones_like(xs).reshape(1, ow, 1).expand(oh, ow, 1)], dim=-1)
    scale = _tensor([0.5 * w, 0.5 * h], dtype=theta.dtype)
    rescaled = theta.transpose(1, 2) / scale
    return (base.reshape(1, oh * ow, 3) @ rescaled).reshape(1, oh, ow, 2)


def _apply_grid(img, grid, mode, fill):
    """grid_sample with zero padding; pixels sampled from outside take `fill`."""
    from ... import cat as _cat, ones as _ones, tensor as _tensor
    x = img.reshape(-1, *img.shape[-3:])
    if not x.is_floating_point():
        x = x.to(grid.dtype)
    n = x.shape[0]
    if n > 1:
        grid = grid.expand(n, grid.shape[1], grid.shape[2], grid.shape[3])
    if fill is not None:
        x = _cat((x, _ones((n, 1, x.shape[2], x.shape[3]), dtype=x.dtype)), dim=1)
    out = F.grid_sample(x, grid, mode=mode, padding_mode="zeros", align_corners=False)
    if fill is not None:
        mask = out[:, -1:, :, :].expand(n, out.shape[1] - 1, out.shape[2], out.shape[3])
        out = out[:, :-1, :, :]
        fill_list = list(fill) if isinstance(fill, (tuple, list)) else [float(fill)]
        fill_img = _tensor(fill_list, dtype=out.dtype).view(1, len(fill_list), 1, 1)
        fill_img = fill_img.expand(out.shape)
        if mode == "nearest":
            out = where(mask < 0.5, fill_img, out)
        else:
            out = out * mask + (1.0 - mask) * fill_img
    if not img.dtype.is_floating_point:
        out = out.round().to(img.dtype)
    return out.reshape(*img.shape[:-2], out.shape[-2], out.shape[-1])


def _affine_output_size(matrix, w, h):
    """Size of the box holding the transformed image (rotate(expand=True))."""
    import numpy as np
    pts = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0],
                    [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]])
    theta = np.array(matrix, dtype=np.float32).reshape(2, 3)
    new_pts = pts.astype(np.float32) @ theta.T
    half = np.array([w * 0.5, h * 0.5], dtype=np.float32)
    min_vals, max_vals = new_pts.min(axis=0) + half, new_pts.max(axis=0) + half
    tol = 1e-4      # truncate to 1e-4 so that 1e-15 noise does not ceil to a whole pixel
    cmax = np.ceil(np.trunc(max_vals / tol) * tol)
    cmin = np.floor(np.trunc(min_vals / tol) * tol)
    size = cmax - cmin
    return int(size[0]), int(size[1])


def affine(img, matrix, interpolation="nearest", fill=None, expand=False):
    from ... import tensor as _tensor
    w, h = img.shape[-1], img.shape[-2]
    ow, oh = _affine_output_size(matrix, w, h) if expand else (w, h)
    dtype = img.dtype if img.is_floating_point() else float32
    theta = _tensor(matrix, dtype=dtype).reshape(1, 2, 3)
    return _apply_grid(img, _affine_grid(theta, w, h, ow, oh), interpolation, fill)
