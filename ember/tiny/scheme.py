"""Sparse-update schemes: which part of each layer one training step updates.

A scheme maps a layer name (a Conv2d or Linear in `model.named_modules()`) to
  "frozen"  - no update: no weight or bias gradient is computed,
  "bias"    - only the bias is updated: the weight gradient (and with it the layer's
              saved input activation) is never needed,
  a float r - the weights of the first ceil(r * out_channels) output channels and the bias.
Layers not named are frozen. Backpropagation then only has to reach the lowest layer that
is updated, which the compiler exploits (program.py).
"""
import math

from .. import nn

__all__ = ["UpdateScheme", "trainable_layers"]


def trainable_layers(model):
    """(name, module) of every Conv2d and Linear in forward-definition order."""
    return [(n, m) for n, m in model.named_modules() if isinstance(m, (nn.Conv2d, nn.Linear))]


class UpdateScheme:
    def __init__(self, layers=None):
        self.layers = {}
        for name, rule in (layers or {}).items():
            if rule not in ("frozen", "bias") and not (
                    isinstance(rule, (int, float)) and 0 < rule <= 1):
                raise ValueError(f"UpdateScheme: layer '{name}' has rule {rule!r}; expected "
                                 "'frozen', 'bias' or a channel ratio in (0, 1]")
            self.layers[name] = rule

    @classmethod
    def full(cls, model):
        """Every weight and bias updated (the ordinary training step)."""
        return cls({n: 1.0 for n, _ in trainable_layers(model)})

    @classmethod
    def bias_only(cls, model):
        """Every layer's bias (TinyTL's setting). A conv followed by BatchNorm has one after
        folding; a layer with no bias even then updates nothing."""
        return cls({n: "bias" for n, _ in trainable_layers(model)})

    @classmethod
    def last_k(cls, model, k, ratio=1.0):
        """The last `k` layers' weights (first `ratio` of channels) and biases."""
        return cls({n: ratio for n, _ in trainable_layers(model)[-k:]})

    def rule(self, name):
        return self.layers.get(name, "frozen")

    def channels(self, name, module):
        """Number of leading output channels whose weights are updated (0 for none)."""
        rule = self.rule(name)
        if not isinstance(rule, (int, float)) or isinstance(rule, bool):
            return 0
        out = module.weight.shape[0]
        return min(out, max(1, math.ceil(rule * out)))

    def validate(self, model):
        known = {n for n, _ in trainable_layers(model)}
        unknown = sorted(set(self.layers) - known)
        if unknown:
            raise ValueError(f"UpdateScheme: {unknown} are not Conv2d/Linear layers of the "
                             f"model (known: {sorted(known)[:6]}...)")

    def __repr__(self):
        return f"UpdateScheme({self.layers})"
