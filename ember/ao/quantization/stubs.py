"""QuantStub / DeQuantStub / QuantWrapper: placeholders eager-mode `convert` swaps for
Quantize / DeQuantize modules (identity until then)."""
from ... import nn

__all__ = ["QuantStub", "DeQuantStub", "QuantWrapper"]


class QuantStub(nn.Module):
    """Where float becomes quantized: an observer after prepare, Quantize after convert."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(nn.Module):
    """Where quantized becomes float: DeQuantize after convert."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantWrapper(nn.Module):
    """module between a QuantStub and a DeQuantStub (its qconfig on all three)."""

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, X):
        return self.dequant(self.module(self.quant(X)))
