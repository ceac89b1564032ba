"""ember.distributed: torch.distributed on ember — stores, process groups, collectives.

Note: `gloo` (the default CPU backend) runs collectives over TCP sockets between
processes the program starts itself; `mpi` runs them in MPI (mpi4py) for processes
started by `mpiexec`. Both give the same Work / timeout semantics.
"""
from ._errors import DistBackendError, DistError, DistNetworkError, DistStoreError
from ._store import FileStore, HashStore, PrefixStore, Store, TCPStore
from .rendezvous import register_rendezvous_handler, rendezvous


def is_available():
    """ember.distributed is always built (torch.distributed.is_available)."""
    return True


__all__ = ["DistBackendError", "DistError", "DistNetworkError", "DistStoreError", "FileStore",
           "HashStore", "PrefixStore", "Store", "TCPStore", "is_available",
           "register_rendezvous_handler", "rendezvous"]
