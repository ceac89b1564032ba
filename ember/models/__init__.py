"""Alias of ember.vision.models (torchvision's architectures), kept for older imports."""
from ..vision.models import *
from ..vision.models import resnet, mobilenetv2, segmentation  # noqa: F401
from ..vision.models.resnet import ResNet, BasicBlock, Bottleneck  # noqa: F401
from ..vision.models.mobilenetv2 import MobileNetV2  # noqa: F401
from .tiny_nets import mbv2_w035, proxyless_w03, mcunet, TinyNet, TINY_MODELS  # noqa: F401
