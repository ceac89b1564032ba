"""Reference models with torchvision's module names (torchvision state_dicts load)."""
from .resnet import ResNet, resnet18, resnet34, resnet50  # noqa: F401
from .mobilenetv2 import MobileNetV2, mobilenet_v2  # noqa: F401
