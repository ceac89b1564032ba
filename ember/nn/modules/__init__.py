"""nn modules (one file per family); each family module defines __all__."""
from .module import Module  # noqa: F401
from .container import *  # noqa: F401,F403
