"""DeepLabV3 (ResNet-50/101, MobileNetV3-Large backbones) with torchvision's module names."""
from .... import cat, nn
from ....nn import functional as F
from .._utils import _legacy_pretrained, IntermediateLayerGetter
from ..mobilenetv3 import mobilenet_v3_large
from ..resnet import resnet50, resnet101
from ._utils import _SimpleSegmentationModel
from .fcn import FCNHead, _resnet_features, _segmentation_args

__all__ = ["DeepLabV3", "DeepLabHead", "ASPP", "deeplabv3_resnet50", "deeplabv3_resnet101",
           "deeplabv3_mobilenet_v3_large"]


class DeepLabV3(_SimpleSegmentationModel):
    """Atrous-convolution segmentation: {'out': logits, 'aux': ...} at the input size."""


class DeepLabHead(nn.Sequential):
    def __init__(self, in_channels, num_classes, atrous_rates=(12, 24, 36)):
        super().__init__(ASPP(in_channels, atrous_rates),
                         nn.Conv2d(256, 256, 3, padding=1, bias=False), nn.BatchNorm2d(256),
                         nn.ReLU(), nn.Conv2d(256, num_classes, 1))


class ASPPConv(nn.Sequential):
    def __init__(self, in_channels, out_channels, dilation):
        super().__init__(nn.Conv2d(in_channels, out_channels, 3, padding=dilation,
                                   dilation=dilation, bias=False),
                         nn.BatchNorm2d(out_channels), nn.ReLU())


class ASPPPooling(nn.Sequential):
    def __init__(self, in_channels, out_channels):
        super().__init__(nn.AdaptiveAvgPool2d(1),
                         nn.Conv2d(in_channels, out_channels, 1, bias=False),
                         nn.BatchNorm2d(out_channels), nn.ReLU())

    def forward(self, x):
        size = tuple(x.shape[-2:])
        for mod in self:
            x = mod(x)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


class ASPP(nn.Module):
    def __init__(self, in_channels, atrous_rates, out_channels=256):
        super().__init__()
        modules = [nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, bias=False),
                                 nn.BatchNorm2d(out_channels), nn.ReLU())]
        for rate in tuple(atrous_rates):
            modules.append(ASPPConv(in_channels, out_channels, rate))
        modules.append(ASPPPooling(in_channels, out_channels))
        self.convs = nn.ModuleList(modules)
        self.project = nn.Sequential(
            nn.Conv2d(len(self.convs) * out_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels), nn.ReLU(), nn.Dropout(0.5))

    def forward(self, x):
        return self.project(cat([conv(x) for conv in self.convs], dim=1))


def _deeplab_resnet(name, resnet, weights, weights_backbone, num_classes, aux_loss):
    num_classes = _segmentation_args(name, weights, weights_backbone, num_classes)
    backbone = resnet(replace_stride_with_dilation=[False, True, True])
    aux = FCNHead(1024, num_classes) if aux_loss else None
    return DeepLabV3(_resnet_features(backbone, aux_loss), DeepLabHead(2048, num_classes), aux)


@_legacy_pretrained
def deeplabv3_resnet50(*, weights=None, progress=True, num_classes=None, aux_loss=None,
                       weights_backbone=None, **kwargs):
    return _deeplab_resnet("deeplabv3_resnet50", resnet50, weights, weights_backbone,
                           num_classes, aux_loss)


@_legacy_pretrained
def deeplabv3_resnet101(*, weights=None, progress=True, num_classes=None, aux_loss=None,
                        weights_backbone=None, **kwargs):
    return _deeplab_resnet("deeplabv3_resnet101", resnet101, weights, weights_backbone,
                           num_classes, aux_loss)


@_legacy_pretrained
def deeplabv3_mobilenet_v3_large(*, weights=None, progress=True, num_classes=None,
                                 aux_loss=None, weights_backbone=None, **kwargs):
    num_classes = _segmentation_args("deeplabv3_mobilenet_v3_large", weights, weights_backbone,
                                     num_classes)
    features = mobilenet_v3_large(dilated=True).features
    # strided blocks mark the stages C1..Cn-1; out = C5 (stride 16), aux = C2 (stride 8)
    stages = ([0] + [i for i, b in enumerate(features) if getattr(b, "_is_cn", False)]
              + [len(features) - 1])
    out_pos, aux_pos = stages[-1], stages[-4]
    return_layers = {str(out_pos): "out"}
    if aux_loss:
        return_layers[str(aux_pos)] = "aux"
    backbone = IntermediateLayerGetter(features, return_layers)
    aux = FCNHead(features[aux_pos].out_channels, num_classes) if aux_loss else None
    head = DeepLabHead(features[out_pos].out_channels, num_classes)
    return DeepLabV3(backbone, head, aux)
