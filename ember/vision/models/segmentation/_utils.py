"""Backbone + head + upsampling to the input size (torchvision's _SimpleSegmentationModel)."""
from collections import OrderedDict

from .... import nn
from ....nn import functional as F


class _SimpleSegmentationModel(nn.Module):
    def __init__(self, backbone, classifier, aux_classifier=None):
        super().__init__()
        self.backbone = backbone
        self.classifier = classifier
        self.aux_classifier = aux_classifier

    def forward(self, x):
        input_shape = tuple(x.shape[-2:])
        features = self.backbone(x)
        result = OrderedDict()
        out = self.classifier(features["out"])
        result["out"] = F.interpolate(out, size=input_shape, mode="bilinear",
                                      align_corners=False)
        if self.aux_classifier is not None:
            aux = self.aux_classifier(features["aux"])
            result["aux"] = F.interpolate(aux, size=input_shape, mode="bilinear",
                                          align_corners=False)
        return result
