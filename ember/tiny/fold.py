"""Model preparation for a training program: BatchNorm folded into the conv before it, and
partially updated layers split by output channel.

Why split: with weight = [updated channels; frozen channels] as two tensors and the layer
computed as two convs whose outputs are concatenated, autograd asks only for the updated
slice's gradient, so the pruned backward never builds the full weight gradient, and the
frozen slice can stay in flash.
"""
import copy

from .. import nn
from ..nn import functional as F
from ..nn.utils.fusion import fuse_conv_bn_eval
from .. import cat

__all__ = ["fold_bn", "split_layer"]


def fold_bn(model):
    """An eval-mode copy of `model` in which each BatchNorm2d directly after a Conv2d inside
    an nn.Sequential is folded into the conv (the BN becomes nn.Identity)."""
    model = copy.deepcopy(model).eval()
    for seq in [m for m in model.modules() if isinstance(m, nn.Sequential)]:
        names = list(seq._modules)
        for a, b in zip(names, names[1:]):
            conv, bn = seq._modules[a], seq._modules[b]
            if isinstance(conv, nn.Conv2d) and isinstance(bn, nn.BatchNorm2d):
                seq._modules[a] = fuse_conv_bn_eval(conv, bn)
                seq._modules[b] = nn.Identity()
    return model


class _SplitConv(nn.Module):
    """A Conv2d whose first `k` output channels (weight_head) are trained, the rest
    (weight_tail) frozen."""

    def __init__(self, conv, k):
        super().__init__()
        self.k, self.groups = k, conv.groups
        self.stride, self.padding, self.dilation = conv.stride, conv.padding, conv.dilation
        w = conv.weight.detach()
        self.weight_head = nn.Parameter(w[:k].clone())
        self.weight_tail = nn.Parameter(w[k:].clone(), requires_grad=False)
        self.bias = conv.bias
        self.in_channels, self.out_channels = conv.in_channels, conv.out_channels

    def forward(self, x):
        b = self.bias
        if self.groups == 1:
            xh = xt = x
            gh = gt = 1
        elif self.groups == self.in_channels == self.out_channels:
            xh, xt = x[:, :self.k], x[:, self.k:]
            gh, gt = self.k, self.out_channels - self.k
        else:
            raise NotImplementedError(
                f"ember.tiny: partial-channel update of a conv with groups={self.groups} "
                f"(only groups=1 and depthwise are supported)")
        head = F.conv2d(xh, self.weight_head, None if b is None else b[:self.k], self.stride,
                        self.padding, self.dilation, gh)
        tail = F.conv2d(xt, self.weight_tail, None if b is None else b[self.k:], self.stride,
                        self.padding, self.dilation, gt)
        return cat([head, tail], 1)


class _SplitLinear(nn.Module):
    """A Linear whose first `k` output features (weight_head) are trained."""

    def __init__(self, lin, k):
        super().__init__()
        self.k = k
        w = lin.weight.detach()
        self.weight_head = nn.Parameter(w[:k].clone())
        self.weight_tail = nn.Parameter(w[k:].clone(), requires_grad=False)
        self.bias = lin.bias

    def forward(self, x):
        b = self.bias
        head = F.linear(x, self.weight_head, None if b is None else b[:self.k])
        tail = F.linear(x, self.weight_tail, None if b is None else b[self.k:])
        return cat([head, tail], -1)


def split_layer(module, k):
    """`module` itself when all its channels are trained, else its split version."""
    if k >= module.weight.shape[0]:
        return module
    return (_SplitConv if isinstance(module, nn.Conv2d) else _SplitLinear)(module, k)
