"""Tensor subclasses and modes that stand in for real tensors (torch._subclasses)."""
from .fake_tensor import FakeTensorMode, FakeTensor  # noqa: F401
