"""Shared model helpers: the no-bundled-weights error, channel rounding, layer getter."""
from collections import OrderedDict

from ... import nn

__all__ = ["IntermediateLayerGetter"]


def _no_weights(weights, name):
    """Pretrained weights need the network; say how to load a torchvision state_dict."""
    if weights not in (None, False):
        raise NotImplementedError(f"ember.vision.models.{name}: pretrained weights are not "
                                  "bundled (no network); load a torchvision state_dict with "
                                  "ember.load + load_state_dict instead")


def _make_divisible(v, divisor, min_value=None):
    """Round channels to a multiple of divisor without dropping more than 10% (torchvision)."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def _init_conv_norm_linear(model, linear_init):
    """torchvision's init for MobileNetV2/V3 and EfficientNet: kaiming conv, unit norms, zero
    biases; only the Linear weight's draw differs (linear_init(weight)), so it is passed in."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            linear_init(m.weight)
            nn.init.zeros_(m.bias)


def _normal_001(weight):
    nn.init.normal_(weight, 0, 0.01)


class IntermediateLayerGetter(nn.ModuleDict):
    """Run a model's children in order and return the outputs named in return_layers.

    Keeps the children's names, so the backbone's state_dict keys match torchvision's.
    """

    def __init__(self, model, return_layers):
        if not set(return_layers).issubset([name for name, _ in model.named_children()]):
            raise ValueError("return_layers are not present in model")
        orig_return_layers = dict(return_layers)
        return_layers = {str(k): str(v) for k, v in return_layers.items()}
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            if name in return_layers:
                del return_layers[name]
            if not return_layers:
                break
        super().__init__(layers)
        self.return_layers = orig_return_layers

    def forward(self, x):
        out = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out


def _legacy_pretrained(builder):
    """Accept torchvision's pre-0.13 `pretrained=` / `pretrained_backbone=` keywords.

    False means no weights (as in torchvision, with its deprecation warning); True asks for
    downloaded weights, which _no_weights refuses with its NotImplementedError."""
    import functools
    import warnings

    @functools.wraps(builder)
    def wrapper(*args, **kwargs):
        for old, new in (("pretrained", "weights"), ("pretrained_backbone", "weights_backbone")):
            if old in kwargs:
                value = kwargs.pop(old)
                warnings.warn(f"The parameter '{old}' is deprecated since 0.13 and may be removed "
                              f"in the future, please use '{new}' instead.", UserWarning,
                              stacklevel=2)
                if value:
                    kwargs[new] = "DEFAULT"
                elif new == "weights_backbone" or new not in kwargs:
                    kwargs[new] = None
        return builder(*args, **kwargs)
    return wrapper
