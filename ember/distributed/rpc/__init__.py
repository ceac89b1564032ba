"""ember.distributed.rpc: torch.distributed.rpc over ZeroMQ.

Note: the API is PyTorch's (init_rpc, rpc_sync/rpc_async/remote, RRef, async_execution,
shutdown); the transport is ZeroMQ with tensors as raw frames, authenticated by a token
every worker reads from the rendezvous store.
"""
from . import functions
from ._agent import WorkerInfo
from .api import (UNSET_RPC_TIMEOUT, get_worker_info, init_rpc, remote, rpc_async, rpc_sync,
                  shutdown)
from .backend_registry import BackendType, RpcBackendOptions, TensorPipeRpcBackendOptions
from .rref import RRef

PyRRef = RRef


def is_available():
    return True


__all__ = ["BackendType", "PyRRef", "RRef", "RpcBackendOptions", "TensorPipeRpcBackendOptions",
           "UNSET_RPC_TIMEOUT", "WorkerInfo", "functions", "get_worker_info", "init_rpc",
           "is_available", "remote", "rpc_async", "rpc_sync", "shutdown"]
