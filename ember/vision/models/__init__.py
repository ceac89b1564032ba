"""torchvision.models: architectures with torchvision's module names, so its state_dicts load.

Pretrained weights are not bundled (no network): `weights=` other than None raises
NotImplementedError; load a torchvision checkpoint with ember.load + load_state_dict.
"""
from .alexnet import *
from .densenet import *
from .efficientnet import *
from .mobilenetv2 import *
from .mobilenetv3 import *
from .resnet import *
from .squeezenet import *
from .vgg import *
from . import segmentation
from ._utils import IntermediateLayerGetter


def list_models(module=None):
    """Names of the model builders (all of them, or those of one submodule)."""
    import sys
    mod = module if module is not None else sys.modules[__name__]
    names = getattr(mod, "__all__", None) or dir(mod)
    out = [n for n in names if n[:1].islower() and callable(getattr(mod, n, None))
           and n not in ("list_models", "get_model", "segmentation")]
    if module is None:
        out += list_models(segmentation)
    return sorted(set(out))


def get_model(name, **config):
    """Build a model by name (torchvision.models.get_model)."""
    import sys
    for mod in (sys.modules[__name__], segmentation):
        if name in list_models(mod):
            return getattr(mod, name)(**config)
    raise ValueError(f"Unknown model {name}")
