"""ember.utils: helpers mirroring torch.utils."""
from . import data  # noqa: E402,F401
