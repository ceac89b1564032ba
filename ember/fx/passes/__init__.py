"""ember.fx.passes: graph passes (torch.fx.passes)."""
from . import shape_prop, fake_tensor_prop, split_module  # noqa: F401
