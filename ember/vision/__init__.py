"""ember.vision: what `import torchvision` programs use, on ember (models, transforms,
datasets, io, utils, ops). `ember run` maps `torchvision[.sub]` here.
"""
from . import models, ops, transforms, datasets, io, utils

__version__ = "0.28.0"   # the torchvision release whose API this follows

_image_backend = "PIL"


def set_image_backend(backend):
    """Choose the image loader used by datasets ('PIL' only; accimage is not supported)."""
    global _image_backend
    if backend not in ["PIL", "accimage"]:
        raise ValueError(f"Invalid backend '{backend}'. Options are 'PIL' and 'accimage'")
    if backend == "accimage":
        raise NotImplementedError("ember.vision: the accimage backend is not supported")
    _image_backend = backend


def get_image_backend():
    """Name of the image loader datasets use."""
    return _image_backend
