"""torchvision.transforms (v1) classes: callables over PIL images and tensor images.

Random choices draw from ember's generator (ember.manual_seed makes them reproducible)."""
import math
import numbers
from collections.abc import Sequence

from ... import empty, exp, log, nn, rand, randint, randperm, tensor
from . import functional as F
from .functional import InterpolationMode, _setup_size

__all__ = ["Compose", "ToTensor", "PILToTensor", "ToPILImage", "ConvertImageDtype", "Normalize",
           "Resize", "CenterCrop", "Pad", "Lambda", "RandomApply", "RandomChoice", "RandomOrder",
           "RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip", "RandomResizedCrop",
           "FiveCrop", "TenCrop", "ColorJitter", "Grayscale", "RandomGrayscale", "GaussianBlur",
           "RandomErasing", "RandomRotation", "RandomAffine"]


class Compose:
    """Apply transforms one after the other."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({body}\n)"


class _Repr:
    _fields = ()

    def __repr__(self):
        args = ", ".join(f"{k}={getattr(self, k)}" for k in self._fields)
        return f"{self.__class__.__name__}({args})"


class ToTensor(_Repr):
    def __call__(self, pic):
        return F.to_tensor(pic)


class PILToTensor(_Repr):
    def __call__(self, pic):
        return F.pil_to_tensor(pic)


class ToPILImage(_Repr):
    _fields = ("mode",)

    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)


class ConvertImageDtype(nn.Module):
    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)


class Normalize(nn.Module):
    """Per-channel (x - mean) / std on float tensor images."""

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean, self.std, self.inplace = mean, std, inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Resize(nn.Module):
    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=True):
        super().__init__()
        if not isinstance(size, (int, Sequence)) and size is not None:
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size, self.max_size, self.antialias = size, max_size, antialias
        self.interpolation = (F._PIL_CODES[interpolation] if isinstance(interpolation, int)
                              else interpolation)

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, interpolation="
                f"{self.interpolation.value}, max_size={self.max_size}, "
                f"antialias={self.antialias})")


class CenterCrop(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size)

    def forward(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class Pad(nn.Module):
    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)


class Lambda(_Repr):
    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)


class RandomApply(nn.Module):
    """Apply the list of transforms with probability p."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms, self.p = transforms, p

    def forward(self, img):
        if self.p < rand(1).item():
            return img
        for t in self.transforms:
            img = t(img)
        return img


class RandomChoice:
    def __init__(self, transforms, p=None):
        if p is not None and len(p) != len(transforms):
            raise ValueError(f"Length of p doesn't match the number of transforms: {len(p)} != "
                             f"{len(transforms)}")
        self.transforms = transforms
        total = sum(p) if p is not None else None
        self.p = [w / total for w in p] if p is not None else [1.0] * len(transforms)

    def __call__(self, *args):
        idx = int(tensor(self.p).multinomial(1).item())
        return self.transforms[idx](*args)


class RandomOrder:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for i in randperm(len(self.transforms)).tolist():
            img = self.transforms[i](img)
        return img


class RandomCrop(nn.Module):
    @staticmethod
    def get_params(img, output_size):
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size "
                             f"{(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = randint(0, h - th + 1, size=(1,)).item()
        j = randint(0, w - tw + 1, size=(1,)).item()
        return i, j, th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0,
                 padding_mode="constant"):
        super().__init__()
        self.size = _setup_size(size)
        self.padding, self.pad_if_needed = padding, pad_if_needed
        self.fill, self.padding_mode = fill, padding_mode

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)


class RandomHorizontalFlip(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        return F.hflip(img) if rand(1).item() < self.p else img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomVerticalFlip(RandomHorizontalFlip):
    def forward(self, img):
        return F.vflip(img) if rand(1).item() < self.p else img


class RandomResizedCrop(nn.Module):
    """Crop a random area/aspect-ratio region and resize it (Inception-style augmentation)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.size = _setup_size(size)
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        self.scale, self.ratio, self.antialias = scale, ratio, antialias
        self.interpolation = (F._PIL_CODES[interpolation] if isinstance(interpolation, int)
                              else interpolation)

    @staticmethod
    def get_params(img, scale, ratio):
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = log(tensor(ratio))
        for _ in range(10):
            target_area = area * empty(1).uniform_(scale[0], scale[1]).item()
            aspect_ratio = exp(empty(1).uniform_(log_ratio[0].item(),
                                                 log_ratio[1].item())).item()
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = randint(0, height - h + 1, size=(1,)).item()
                j = randint(0, width - w + 1, size=(1,)).item()
                return i, j, h, w
        in_ratio = float(width) / float(height)          # fallback: central crop
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            h, w = height, int(round(height * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation,
                              antialias=self.antialias)


class FiveCrop(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size)

    def forward(self, img):
        return F.five_crop(img, self.size)


class TenCrop(nn.Module):
    def __init__(self, size, vertical_flip=False):
        super().__init__()
        self.size, self.vertical_flip = _setup_size(size), vertical_flip

    def forward(self, img):
        return F.ten_crop(img, self.size, self.vertical_flip)


class ColorJitter(nn.Module):
    """Random brightness, contrast, saturation and hue changes, applied in random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5),
                                     clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        if value[0] == value[1] == center:
            return None
        return tuple(value)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        fn_idx = randperm(4)
        draw = lambda r: None if r is None else float(empty(1).uniform_(r[0], r[1]).item())
        return fn_idx, draw(brightness), draw(contrast), draw(saturation), draw(hue)

    def forward(self, img):
        fn_idx, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation,
                                             self.hue)
        for fn_id in fn_idx.tolist():
            if fn_id == 0 and b is not None:
                img = F.adjust_brightness(img, b)
            elif fn_id == 1 and c is not None:
                img = F.adjust_contrast(img, c)
            elif fn_id == 2 and s is not None:
                img = F.adjust_saturation(img, s)
            elif fn_id == 3 and h is not None:
                img = F.adjust_hue(img, h)
        return img

    def __repr__(self):
        return (f"{self.__class__.__name__}(brightness={self.brightness}, contrast="
                f"{self.contrast}, saturation={self.saturation}, hue={self.hue})")


class Grayscale(nn.Module):
    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)


class RandomGrayscale(nn.Module):
    def __init__(self, p=0.1):
        super().__init__()
        self.p = p

    def forward(self, img):
        num_output_channels, _, _ = F.get_dimensions(img)
        if rand(1).item() < self.p:
            return F.rgb_to_grayscale(img, num_output_channels=num_output_channels)
        return img




class GaussianBlur(nn.Module):
    """Blur with a Gaussian whose sigma is drawn uniformly from the (min, max) range."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        self.kernel_size = _setup_size(kernel_size)
        for ks in self.kernel_size:
            if ks <= 0 or ks % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min, sigma_max):
        return empty(1).uniform_(sigma_min, sigma_max).item()

    def forward(self, img):
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])


class RandomErasing(nn.Module):
    """With probability p, overwrite a random rectangle of a tensor image (Cutout)."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        super().__init__()
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            from warnings import warn
            warn("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p, self.scale, self.ratio, self.value, self.inplace = p, scale, ratio, value, inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        img_c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w
        log_ratio = log(tensor(ratio))
        for _ in range(10):
            erase_area = area * empty(1).uniform_(scale[0], scale[1]).item()
            aspect_ratio = exp(empty(1).uniform_(log_ratio[0].item(),
                                                 log_ratio[1].item())).item()
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = empty([img_c, h, w]).normal_()
            else:
                v = tensor(value)[:, None, None]
            i = randint(0, img_h - h + 1, size=(1,)).item()
            j = randint(0, img_w - w + 1, size=(1,)).item()
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def forward(self, img):
        if rand(1).item() >= self.p:
            return img
        if isinstance(self.value, (int, float)):
            value = [float(self.value)]
        elif isinstance(self.value, str):
            value = None
        else:
            value = [float(v) for v in self.value]
        if value is not None and len(value) not in (1, img.shape[-3]):
            raise ValueError("If value is a sequence, it should have either a single value or "
                             f"{img.shape[-3]} (number of input channels)")
        i, j, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio, value=value)
        return F.erase(img, i, j, h, w, v, self.inplace)


def _setup_angle(x, name):
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        return [-float(x), float(x)]
    if len(x) != 2:
        raise ValueError(f"{name} should be a sequence of length 2.")
    return [float(d) for d in x]


def _tensor_fill(img, fill):
    if fill is None or not hasattr(img, "dim"):
        return fill
    channels = F.get_dimensions(img)[0]
    return [float(fill)] * channels if isinstance(fill, (int, float)) else [float(f)
                                                                            for f in fill]


class RandomRotation(nn.Module):
    """Rotate by an angle drawn uniformly from degrees (a range, or +-degrees)."""

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False,
                 center=None, fill=0):
        super().__init__()
        self.degrees = _setup_angle(degrees, "degrees")
        self.interpolation = (F._PIL_CODES[interpolation] if isinstance(interpolation, int)
                              else interpolation)
        self.expand, self.center, self.fill = expand, center, fill

    @staticmethod
    def get_params(degrees):
        return float(empty(1).uniform_(float(degrees[0]), float(degrees[1])).item())

    def forward(self, img):
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center,
                        _tensor_fill(img, self.fill))


class RandomAffine(nn.Module):
    """Random rotation, translation (fraction of size), scale and shear."""

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation=InterpolationMode.NEAREST, fill=0, center=None):
        super().__init__()
        self.degrees = _setup_angle(degrees, "degrees")
        if translate is not None and not all(0.0 <= t <= 1.0 for t in translate):
            raise ValueError("translation values should be between 0 and 1")
        if scale is not None and any(s <= 0 for s in scale):
            raise ValueError("scale values should be positive")
        if shear is not None:
            shear = _setup_angle(shear, "shear") if isinstance(shear, numbers.Number) or \
                len(shear) == 2 else [float(s) for s in shear]
        self.translate, self.scale, self.shear = translate, scale, shear
        self.interpolation = (F._PIL_CODES[interpolation] if isinstance(interpolation, int)
                              else interpolation)
        self.fill, self.center = fill, center

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size):
        angle = float(empty(1).uniform_(float(degrees[0]), float(degrees[1])).item())
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            tx = int(round(empty(1).uniform_(-max_dx, max_dx).item()))
            ty = int(round(empty(1).uniform_(-max_dy, max_dy).item()))
            translations = (tx, ty)
        else:
            translations = (0, 0)
        scale = (float(empty(1).uniform_(scale_ranges[0], scale_ranges[1]).item())
                 if scale_ranges is not None else 1.0)
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = float(empty(1).uniform_(shears[0], shears[1]).item())
            if len(shears) == 4:
                shear_y = float(empty(1).uniform_(shears[2], shears[3]).item())
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img):
        _, height, width = F.get_dimensions(img)
        ret = self.get_params(self.degrees, self.translate, self.scale, self.shear,
                              [width, height])
        return F.affine(img, *ret, interpolation=self.interpolation,
                        fill=_tensor_fill(img, self.fill), center=self.center)
