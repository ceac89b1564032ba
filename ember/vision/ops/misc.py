"""Building blocks torchvision's models share (torchvision.ops.misc), same names and order."""
from ... import nn

__all__ = ["Conv2dNormActivation", "SqueezeExcitation", "FrozenBatchNorm2d"]


class Conv2dNormActivation(nn.Sequential):
    """Conv2d -> norm -> activation as indices 0/1/2, so state_dict keys match torchvision."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1,
                 inplace=True, bias=None):
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                            dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            params = {} if inplace is None else {"inplace": inplace}
            layers.append(activation_layer(**params))
        super().__init__(*layers)
        self.out_channels = out_channels


class SqueezeExcitation(nn.Module):
    """Squeeze-and-Excitation: channel weights from pooled features (MobileNetV3, EfficientNet)."""

    def __init__(self, input_channels, squeeze_channels, activation=nn.ReLU,
                 scale_activation=nn.Sigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, input):
        scale = self.fc2(self.activation(self.fc1(self.avgpool(input))))
        return self.scale_activation(scale)

    def forward(self, input):
        return self._scale(input) * input


class FrozenBatchNorm2d(nn.Module):
    """BatchNorm2d with fixed statistics and affine parameters (detection backbones)."""

    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        from ... import ones, zeros
        self.eps = eps
        self.register_buffer("weight", ones(num_features))
        self.register_buffer("bias", zeros(num_features))
        self.register_buffer("running_mean", zeros(num_features))
        self.register_buffer("running_var", ones(num_features))

    def forward(self, x):
        scale = self.weight.reshape(1, -1, 1, 1) * (
            self.running_var.reshape(1, -1, 1, 1) + self.eps).rsqrt()
        bias = self.bias.reshape(1, -1, 1, 1) - self.running_mean.reshape(1, -1, 1, 1) * scale
        return x * scale + bias

    def __repr__(self):
        return f"{type(self).__name__}({self.weight.shape[0]}, eps={self.eps})"
