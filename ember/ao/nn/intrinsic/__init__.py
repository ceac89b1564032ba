"""ember.ao.nn.intrinsic: float modules fused for quantization (torch.ao.nn.intrinsic);
convert swaps each whole for one quantized kernel with the relu applied in the integers."""
from .... import nn

__all__ = ["_FusedModule", "LinearReLU", "ConvReLU2d"]


class _FusedModule(nn.Sequential):
    """A Sequential that prepare/convert treat as one leaf."""


class LinearReLU(_FusedModule):
    """Linear then ReLU."""

    def __init__(self, linear, relu):
        if type(linear) is not nn.Linear or type(relu) is not nn.ReLU:
            raise AssertionError(f"Incorrect types for input modules{type(linear)}"
                                 f"{type(relu)}")
        super().__init__(linear, relu)


class ConvReLU2d(_FusedModule):
    """Conv2d then ReLU."""

    def __init__(self, conv, relu):
        if type(conv) is not nn.Conv2d or type(relu) is not nn.ReLU:
            raise AssertionError(f"Incorrect types for input modules{type(conv)}{type(relu)}")
        super().__init__(conv, relu)
