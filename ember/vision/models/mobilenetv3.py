"""MobileNetV3 large/small with torchvision's module names (dilated variant for DeepLabV3)."""
from functools import partial

from ... import nn
from ..ops.misc import Conv2dNormActivation, SqueezeExcitation as SElayer
from ._utils import (_init_conv_norm_linear, _legacy_pretrained, _make_divisible,
                     _no_weights, _normal_001)

__all__ = ["MobileNetV3", "mobilenet_v3_large", "mobilenet_v3_small"]


class InvertedResidualConfig:
    """One bottleneck row of the paper's table, channels scaled by width_mult."""

    def __init__(self, input_channels, kernel, expanded_channels, out_channels, use_se,
                 activation, stride, dilation, width_mult):
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.use_se = use_se
        self.use_hs = activation == "HS"
        self.stride = stride
        self.dilation = dilation

    @staticmethod
    def adjust_channels(channels, width_mult):
        return _make_divisible(channels * width_mult, 8)


class InvertedResidual(nn.Module):
    def __init__(self, cnf, norm_layer, se_layer=partial(SElayer,
                                                         scale_activation=nn.Hardsigmoid)):
        super().__init__()
        if not (1 <= cnf.stride <= 2):
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        layers = []
        activation_layer = nn.Hardswish if cnf.use_hs else nn.ReLU
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, cnf.expanded_channels,
                                               kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=activation_layer))
        stride = 1 if cnf.dilation > 1 else cnf.stride
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.expanded_channels,
                                           kernel_size=cnf.kernel, stride=stride,
                                           dilation=cnf.dilation, groups=cnf.expanded_channels,
                                           norm_layer=norm_layer,
                                           activation_layer=activation_layer))
        if cnf.use_se:
            squeeze_channels = _make_divisible(cnf.expanded_channels // 4, 8)
            layers.append(se_layer(cnf.expanded_channels, squeeze_channels))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result = result + input
        return result


class MobileNetV3(nn.Module):
    def __init__(self, inverted_residual_setting, last_channel, num_classes=1000, block=None,
                 norm_layer=None, dropout=0.2, **kwargs):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        if not all(isinstance(s, InvertedResidualConfig) for s in inverted_residual_setting):
            raise TypeError("The inverted_residual_setting should be List[InvertedResidualConfig]")
        block = block or InvertedResidual
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        first = inverted_residual_setting[0].input_channels
        layers = [Conv2dNormActivation(3, first, kernel_size=3, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.Hardswish)]
        for cnf in inverted_residual_setting:
            layers.append(block(cnf, norm_layer))
        last_in = inverted_residual_setting[-1].out_channels
        last_out = 6 * last_in
        layers.append(Conv2dNormActivation(last_in, last_out, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(last_out, last_channel),
                                        nn.Hardswish(inplace=True),
                                        nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(last_channel, num_classes))
        _init_conv_norm_linear(self, _normal_001)

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(x.flatten(1))


def _mobilenet_v3_conf(arch, width_mult=1.0, reduced_tail=False, dilated=False, **kwargs):
    rd = 2 if reduced_tail else 1
    dil = 2 if dilated else 1
    b = partial(InvertedResidualConfig, width_mult=width_mult)
    adjust = partial(InvertedResidualConfig.adjust_channels, width_mult=width_mult)
    if arch == "mobilenet_v3_large":
        setting = [
            b(16, 3, 16, 16, False, "RE", 1, 1), b(16, 3, 64, 24, False, "RE", 2, 1),
            b(24, 3, 72, 24, False, "RE", 1, 1), b(24, 5, 72, 40, True, "RE", 2, 1),
            b(40, 5, 120, 40, True, "RE", 1, 1), b(40, 5, 120, 40, True, "RE", 1, 1),
            b(40, 3, 240, 80, False, "HS", 2, 1), b(80, 3, 200, 80, False, "HS", 1, 1),
            b(80, 3, 184, 80, False, "HS", 1, 1), b(80, 3, 184, 80, False, "HS", 1, 1),
            b(80, 3, 480, 112, True, "HS", 1, 1), b(112, 3, 672, 112, True, "HS", 1, 1),
            b(112, 5, 672, 160 // rd, True, "HS", 2, dil),
            b(160 // rd, 5, 960 // rd, 160 // rd, True, "HS", 1, dil),
            b(160 // rd, 5, 960 // rd, 160 // rd, True, "HS", 1, dil)]
        last_channel = adjust(1280 // rd)
    elif arch == "mobilenet_v3_small":
        setting = [
            b(16, 3, 16, 16, True, "RE", 2, 1), b(16, 3, 72, 24, False, "RE", 2, 1),
            b(24, 3, 88, 24, False, "RE", 1, 1), b(24, 5, 96, 40, True, "HS", 2, 1),
            b(40, 5, 240, 40, True, "HS", 1, 1), b(40, 5, 240, 40, True, "HS", 1, 1),
            b(40, 5, 120, 48, True, "HS", 1, 1), b(48, 5, 144, 48, True, "HS", 1, 1),
            b(48, 5, 288, 96 // rd, True, "HS", 2, dil),
            b(96 // rd, 5, 576 // rd, 96 // rd, True, "HS", 1, dil),
            b(96 // rd, 5, 576 // rd, 96 // rd, True, "HS", 1, dil)]
        last_channel = adjust(1024 // rd)
    else:
        raise ValueError(f"Unsupported model type {arch}")
    return setting, last_channel


@_legacy_pretrained
def mobilenet_v3_large(*, weights=None, progress=True, **kwargs):
    _no_weights(weights, "mobilenet_v3_large")
    setting, last_channel = _mobilenet_v3_conf("mobilenet_v3_large", **kwargs)
    return MobileNetV3(setting, last_channel, **kwargs)


@_legacy_pretrained
def mobilenet_v3_small(*, weights=None, progress=True, **kwargs):
    _no_weights(weights, "mobilenet_v3_small")
    setting, last_channel = _mobilenet_v3_conf("mobilenet_v3_small", **kwargs)
    return MobileNetV3(setting, last_channel, **kwargs)
