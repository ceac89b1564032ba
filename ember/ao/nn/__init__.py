"""ember.ao.nn: quantized modules (torch.ao.nn)."""
from . import quantized  # noqa: F401
