"""torchvision.transforms.v2 for plain images: the v1 operations behind v2's calling rules.

v2 transforms accept any structure (tuples, lists, dicts) and transform the image in it: every
PIL image, and the first plain tensor; other items (labels, ...) pass through unchanged.
What is not here: tv_tensors (BoundingBoxes, Mask, Video) and transforming several images of
one sample jointly with shared random parameters; those raise NotImplementedError.
"""
import numpy as np

from ... import Tensor, from_numpy
from . import functional, transforms as _v1
from ._functional_pil import _is_pil_image
from .functional import InterpolationMode

__all__ = ["Transform", "Compose", "ToImage", "ToDtype", "ToPureTensor", "ToTensor",
           "PILToTensor", "ToPILImage", "Normalize", "Resize", "CenterCrop", "Pad", "Lambda",
           "RandomApply", "RandomChoice", "RandomOrder", "RandomCrop", "RandomHorizontalFlip",
           "RandomVerticalFlip", "RandomResizedCrop", "FiveCrop", "TenCrop", "ColorJitter",
           "Grayscale", "RandomGrayscale", "GaussianBlur", "RandomErasing", "RandomRotation",
           "RandomAffine", "InterpolationMode", "functional"]


def _flatten(obj, out):
    if isinstance(obj, (tuple, list)):
        for x in obj:
            _flatten(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _flatten(x, out)
    else:
        out.append(obj)
    return out


def _rebuild(obj, it):
    if isinstance(obj, (tuple, list)):
        return type(obj)(_rebuild(x, it) for x in obj)
    if isinstance(obj, dict):
        return {k: _rebuild(v, it) for k, v in obj.items()}
    return next(it)


def _apply(fn, inputs):
    """Apply fn to the image inside inputs (v2's rules), passing everything else through."""
    sample = inputs if len(inputs) > 1 else inputs[0]
    flat = _flatten(sample, [])
    todo, seen_tensor = [], False
    for x in flat:
        if _is_pil_image(x) or isinstance(x, np.ndarray):
            todo.append(True)
        elif isinstance(x, Tensor) and not seen_tensor:
            seen_tensor = True
            todo.append(True)
        else:
            todo.append(False)
    if sum(todo) > 1:
        raise NotImplementedError("ember.vision.transforms.v2: transforming several images of "
                                  "one sample jointly (shared random parameters) is not "
                                  "supported; transform them separately")
    out = [fn(x) if t else x for x, t in zip(flat, todo)]
    return _rebuild(sample, iter(out))


class Transform:
    """Base of v2 transforms: subclasses define _transform(image)."""

    def _transform(self, inpt):
        raise NotImplementedError

    def __call__(self, *inputs):
        return _apply(self._transform, inputs)


def _v2(cls):
    """A v2 class from a v1 one: same constructor, v2's structured-input call."""
    class V2(cls):
        def __call__(self, *inputs):
            return _apply(super().__call__, inputs)
    V2.__name__ = V2.__qualname__ = cls.__name__
    V2.__doc__ = cls.__doc__
    return V2


class ToImage(Transform):
    """PIL image / HWC ndarray / tensor -> uint8 (or own dtype) CHW tensor, no scaling."""

    def _transform(self, inpt):
        if isinstance(inpt, np.ndarray):
            arr = inpt[:, :, None] if inpt.ndim == 2 else inpt
            return from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))
        if _is_pil_image(inpt):
            return functional.pil_to_tensor(inpt)
        return inpt


class ToDtype(Transform):
    """Cast images to dtype; scale=True also rescales the value range (uint8 <-> [0, 1])."""

    def __init__(self, dtype, scale=False):
        if isinstance(dtype, dict):
            raise NotImplementedError("ember.vision.transforms.v2.ToDtype: per-type dtype dicts "
                                      "need tv_tensors, which ember does not have")
        self.dtype, self.scale = dtype, scale

    def _transform(self, inpt):
        if not isinstance(inpt, Tensor):
            raise TypeError(f"ToDtype expects a tensor image, got {type(inpt)}; use ToImage "
                            "first")
        if self.scale:
            return functional.convert_image_dtype(inpt, self.dtype)
        return inpt.to(self.dtype)


class ToPureTensor(Transform):
    def _transform(self, inpt):
        return inpt


class Compose:
    """Chain v2 transforms; several positional inputs travel together as a tuple."""

    def __init__(self, transforms):
        if not isinstance(transforms, (list, tuple)):
            raise TypeError("Argument transforms should be a sequence of callables")
        if not transforms:
            raise ValueError("Pass at least one transform")
        self.transforms = transforms

    def __call__(self, *inputs):
        needs_unpacking = len(inputs) > 1
        for transform in self.transforms:
            outputs = transform(*inputs)
            inputs = outputs if needs_unpacking else (outputs,)
        return outputs

    __repr__ = _v1.Compose.__repr__


Lambda = _v1.Lambda
ToTensor = _v2(_v1.ToTensor)
PILToTensor = _v2(_v1.PILToTensor)
ToPILImage = _v2(_v1.ToPILImage)
Normalize = _v2(_v1.Normalize)
Resize = _v2(_v1.Resize)
CenterCrop = _v2(_v1.CenterCrop)
Pad = _v2(_v1.Pad)
RandomApply = _v1.RandomApply
RandomChoice = _v1.RandomChoice
RandomOrder = _v1.RandomOrder
RandomCrop = _v2(_v1.RandomCrop)
RandomHorizontalFlip = _v2(_v1.RandomHorizontalFlip)
RandomVerticalFlip = _v2(_v1.RandomVerticalFlip)
RandomResizedCrop = _v2(_v1.RandomResizedCrop)
FiveCrop = _v2(_v1.FiveCrop)
TenCrop = _v2(_v1.TenCrop)
ColorJitter = _v2(_v1.ColorJitter)
Grayscale = _v2(_v1.Grayscale)
RandomGrayscale = _v2(_v1.RandomGrayscale)
GaussianBlur = _v2(_v1.GaussianBlur)
RandomErasing = _v2(_v1.RandomErasing)
RandomRotation = _v2(_v1.RandomRotation)
RandomAffine = _v2(_v1.RandomAffine)
