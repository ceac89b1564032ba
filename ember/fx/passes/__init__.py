"""ember.fx.passes: graph passes (torch.fx.passes)."""
from . import shape_prop  # noqa: F401
