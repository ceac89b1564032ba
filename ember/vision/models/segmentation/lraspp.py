"""Lite R-ASPP on MobileNetV3-Large (torchvision's lraspp_mobilenet_v3_large)."""
from collections import OrderedDict

from .... import nn
from ....nn import functional as F
from .._utils import IntermediateLayerGetter, _legacy_pretrained
from ..mobilenetv3 import mobilenet_v3_large
from .fcn import _segmentation_args

__all__ = ["LRASPP", "lraspp_mobilenet_v3_large"]


class LRASPP(nn.Module):
    """Backbone 'low' (stride 8) and 'high' (stride 16) features -> logits at input size."""

    def __init__(self, backbone, low_channels, high_channels, num_classes, inter_channels=128):
        super().__init__()
        self.backbone = backbone
        self.classifier = LRASPPHead(low_channels, high_channels, num_classes, inter_channels)

    def forward(self, input):
        out = self.classifier(self.backbone(input))
        out = F.interpolate(out, size=tuple(input.shape[-2:]), mode="bilinear",
                            align_corners=False)
        return OrderedDict([("out", out)])


class LRASPPHead(nn.Module):
    def __init__(self, low_channels, high_channels, num_classes, inter_channels):
        super().__init__()
        self.cbr = nn.Sequential(nn.Conv2d(high_channels, inter_channels, 1, bias=False),
                                 nn.BatchNorm2d(inter_channels), nn.ReLU(inplace=True))
        self.scale = nn.Sequential(nn.AdaptiveAvgPool2d(1),
                                   nn.Conv2d(high_channels, inter_channels, 1, bias=False),
                                   nn.Sigmoid())
        self.low_classifier = nn.Conv2d(low_channels, num_classes, 1)
        self.high_classifier = nn.Conv2d(inter_channels, num_classes, 1)

    def forward(self, input):
        low, high = input["low"], input["high"]
        x = self.cbr(high) * self.scale(high)
        x = F.interpolate(x, size=tuple(low.shape[-2:]), mode="bilinear", align_corners=False)
        return self.low_classifier(low) + self.high_classifier(x)


@_legacy_pretrained
def lraspp_mobilenet_v3_large(*, weights=None, progress=True, num_classes=None,
                              weights_backbone=None, **kwargs):
    if kwargs.pop("aux_loss", False):
        raise NotImplementedError("This model does not use auxiliary loss")
    num_classes = _segmentation_args("lraspp_mobilenet_v3_large", weights, weights_backbone,
                                     num_classes)
    features = mobilenet_v3_large(dilated=True).features
    stages = ([0] + [i for i, b in enumerate(features) if getattr(b, "_is_cn", False)]
              + [len(features) - 1])
    low_pos, high_pos = stages[-4], stages[-1]
    backbone = IntermediateLayerGetter(features, {str(low_pos): "low", str(high_pos): "high"})
    return LRASPP(backbone, features[low_pos].out_channels, features[high_pos].out_channels,
                  num_classes)
