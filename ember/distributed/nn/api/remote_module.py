"""RemoteModule: build a module on another RPC worker and call it like a local one.

Note: forward runs on the owner (rpc_sync) and, inside a distributed autograd context,
gradients flow back to the remote parameters; `remote_parameters()` gives the RRefs a
DistributedOptimizer needs. Local-parameter methods (parameters, state_dict, to, ...)
raise, as PyTorch's RemoteModule does: the parameters are not here.
"""
from ... import rpc
from ....nn import Module

__all__ = ["RemoteModule"]


def _create(module_cls, args, kwargs):
    return module_cls(*args, **kwargs)


def _forward(module_rref, args, kwargs):
    return module_rref.local_value()(*args, **kwargs)


def _param_rrefs(module_rref, recurse):
    return [rpc.RRef(p) for p in module_rref.local_value().parameters(recurse)]


def _parse_device(remote_device):
    if "/" not in remote_device:
        raise ValueError(f"Could not parse remote_device: {remote_device}. The valid format is "
                         "'<workername>/<device>'")
    worker, device = remote_device.split("/", 1)
    if not worker:
        raise ValueError(f"Could not parse remote_device: {remote_device}. The valid format is "
                         "'<workername>/<device>'")
    if worker.startswith("rank:"):
        worker = int(worker[5:])
    if device != "cpu":
        raise NotImplementedError(f"RemoteModule on device {device!r}: ember's RPC moves cpu "
                                  "tensors only")
    return worker, device


class RemoteModule(Module):
    def __init__(self, remote_device, module_cls, args=None, kwargs=None):
        super().__init__()
        self.on, self.device = _parse_device(remote_device)
        self.module_rref = rpc.remote(self.on, _create,
                                      args=(module_cls, tuple(args or ()), dict(kwargs or {})))
        self.is_scriptable = False

    def forward(self, *args, **kwargs):
        return rpc.rpc_sync(self.module_rref.owner(), _forward,
                            args=(self.module_rref, args, kwargs))

    def forward_async(self, *args, **kwargs):
        return rpc.rpc_async(self.module_rref.owner(), _forward,
                             args=(self.module_rref, args, kwargs))

    def remote_parameters(self, recurse=True):
        return rpc.rpc_sync(self.module_rref.owner(), _param_rrefs,
                            args=(self.module_rref, recurse))

    def get_module_rref(self):
        return self.module_rref

    def _unsupported(self, name):
        raise ValueError(f"Method ``{name}`` not supported for RemoteModule")

    def parameters(self, recurse=True):
        self._unsupported("parameters")

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        self._unsupported("named_parameters")

    def state_dict(self, *args, **kwargs):
        self._unsupported("state_dict")

    def load_state_dict(self, *args, **kwargs):
        self._unsupported("load_state_dict")

    def to(self, *args, **kwargs):
        self._unsupported("to")

    def __repr__(self):
        return f"RemoteModule(on={self.on}, module_rref={self.module_rref})"
