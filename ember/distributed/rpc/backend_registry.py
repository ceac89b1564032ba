"""BackendType and TensorPipeRpcBackendOptions (ember's one backend speaks ZeroMQ).

Note: the names are PyTorch's so programs written for TensorPipe run unchanged; the
transport underneath is ZeroMQ. `device_maps` is accepted and checked for shape only:
ember's RPC moves cpu tensors (there is no accelerator transport).
"""
import enum

__all__ = ["BackendType", "TensorPipeRpcBackendOptions", "RpcBackendOptions"]


class BackendType(enum.Enum):
    TENSORPIPE = "TENSORPIPE"


class RpcBackendOptions:
    def __init__(self, rpc_timeout=60.0, init_method="env://"):
        self.rpc_timeout = float(rpc_timeout)
        self.init_method = init_method


class TensorPipeRpcBackendOptions(RpcBackendOptions):
    def __init__(self, *, num_worker_threads=16, rpc_timeout=60.0, init_method="env://",
                 device_maps=None, devices=None, _transports=None, _channels=None):
        super().__init__(rpc_timeout, init_method)
        if num_worker_threads < 1:
            raise ValueError(f"num_worker_threads must be positive, got {num_worker_threads}")
        self.num_worker_threads = int(num_worker_threads)
        self.device_maps = dict(device_maps or {})
        self.devices = list(devices or [])

    def set_device_map(self, to, device_map):
        self.device_maps.setdefault(to, {}).update(device_map)

    def set_devices(self, devices):
        self.devices = list(devices)
