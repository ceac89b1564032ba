"""ember.ao.nn.quantized.dynamic: modules with int8 weights and activations quantized per
call (torch.ao.nn.quantized.dynamic)."""
from .linear import Linear  # noqa: F401
from .rnn import GRU, LSTM  # noqa: F401
