"""The three networks of "On-Device Training Under 256KB Memory" (Lin et al., NeurIPS 2022),
built from ember.nn: MobileNetV2-w0.35, ProxylessNAS-Mobile-w0.3 and an MCUNet-style net.

Why a local builder: ProxylessNAS and MCUNet use per-block kernel sizes (3/5/7) and expand
ratios that torchvision's MobileNetV2 cannot express. Every conv is followed by a
BatchNorm2d (folded away by `ember.tiny.fold_bn` before training) and ReLU6 except the
projection, as in the papers.
"""
from .. import nn
from ..vision.models.mobilenetv2 import MobileNetV2

__all__ = ["mbv2_w035", "proxyless_w03", "mcunet", "TinyNet", "TINY_MODELS"]


def _divisible(v, divisor=8):
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


def _conv_bn(cin, cout, k, stride=1, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    if act:
        layers.append(nn.ReLU6())
    return layers


class _MBConv(nn.Module):
    """Inverted residual: 1x1 expand, kxk depthwise, 1x1 project (+ identity)."""

    def __init__(self, cin, cout, k, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = _conv_bn(cin, hidden, 1) if expand != 1 else []
        layers += _conv_bn(hidden, hidden, k, stride, groups=hidden)
        layers += _conv_bn(hidden, cout, 1, act=False)
        self.conv = nn.Sequential(*layers)
        self.use_res_connect = stride == 1 and cin == cout

    def forward(self, x):
        y = self.conv(x)
        return x + y if self.use_res_connect else y


class TinyNet(nn.Module):
    """Stem conv, MBConv blocks from `blocks` = [(expand, kernel, out, stride)], a 1x1 head
    conv (when `head` > 0), global average pool and a linear classifier."""

    def __init__(self, blocks, stem, width, num_classes=10, head=0):
        super().__init__()
        cin = _divisible(stem * width)
        features = _conv_bn(3, cin, 3, 2)
        for expand, k, c, s in blocks:
            cout = _divisible(c * width)
            features.append(_MBConv(cin, cout, k, s, expand))
            cin = cout
        if head:
            features += _conv_bn(cin, head, 1)
            cin = head
        self.features = nn.Sequential(*features)
        self.classifier = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, (1, 1)).flatten(1)
        return self.classifier(x)


# ProxylessNAS-Mobile (Cai et al., ICLR 2019), searched architecture for mobile latency
_PROXYLESS = [(1, 3, 16, 1),
              (3, 5, 32, 2), (3, 3, 32, 1),
              (3, 7, 40, 2), (3, 3, 40, 1), (3, 5, 40, 1), (3, 5, 40, 1),
              (6, 7, 80, 2), (3, 5, 80, 1), (3, 5, 80, 1), (3, 5, 80, 1),
              (6, 5, 96, 1), (3, 5, 96, 1), (3, 5, 96, 1), (3, 5, 96, 1),
              (6, 7, 192, 2), (6, 7, 192, 1), (3, 7, 192, 1), (3, 7, 192, 1),
              (6, 7, 320, 1)]

# MCUNet-style (Lin et al., NeurIPS 2020): a small stem, few channels, large kernels late
_MCUNET = [(1, 3, 8, 1),
           (4, 7, 16, 2), (3, 5, 16, 1),
           (5, 7, 24, 2), (4, 5, 24, 1), (4, 5, 24, 1),
           (5, 5, 40, 2), (4, 3, 40, 1), (5, 5, 48, 1), (4, 3, 48, 1),
           (5, 5, 96, 2), (4, 5, 96, 1), (5, 7, 160, 1)]


def mbv2_w035(num_classes=10):
    """MobileNetV2 at width 0.35 (torchvision's module names, no dropout)."""
    return MobileNetV2(num_classes=num_classes, width_mult=0.35, dropout=0.0)


def proxyless_w03(num_classes=10):
    """ProxylessNAS-Mobile at width 0.3 with its 1x1 head conv (1280 channels)."""
    return TinyNet(_PROXYLESS, stem=32, width=0.3, num_classes=num_classes, head=1280)


def mcunet(num_classes=10):
    """An MCUNet-style network for 128x128 inputs (no head conv, 160-channel features)."""
    return TinyNet(_MCUNET, stem=16, width=1.0, num_classes=num_classes)


TINY_MODELS = {"mbv2-w0.35": mbv2_w035, "proxyless-w0.3": proxyless_w03, "mcunet": mcunet}
