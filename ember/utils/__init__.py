"""ember.utils: helpers mirroring torch.utils."""
from . import data  # noqa: E402,F401
from .backend_registration import (  # noqa: E402,F401  (torch.utils.*_privateuse1_*)
    generate_methods_for_privateuse1_backend, rename_privateuse1_backend)
