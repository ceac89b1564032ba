"""ember.distributed.nn: RemoteModule (a module that lives on another RPC worker)."""
from .api.remote_module import RemoteModule

__all__ = ["RemoteModule"]
