"""FCN-ResNet50/101 (torchvision 0.7 segmentation models), torchvision's module names."""
from .... import nn
from .._utils import _legacy_pretrained, IntermediateLayerGetter, _no_weights
from ..resnet import resnet50, resnet101
from ._utils import _SimpleSegmentationModel

__all__ = ["FCN", "FCNHead", "fcn_resnet50", "fcn_resnet101"]


class FCN(_SimpleSegmentationModel):
    """Fully-convolutional network: returns {'out': logits, 'aux': ...} at the input size."""


class FCNHead(nn.Sequential):
    def __init__(self, in_channels, channels):
        inter_channels = in_channels // 4
        super().__init__(nn.Conv2d(in_channels, inter_channels, 3, padding=1, bias=False),
                         nn.BatchNorm2d(inter_channels), nn.ReLU(), nn.Dropout(0.1),
                         nn.Conv2d(inter_channels, channels, 1))


def _resnet_features(backbone, aux):
    return_layers = {"layer4": "out"}
    if aux:
        return_layers["layer3"] = "aux"
    return IntermediateLayerGetter(backbone, return_layers)


def _segmentation_args(name, weights, weights_backbone, num_classes):
    """weights_backbone defaults to None here: torchvision's default downloads ImageNet."""
    _no_weights(weights, name)
    _no_weights(weights_backbone, name + " backbone")
    return 21 if num_classes is None else num_classes


def _fcn(name, resnet, weights, weights_backbone, num_classes, aux_loss):
    num_classes = _segmentation_args(name, weights, weights_backbone, num_classes)
    backbone = resnet(replace_stride_with_dilation=[False, True, True])
    aux = FCNHead(1024, num_classes) if aux_loss else None
    return FCN(_resnet_features(backbone, aux_loss), FCNHead(2048, num_classes), aux)


@_legacy_pretrained
def fcn_resnet50(*, weights=None, progress=True, num_classes=None, aux_loss=None,
                 weights_backbone=None, **kwargs):
    return _fcn("fcn_resnet50", resnet50, weights, weights_backbone, num_classes, aux_loss)


@_legacy_pretrained
def fcn_resnet101(*, weights=None, progress=True, num_classes=None, aux_loss=None,
                  weights_backbone=None, **kwargs):
    return _fcn("fcn_resnet101", resnet101, weights, weights_backbone, num_classes, aux_loss)
