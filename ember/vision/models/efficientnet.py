"""EfficientNet B0-B7 (v1) with torchvision's module names."""
import copy
import math
from functools import partial

from ... import nn
from ..ops.misc import Conv2dNormActivation, SqueezeExcitation
from ..ops.stochastic_depth import StochasticDepth
from ._utils import (_init_conv_norm_linear, _legacy_pretrained, _make_divisible,
                     _no_weights)

__all__ = ["EfficientNet", "efficientnet_b0", "efficientnet_b1", "efficientnet_b2",
           "efficientnet_b3", "efficientnet_b4", "efficientnet_b5", "efficientnet_b6",
           "efficientnet_b7"]


class MBConvConfig:
    """One stage: expand ratio, kernel, stride, channels and depth scaled by the multipliers."""

    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                 width_mult=1.0, depth_mult=1.0, block=None):
        self.expand_ratio = expand_ratio
        self.kernel = kernel
        self.stride = stride
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.num_layers = int(math.ceil(num_layers * depth_mult))
        self.block = block or MBConv

    @staticmethod
    def adjust_channels(channels, width_mult, min_value=None):
        return _make_divisible(channels * width_mult, 8, min_value)


class MBConv(nn.Module):
    def __init__(self, cnf, stochastic_depth_prob, norm_layer, se_layer=SqueezeExcitation):
        super().__init__()
        if not (1 <= cnf.stride <= 2):
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        layers = []
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        if expanded != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=nn.SiLU))
        layers.append(Conv2dNormActivation(expanded, expanded, kernel_size=cnf.kernel,
                                           stride=cnf.stride, groups=expanded,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU))
        squeeze_channels = max(1, cnf.input_channels // 4)
        layers.append(se_layer(expanded, squeeze_channels,
                               activation=partial(nn.SiLU, inplace=True)))
        layers.append(Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result = self.stochastic_depth(result) + input
        return result


class EfficientNet(nn.Module):
    def __init__(self, inverted_residual_setting, dropout, stochastic_depth_prob=0.2,
                 num_classes=1000, norm_layer=None, last_channel=None):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        norm_layer = norm_layer or nn.BatchNorm2d
        layers = [Conv2dNormActivation(3, inverted_residual_setting[0].input_channels,
                                       kernel_size=3, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.SiLU)]
        total = sum(cnf.num_layers for cnf in inverted_residual_setting)
        block_id = 0
        for cnf in inverted_residual_setting:
            stage = []
            for _ in range(cnf.num_layers):
                block_cnf = copy.copy(cnf)
                if stage:
                    block_cnf.input_channels = block_cnf.out_channels
                    block_cnf.stride = 1
                sd_prob = stochastic_depth_prob * float(block_id) / total
                stage.append(block_cnf.block(block_cnf, sd_prob, norm_layer))
                block_id += 1
            layers.append(nn.Sequential(*stage))
        last_in = inverted_residual_setting[-1].out_channels
        last_out = last_channel if last_channel is not None else 4 * last_in
        layers.append(Conv2dNormActivation(last_in, last_out, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(last_out, num_classes))
        # uniform in +-1/sqrt(out_features), as torchvision's EfficientNet
        _init_conv_norm_linear(self, lambda w: nn.init.uniform_(
            w, -1.0 / math.sqrt(w.shape[0]), 1.0 / math.sqrt(w.shape[0])))

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(x.flatten(1))


def _efficientnet(name, width_mult, depth_mult, dropout, weights, kwargs, norm_layer=None):
    _no_weights(weights, name)
    b = partial(MBConvConfig, width_mult=width_mult, depth_mult=depth_mult)
    setting = [b(1, 3, 1, 32, 16, 1), b(6, 3, 2, 16, 24, 2), b(6, 5, 2, 24, 40, 2),
               b(6, 3, 2, 40, 80, 3), b(6, 5, 1, 80, 112, 3), b(6, 5, 2, 112, 192, 4),
               b(6, 3, 1, 192, 320, 1)]
    if norm_layer is not None:
        kwargs.setdefault("norm_layer", norm_layer)
    return EfficientNet(setting, kwargs.pop("dropout", dropout), **kwargs)


_BN_B5 = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)


@_legacy_pretrained
def efficientnet_b0(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b0", 1.0, 1.0, 0.2, weights, kwargs)


@_legacy_pretrained
def efficientnet_b1(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b1", 1.0, 1.1, 0.2, weights, kwargs)


@_legacy_pretrained
def efficientnet_b2(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b2", 1.1, 1.2, 0.3, weights, kwargs)


@_legacy_pretrained
def efficientnet_b3(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b3", 1.2, 1.4, 0.3, weights, kwargs)


@_legacy_pretrained
def efficientnet_b4(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b4", 1.4, 1.8, 0.4, weights, kwargs)


@_legacy_pretrained
def efficientnet_b5(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b5", 1.6, 2.2, 0.4, weights, kwargs, _BN_B5)


@_legacy_pretrained
def efficientnet_b6(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b6", 1.8, 2.6, 0.5, weights, kwargs, _BN_B5)


@_legacy_pretrained
def efficientnet_b7(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b7", 2.0, 3.1, 0.5, weights, kwargs, _BN_B5)
