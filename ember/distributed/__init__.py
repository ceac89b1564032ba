"""ember.distributed: torch.distributed on ember — stores, process groups, collectives.

Note: `gloo` (the default CPU backend) runs collectives over TCP sockets between
processes the program starts itself (`_gloo`); `mpi` runs them in MPI (mpi4py) for
processes started by `mpiexec` (`_mpi`). Both give the same Work / timeout semantics.
"""
from ._errors import DistBackendError, DistError, DistNetworkError, DistStoreError
from ._objects import (all_gather_object, broadcast_object_list, gather_object,
                       scatter_object_list)
from ._reduce_op import ReduceOp, reduce_op
from ._store import FileStore, HashStore, PrefixStore, Store, TCPStore
from ._work import Work
from .distributed_c10d import (Backend, GroupMember, P2POp, ProcessGroup, all_gather,
                               all_gather_into_tensor, all_reduce, all_to_all,
                               all_to_all_single, barrier, batch_isend_irecv, broadcast,
                               default_pg_timeout, destroy_process_group, gather,
                               get_backend, get_global_rank, get_group_rank,
                               get_process_group_ranks, get_rank, get_world_size, group,
                               init_process_group, irecv, is_gloo_available, is_initialized,
                               is_mpi_available, is_nccl_available, isend, monitored_barrier,
                               new_group, recv, reduce, reduce_scatter, reduce_scatter_tensor,
                               scatter, send)
from .rendezvous import register_rendezvous_handler, rendezvous

_LAZY = ("autograd", "optim", "rpc")


def __getattr__(name):
    """torch.distributed.rpc / .autograd / .optim load on first use: they pull in pyzmq and
    asyncio (~50 ms), which `import ember` should not pay for (they need the `distributed`
    extra)."""
    if name in _LAZY:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_available():
    """ember.distributed is always built (torch.distributed.is_available)."""
    return True


def is_torchelastic_launched():
    import os
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


__all__ = [
    "Backend", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError",
    "FileStore", "GroupMember", "HashStore", "P2POp", "PrefixStore", "ProcessGroup",
    "ReduceOp", "Store", "TCPStore", "Work", "all_gather", "all_gather_into_tensor",
    "all_gather_object", "all_reduce", "all_to_all", "all_to_all_single", "barrier",
    "batch_isend_irecv", "broadcast", "broadcast_object_list", "default_pg_timeout",
    "destroy_process_group", "gather", "gather_object", "get_backend", "get_global_rank",
    "get_group_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group", "irecv", "is_available", "is_gloo_available", "is_initialized",
    "is_mpi_available", "is_nccl_available", "is_torchelastic_launched", "isend",
    "monitored_barrier", "new_group", "recv", "reduce", "reduce_op", "reduce_scatter",
    "reduce_scatter_tensor", "register_rendezvous_handler", "rendezvous", "scatter",
    "scatter_object_list", "send",
]
