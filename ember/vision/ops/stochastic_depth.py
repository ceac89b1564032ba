"""Stochastic depth (drop whole residual branches per sample), torchvision.ops semantics."""
from ... import empty, nn

__all__ = ["stochastic_depth", "StochasticDepth"]


def stochastic_depth(input, p, mode, training=True):
    """Zero a random subset of rows (mode='row') or the whole batch, rescaling survivors."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ["batch", "row"]:
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    survival_rate = 1.0 - p
    if mode == "row":
        size = [input.shape[0]] + [1] * (input.ndim - 1)
    else:
        size = [1] * input.ndim
    noise = empty(size, dtype=input.dtype, device=input.device).bernoulli_(survival_rate)
    if survival_rate > 0.0:
        noise.div_(survival_rate)
    return input * noise


class StochasticDepth(nn.Module):
    """Module form of stochastic_depth; identity in eval mode."""

    def __init__(self, p, mode):
        super().__init__()
        self.p = p
        self.mode = mode

    def forward(self, input):
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p}, mode={self.mode})"
